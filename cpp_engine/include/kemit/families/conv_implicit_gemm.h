// Family `conv_implicit_gemm`: NHWC convolution as an implicit GEMM on the matrix cores (MFMA and
// WMMA), forward (`direction: fwd`) and its data gradient (`direction: dgrad`).
// Mirrors py_engine/kemit/families/conv_implicit_gemm.py.
//
// fwd: y[n, oy, ox, ko] = sum over ry, sx, ci of x[n, iy, ix, ci] * wt[ry, sx, ci, ko] with
// iy = oy * stride_h - pad_h + ry * dil_h (ix alike), zero where (iy, ix) is outside x. x is
// [batch, h, w, c] (f16 or bf16), wt is [r, s, c, k_out] (the same dtype), y is [batch, ho, wo, k_out]
// f32, ho = (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1 (wo alike). The GEMM: M = batch *
// ho * wo (a row per output position), N = k_out, K = r * s * c (tap-major, channels innermost);
// wt read as a K x N row-major matrix is the gemm core's b as it is.
//
// dgrad: dx[n, iy, ix, ci] = sum over the (oy, ox, ry, sx) with iy = oy * stride_h - pad_h +
// ry * dil_h (ix alike) of dy[n, oy, ox, :] . wt[ry, sx, :, ci], the adjoint of fwd. dy is
// [batch, ho, wo, k_out], dx [batch, h, w, c] f32, and the weights come as wt [r, s, k_out, c] (each
// tap's c x k_out matrix of fwd's layout transposed), so that they are again a plain K x N operand:
// M = batch * h * w (a row per input position), N = c, K = r * s * k_out. A's row (iy, ix) and
// column (ry, sx, ko) read dy at oy = (iy + pad_h - ry * dil_h) / stride_h, the flipped filter's
// tap walked over dy; with stride > 1 the taps whose (iy + pad_h - ry * dil_h) is not a multiple of
// the stride map to no output position and read zero, as do the ones outside dy. Every stride,
// padding and dilation of the field ranges is supported in both directions.
//
// The tiling, LDS staging and fragments are the gemm core's (gemm_core.h); the family gives the core
// its address function (ctx.gather, gather_fwd or gather_dgrad): A's 8-element pieces come from
// the im2col positions, masked (zeros) in the padding and past the last row, and its rows past the
// last are not stored. The channel axis A's k runs along (c, or dgrad's k_out) is a multiple of 8,
// so that a piece stays in one filter tap and is one 16-byte load.
//
// Launch contract (plan_module): the batch at run time (`batch`, at least 1), everything else compiled in. The
// grid is (N / tile_n, ceil(batch * rows per image / tile_m)); a batch whose input or output passes
// half the 32-bit buffer range runs as chunks of whole images over views (the images are
// independent), the weights whole.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::conv_implicit_gemm {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DIRECTIONS;
// the largest value of each shape field: an image's extent, the channels, the filter (its taps are
// the K axis, unrolled nowhere), the strides and dilations
extern const std::vector<std::pair<std::string, int64_t>> LIMITS;

// FIELDS, typed (gemm_core.h: CoreSpec).
struct Spec : gemm_core::CoreSpec {
  std::string direction;
  int64_t h, w, c, k_out, r, s, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};
// What output_extent returns (Python: the tuple (ho, wo)).
struct Extent {
  int64_t ho, wo;
};
// What gemm_shape returns (Python: the tuple (rows, n, k, field)).
struct GemmShape {
  int64_t rows, n, k;
  std::string field;
};
// One tensor of tensors (Python: the pair (name, elements per image)).
struct Tensor {
  std::string name;
  int64_t elements;
};
// What tensors returns (Python: the pair of pairs: A's, the output's).
struct Tensors {
  Tensor a, out;
};
// What split returns (Python: the tuple (quotient, remainder)).
struct Split {
  ir::Value quotient, remainder;
};
// What position returns (Python: the tuple (image, y, x, tap's y, tap's x, channel)).
struct Position {
  ir::Value image, y, x, ty, tx, channel;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// (ho, wo) of the forward convolution (fwd's output, dgrad's dy); below 1 when empty.
Extent output_extent(const Spec& spec);
// (rows of M per image, N, K, the channel field A's k runs along) of the direction's GEMM.
GemmShape gemm_shape(const Spec& spec);
// ((A's name, its elements per image), (the output's name, its elements per image)).
Tensors tensors(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// Every shape field between 1 and its LIMITS.
std::string shape_limits(const Spec& spec);
// A padding of at most the dilated filter's extent less one: every output sees the image. fields:
// the pad, dilation and taps fields with their values (Python passes their names).
std::string padding_check(const Spec& spec, const NamedValues& fields);
// The GEMM view's rules: A's channel axis in whole 8-element pieces, K in whole tile_k steps (and at
// most the core's MAX_K), N in whole tile_n columns.
std::vector<std::function<std::string()>> gemm_checks(const Spec& spec);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The kernel and its contract: size batch (images, at least one); launches in chunks of whole images,
// A and the output as views of the chunk's images, wt whole; grid (N / tile_n, the chunk's row tiles).
// Refused when one image's input or output passes half the buffer range.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// (value / inner, value % inner) of an i32 >= 0 and a constant.
Split split(ir::Builder& b, const ir::Value& value, int64_t inner);
// The im2col coordinates of A's row and column: (image, row's y, row's x, tap's y, tap's x,
// channel), row over images of row_extent (height, width) positions, column over taps of `channels`
// channels. The column is split in whole 8-element pieces (a piece's first column), so the channel is
// 8 times a piece index below channels / 8: at most channels - 8, which bounds the piece's last
// element without a divisibility argument.
Position position(gemm_core::Context& ctx, const ir::Value& row, const ir::Value& column,
                  const std::pair<int64_t, int64_t>& row_extent, int64_t channels);
// sum of value * factor over (value, factor) pairs of i32s >= 0 whose sum is an offset inside a
// tensor: the caller's guard has made every term's range true.
ir::Value scaled_sum(ir::Builder& b, const std::vector<std::pair<ir::Value, int64_t>>& terms);
// (inside, offset) of x's piece at A[row, column] (gemm_core::stage_gathered_row): the row's image is
// before batch (the row before batch * rows per image, said of the image, so that the guard bounds
// the offset's image term directly) and iy = oy * stride_h + ry * dil_h - pad_h is in [0, h) (ix alike; one unsigned compare
// each: a negative one is above every unsigned bound). The sums that may fall outside carry no
// flags; the offset's, made only inside, do, of the image, iy and ix clamped by their guards to
// batch - 1, h - 1 and w - 1 (the same values there): a clamp's range is a bound of its own, which the
// contract prover keeps, where iy's own sum of strided and dilated terms or the image's quotient reach
// past the tensor's last element, which the offset meets exactly.
gemm_core::Gathered gather_fwd(gemm_core::Context& ctx, const ir::Value& batch, const ir::Value& row,
                               const ir::Value& column);
// (inside, offset) of dy's piece at A[row, column]: row (image, iy, ix), column (ry, sx, ko); the
// image before batch; ty = iy + pad_h - ry * dil_h must be a multiple of stride_h below
// ho * stride_h (an unsigned compare: a negative one fails it), then oy = ty / stride_h (ox alike).
// The offset's image, oy and ox are clamped as gather_fwd's are (to batch - 1, ho - 1, wo - 1: the
// same values there).
gemm_core::Gathered gather_dgrad(gemm_core::Context& ctx, const ir::Value& batch, const ir::Value& row,
                                 const ir::Value& column);
// value where it is below extent (unsigned), else extent - 1: the same value under a guard that holds
// it below, with the range [0, extent) the contract prover keeps as a bound.
ir::Value clamped(ir::Builder& b, const ir::Value& value, int64_t extent);
// Whether t (an i32, maybe negative) is an output position times the stride: below extent * stride
// unsigned and, with stride > 1, a multiple of it (a tap between two outputs reads zero).
ir::Value mapped(ir::Builder& b, const ir::Value& t, int64_t stride, int64_t extent);

}  // namespace kemit::families::conv_implicit_gemm

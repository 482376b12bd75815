// The matrix op: D = A x B + C over the wave's fragments (layouts: mma_layout.cpp, docs/ir.md).
// Every lane of the wave takes part, as on the hardware. Products and sums are exact in double
// (fp8 / bf8 operands: 8 bytes to each i64 element, byte j holding element 8 * slot + j);
// each D element is rounded to f32 once (the hardware's internal order is unspecified, the
// numerics lane's tolerance covers the difference). Integer instructions (signed i8 bytes packed
// 4 to an i32 or 8 to an i64, i32 C and D): every product and sum is an integer far below 2^53, so
// the double sums are exact, and D is that sum wrapped to 32 bits, two's complement, as the
// hardware's i32 accumulator wraps. A layout that gives one element of A or B to
// several lanes (gfx11 wmma replicates A and B in both half-waves) needs them to agree.
#include <cstring>
#include <vector>

#include "mma_layout.h"
#include "wave.h"

namespace kemit::interp {

namespace {

// Scratch reused across ops (the interpreter runs a workgroup's waves on one thread).
struct MmaScratch {
  std::vector<double> a, b;          // A and B by rows
  std::vector<int> a_from, b_from;   // the lane that gave each element, for replicated layouts
  std::vector<double> d;             // C, then D = C + A x B, by rows
};

}  // namespace

// Element e of lane `lane`'s A or B fragment, exactly.
double Wave::mma_operand(const MmaLayout& layout, const Operand& operand, int lane, int e) {
  if (layout.int8_per_element) {
    const int per = layout.int8_per_element;
    return static_cast<double>(sign_extend_bits(8, reg(operand.slot + e / per, lane) >> (8 * (e % per))));
  }
  if (layout.fp8 != Fp8::none) return fp8_to_double(layout.fp8, (reg(operand.slot + e / 8, lane) >> (8 * (e % 8))) & 0xff);
  return to_double(layout.operand_kind, reg(operand.slot + e, lane));
}

void Wave::mma(const Instr& in, uint64_t mask) {
  const MmaLayout& layout = mma_layouts()[in.mma];
  if (mask != all_lanes || layout.wave != width)
    fail(in, __builtin_ctzll((~mask & all_lanes) | (uint64_t{1} << 63)), "mma needs every lane of its wave active");
  thread_local MmaScratch scratch;
  auto& [a, b, a_from, b_from, d] = scratch;
  a.assign(static_cast<size_t>(layout.m) * layout.k, 0);
  b.assign(static_cast<size_t>(layout.k) * layout.n, 0);
  if (layout.replicated) {
    a_from.assign(a.size(), -1);
    b_from.assign(b.size(), -1);
  }
  // at(row, col): where element (row, col) of the operand goes in `out`.
  auto gather = [&](const Operand& operand, const std::vector<std::pair<int, int>>& places, std::vector<double>& out,
                    std::vector<int>& from, auto at, const char* matrix) {
    for (int lane = 0; lane < width; ++lane)
      for (int e = 0; e < layout.operand_width; ++e) {
        auto [row, col] = places[static_cast<size_t>(lane) * layout.operand_width + e];
        size_t place = at(row, col);
        double value = mma_operand(layout, operand, lane, e);
        if (!layout.replicated) {
          out[place] = value;
          continue;
        }
        if (from[place] >= 0 && std::memcmp(&out[place], &value, sizeof value) != 0)
          fail(in, lane, std::string("lanes ") + std::to_string(from[place]) + " and " + std::to_string(lane) +
                             " hold different values of " + matrix + "[" + std::to_string(row) + "][" +
                             std::to_string(col) + "], which the layout replicates");
        out[place] = value;
        from[place] = lane;
      }
  };
  const size_t k = layout.k, n = layout.n;
  gather(in.in[0], layout.a, a, a_from, [&](int row, int col) { return row * k + col; }, "A");
  gather(in.in[1], layout.b, b, b_from, [&](int row, int col) { return row * n + col; }, "B");
  // Each D element is its C plus the sum of the products over k in order, that sum started at -0,
  // the identity of IEEE addition: products that are all -0 sum to -0, so a C of -0 stays -0 as
  // the exact sum rounded once gives (from +0 it would be +0). Without replicated C elements the
  // sums run row by row, k outermost, each step over a whole row of D at once (the same order).
  const bool integer = layout.int8_per_element != 0;
  auto c_of = [&](int lane, int e) {
    uint64_t bits = reg(in.in[2].slot + e, lane);
    return integer ? static_cast<double>(sign_extend(Scalar::i32, bits)) : to_double(Scalar::f32, bits);
  };
  // D's bits: the exact sum wrapped to i32, or rounded once to f32.
  auto d_of = [&](double sum) {
    return integer ? static_cast<uint64_t>(static_cast<int64_t>(sum)) & width_mask(Scalar::i32) : from_double(Scalar::f32, sum);
  };
  if (!layout.c_replicated) {
    d.assign(static_cast<size_t>(layout.m) * n, -0.0);
    for (size_t row = 0; row < static_cast<size_t>(layout.m); ++row)
      for (size_t i = 0; i < k; ++i) {
        const double x = a[row * k + i];
        const double* y = &b[i * n];
        double* sums = &d[row * n];
        for (size_t col = 0; col < n; ++col) sums[col] += x * y[col];
      }
    for (int lane = 0; lane < width; ++lane)
      for (int e = 0; e < layout.accumulator_width; ++e) {
        auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
        reg(in.result.slot + e, lane) = d_of(c_of(lane, e) + d[row * n + col]);
      }
    return;
  }
  for (int lane = 0; lane < width; ++lane)
    for (int e = 0; e < layout.accumulator_width; ++e) {
      auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
      double sum = -0.0;
      for (size_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      reg(in.result.slot + e, lane) = d_of(c_of(lane, e) + sum);
    }
}

}  // namespace kemit::interp

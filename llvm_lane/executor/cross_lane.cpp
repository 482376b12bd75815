// Intrinsics: work-item ids, the dispatch packet, math, cross-lane moves and matrix
// instructions (machine.h).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "floats.h"
#include "machine.h"

namespace kemit::exec {

bool Machine::intrinsic(Wave& wave, const Op& op, uint64_t mask) {
  uint64_t* out = cells(wave, op.result);  // a void call's slot 0 is never written
  switch (op.intrinsic) {
    case Intrinsic::WorkitemId: {
      const int64_t* block = launch_.block;
      for (uint64_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctzll(m);
        int64_t item = wave.first_item + l;
        int64_t ids[3] = {item % block[0], item / block[0] % block[1], item / (block[0] * block[1])};
        out[l] = uint64_t(ids[op.immediate]);
      }
      return true;
    }
    case Intrinsic::WorkgroupId:
      for (int l = 0; l < wave_size_; ++l) out[l] = uint64_t(group_[op.immediate]);
      return true;
    case Intrinsic::DispatchPtr:
      for (int l = 0; l < wave_size_; ++l) out[l] = make_pointer(kRegionDispatch, 0);
      return true;
    case Intrinsic::ReadFirstLane: {
      View in = view(wave, op.operands[0]);
      uint64_t first = in.at(0, __builtin_ctzll(mask));
      for (int l = 0; l < wave_size_; ++l) out[l] = first;
      return true;
    }
    case Intrinsic::DsBpermute: return bpermute(wave, op, mask);
    case Intrinsic::UpdateDpp: return dpp(wave, op, mask);
    case Intrinsic::Mfma:
    case Intrinsic::Wmma: return matrix(wave, op, mask);
    case Intrinsic::Barrier: return true;
    default: return math(wave, op, mask);
  }
}

KEMIT_LANE_LOOPS bool Machine::math(Wave& wave, const Op& op, uint64_t mask) {
  uint64_t* out = cells(wave, op.result);
  const Scalar scalar = op.type.scalar;
  const bool binary = op.intrinsic != Intrinsic::Exp && op.intrinsic != Intrinsic::Sqrt;
  View a = view(wave, op.operands[0]);
  View b = binary ? view(wave, op.operands[1]) : a;
  View c = op.intrinsic == Intrinsic::Fma ? view(wave, op.operands[2]) : a;
  // maxnum / minnum return the other operand of a NaN; of equal operands (+0 and -0) the second, as
  // the interpreter's fmax / fmin. LLVM leaves that choice open; the C library's fmax leaves it to
  // how the compiler lays the call out, so the outputs' bytes could change from build to build.
  auto max_of = [](auto x, auto y) { return x != x ? y : y != y ? x : (x > y ? x : y); };
  auto min_of = [](auto x, auto y) { return x != x ? y : y != y ? x : (x < y ? x : y); };
  for (int e = 0; e < op.width; ++e) {
    uint64_t* row = out + e * wave_size_;
    // f32 in binary32 (fma one rounding of the exact x*y+z; maxnum, minnum exact): the same bits
    // as the exact result rounded once. exp, sqrt and the narrow formats go through double.
    if (scalar == Scalar::Float && binary) {
      auto f32 = [&](auto f) { for_lanes(mask, [&](int l) { row[l] = bits_of(f(f32_of(a.at(e, l)), f32_of(b.at(e, l)), l)); }); };
      if (op.intrinsic == Intrinsic::Fma) f32([&](float x, float y, int l) { return std::fmaf(x, y, f32_of(c.at(e, l))); });
      else if (op.intrinsic == Intrinsic::MaxNum) f32([&](float x, float y, int) { return max_of(x, y); });
      else f32([&](float x, float y, int) { return min_of(x, y); });
      continue;
    }
    auto wide = [&](auto f) {
      for_lanes(mask, [&](int l) { row[l] = from_double(f(to_double(a.at(e, l), scalar), l), scalar); });
    };
    auto y_of = [&](int l) { return to_double(b.at(e, l), scalar); };
    switch (op.intrinsic) {
      case Intrinsic::Exp: wide([](double x, int) { return std::exp(x); }); break;
      case Intrinsic::Sqrt: wide([](double x, int) { return std::sqrt(x); }); break;
      case Intrinsic::Fma: wide([&](double x, int l) { return std::fma(x, y_of(l), to_double(c.at(e, l), scalar)); }); break;
      case Intrinsic::MaxNum: wide([&](double x, int l) { return max_of(x, y_of(l)); }); break;
      default: wide([&](double x, int l) { return min_of(x, y_of(l)); }); break;  // MinNum
    }
  }
  return true;
}

// ds_bpermute: lane l reads `data` of lane (addr[l] / 4) mod wave size. The lanes are read in one
// branch-free loop; only when some lane's source is inactive are they gone through again to name it.
KEMIT_LANE_LOOPS bool Machine::bpermute(Wave& wave, const Op& op, uint64_t mask) {
  View address = view(wave, op.operands[0]), data = view(wave, op.operands[1]);
  uint64_t* out = cells(wave, op.result);
  const uint64_t* from = address.row(0);
  const uint64_t* value = data.row(0);
  const uint64_t last = uint64_t(wave_size_ - 1);
  uint64_t staged[64], inactive = 0;
  for_lanes(mask, [&](int l) {
    const uint64_t source = (from[l] >> 2) & last;
    inactive |= ~mask >> source & 1;
    staged[l] = value[source];
  });
  if (inactive)
    for (uint64_t m = mask; m; m &= m - 1) {
      const int l = __builtin_ctzll(m);
      const uint64_t source = (from[l] >> 2) & last;
      if (!(mask >> source & 1)) return fail(wave, op, l, "reads lane " + std::to_string(source) + ", which is inactive");
    }
  for_lanes(mask, [&](int l) { out[l] = staged[l]; });
  return true;
}

namespace {

// The source lane of DPP control `control` for lane `lane` (-1: none, the bound_ctrl case), in
// rows of 16 lanes; quad_perm, row_shl/shr/ror, row_mirror, row_half_mirror.
int dpp_source(int control, int lane) {
  int row = lane & ~15, in_row = lane & 15;
  if (control <= 0xff) return (lane & ~3) | ((control >> (2 * (lane & 3))) & 3);
  if (control >= 0x101 && control <= 0x10f) {
    int source = in_row + (control & 15);
    return source < 16 ? row + source : -1;
  }
  if (control >= 0x111 && control <= 0x11f) {
    int source = in_row - (control & 15);
    return source >= 0 ? row + source : -1;
  }
  // row_ror:n rotates the row right: lane p receives lane p - n (mod 16), as row_shr:n shifts it
  // right (docs/ir.md); it read lane p + n before, which only symmetric reductions hid.
  if (control >= 0x121 && control <= 0x12f) return row + ((in_row - (control & 15)) & 15);
  if (control == 0x140) return row + (15 - in_row);
  if (control == 0x141) return row + (in_row & 8) + (7 - (in_row & 7));
  return -2;  // not modelled
}

}  // namespace

// update_dpp(old, src, dpp_ctrl, row_mask, bank_mask, bound_ctrl): a lane in a row or bank that
// the masks leave out keeps `old`; a lane whose source is out of the row or inactive gets 0
// with bound_ctrl, else keeps `old`.
bool Machine::dpp(Wave& wave, const Op& op, uint64_t mask) {
  View old = view(wave, op.operands[0]), source = view(wave, op.operands[1]);
  for (int i = 2; i < 6; ++i)
    if (!op.operands[i].constant) return fail(wave, op, 0, "DPP controls must be constants");
  int control = int(view(wave, op.operands[2]).at(0, 0)), row_mask = int(view(wave, op.operands[3]).at(0, 0));
  int bank_mask = int(view(wave, op.operands[4]).at(0, 0));
  bool bound_ctrl = view(wave, op.operands[5]).at(0, 0) & 1;
  uint64_t* out = cells(wave, op.result);
  uint64_t staged[64];
  for (uint64_t m = mask; m; m &= m - 1) {
    int l = __builtin_ctzll(m);
    int from = dpp_source(control, l);
    if (from == -2) return fail(wave, op, l, "DPP control " + std::to_string(control) + " is not modelled");
    bool enabled = (row_mask >> ((l >> 4) & 3) & 1) && (bank_mask >> ((l >> 2) & 3) & 1);
    bool valid = from >= 0 && from < wave_size_ && (mask >> from & 1);
    staged[l] = !enabled ? old.at(0, l) : valid ? source.at(0, from) : bound_ctrl ? 0 : old.at(0, l);
  }
  for (uint64_t m = mask; m; m &= m - 1) {
    int l = __builtin_ctzll(m);
    out[l] = staged[l];
  }
  return true;
}

namespace {

// P = A x B (A rows x depth, B depth x columns, row-major), each element summed over k in order
// from -0, the identity of IEEE addition (products that are all -0 sum to -0, so C + P keeps a C
// of -0; 16- and 8-bit products are exact); k outermost within a row, so each step runs over a
// whole row of P at once. A row of kColumns sums stays in registers, four to a vector.
typedef double Doubles4 __attribute__((vector_size(32)));
template <int kColumns>
__attribute__((always_inline)) inline void multiply_rows(const double* a, const double* b, double* p, int rows, int depth) {
  constexpr int kVectors = kColumns / 4;
  for (int row = 0; row < rows; ++row) {
    Doubles4 sums[kVectors];
    for (Doubles4& sum : sums) sum = Doubles4{-0.0, -0.0, -0.0, -0.0};
    const double* x = a + size_t(row) * size_t(depth);
    for (int k = 0; k < depth; ++k) {
      const Doubles4 scale = {x[k], x[k], x[k], x[k]};
      const double* y = b + size_t(k) * kColumns;
      for (int v = 0; v < kVectors; ++v) {
        Doubles4 column;
        std::memcpy(&column, y + 4 * v, sizeof column);
        sums[v] += scale * column;  // a product, then a sum: -ffp-contract=off keeps them two roundings
      }
    }
    std::memcpy(p + size_t(row) * kColumns, sums, sizeof sums);
  }
}

// The products in the same order at any vector width, so the AVX2 clone (chosen at run time where
// the processor has it) gives the bits of the baseline one.
__attribute__((target_clones("avx2", "default"))) void multiply(const double* a, const double* b, double* p, int rows,
                                                                 int columns, int depth) {
  if (columns == 16) return multiply_rows<16>(a, b, p, rows, depth);
  if (columns == 32) return multiply_rows<32>(a, b, p, rows, depth);
  for (int row = 0; row < rows; ++row) {
    double* out = p + size_t(row) * size_t(columns);
    for (int column = 0; column < columns; ++column) out[column] = -0.0;
    for (int k = 0; k < depth; ++k) {
      const double x = a[size_t(row) * size_t(depth) + size_t(k)];
      const double* y = b + size_t(k) * size_t(columns);
      for (int column = 0; column < columns; ++column) out[column] += x * y[column];
    }
  }
}

}  // namespace

// Operand `which` (A, B, C) of a matrix instruction into its row-major scratch matrix, each element
// decoded by `value(e, l)` (element e of lane l, as a double). An element the table places in
// several lanes must hold one value in all of them.
template <typename Value>
KEMIT_LANE_LOOPS bool Machine::gather_matrix(const Wave& wave, const Op& op, const MatrixLayout& layout, int which, Value value) {
  const size_t size = size_t(layout.rows[which]) * size_t(layout.columns[which]);
  std::vector<double>& scratch = matrix_scratch_[which];
  if (scratch.size() < size) scratch.resize(size);
  double* matrix = scratch.data();
  const uint32_t* index = layout.index[which].data();
  const int per_lane = layout.per_lane[which];
  if (!layout.table->replicated[which]) {  // each element in one lane: a plain scatter
    if (!layout.complete[which]) std::fill(matrix, matrix + size, 0.0);
    for (int e = 0; e < per_lane; ++e) {
      const uint32_t* at = index + size_t(e) * size_t(wave_size_);
      for (int l = 0; l < wave_size_; ++l) matrix[at[l]] = value(e, l);
    }
    return true;
  }
  std::fill(matrix, matrix + size, 0.0);
  std::vector<char>& seen = seen_scratch_;
  seen.assign(size, 0);
  for (int l = 0; l < wave_size_; ++l)
    for (int e = 0; e < per_lane; ++e) {
      const uint32_t at = index[size_t(e) * size_t(wave_size_) + size_t(l)];
      double v = value(e, l);
      if (seen[at] && !(matrix[at] == v || (std::isnan(v) && std::isnan(matrix[at]))))
        return fail(wave, op, l, std::string("lanes disagree on replicated ") + "ABC"[which] + "[" +
                                     std::to_string(at / uint32_t(layout.columns[which])) + "][" +
                                     std::to_string(at % uint32_t(layout.columns[which])) + "]");
      matrix[at] = v, seen[at] = 1;
    }
  return true;
}

// D = C + A x B by the instruction's AMD layout table: every lane active, an element the table
// places in several lanes must hold one value, sums in double rounded once to f32 per element.
// Integer instructions: bytes (signed, or unsigned where the integer WMMA's flag says so) and i32 C
// give integer products and sums far below 2^53, exact in double; D is the sum wrapped to 32 bits.
KEMIT_LANE_LOOPS bool Machine::matrix(Wave& wave, const Op& op, uint64_t mask) {
  const MmaOp& mma = program_.mma_ops[size_t(op.mma)];
  const MatrixLayout& layout = layouts_[size_t(op.mma)];
  if (mask != wave.live || layout.table->lanes != wave_size_) return fail(wave, op, 0, "a matrix instruction needs every lane of the wave");
  const MmaOperands operands = mma_operands(mma);
  double sign_a = 1, sign_b = 1;
  bool signed_a = true, signed_b = true;
  int c_modifier = 0;
  if (mma.gfx1250_modifiers) {
    sign_a = view(wave, op.operands[0]).at(0, 0) & 1 ? -1 : 1;
    sign_b = view(wave, op.operands[2]).at(0, 0) & 1 ? -1 : 1;
    c_modifier = int(view(wave, op.operands[4]).at(0, 0));
  } else if (mma.sign_flags) {
    signed_a = view(wave, op.operands[0]).at(0, 0) & 1, signed_b = view(wave, op.operands[2]).at(0, 0) & 1;
    if (view(wave, op.operands[5]).at(0, 0) & 1) return fail(wave, op, 0, "clamp (saturating D) is not modelled");
  } else if (op.intrinsic == Intrinsic::Mfma) {
    for (size_t i = 3; i < op.operands.size(); ++i)
      if (view(wave, op.operands[i]).at(0, 0) != 0) return fail(wave, op, 0, "cbsz / abid / blgp other than 0 are not modelled");
  }
  if (c_modifier & ~1) return fail(wave, op, 0, "c_mod " + std::to_string(c_modifier) + " is not modelled");
  const unsigned at[3] = {operands.a, operands.b, operands.c};
  const int per = mma.int8_per_element;
  for (int which = 0; which < 3; ++which) {
    const View in = view(wave, op.operands[size_t(at[which])]);
    const Scalar scalar = which == 2 ? Scalar::Float : mma.operand;
    bool gathered;  // each operand's decoding chosen once, outside its loops
    if (which < 2 && per) {
      const bool is_signed = which == 0 ? signed_a : signed_b;
      gathered = gather_matrix(wave, op, layout, which, [&](int e, int l) {
        const uint64_t byte = (in.at(e / per, l) >> (8 * (e % per))) & 0xff;
        return double(is_signed ? signed_of(byte, 8) : int64_t(byte));
      });
    } else if (which == 2 && per)
      gathered = gather_matrix(wave, op, layout, which, [&](int e, int l) { return double(signed_of(in.at(e, l), 32)); });
    else if (which < 2 && mma.fp8 != Fp8::None)
      gathered = gather_matrix(wave, op, layout, which,
                               [&](int e, int l) { return decode_fp8((in.at(e / 8, l) >> (8 * (e % 8))) & 0xff, mma.fp8); });
    else if (scalar == Scalar::Half)
      gathered = gather_matrix(wave, op, layout, which, [&](int e, int l) { return half_value(in.at(e, l)); });
    else if (scalar == Scalar::Float)
      gathered = gather_matrix(wave, op, layout, which, [&](int e, int l) { return double(f32_of(in.at(e, l))); });
    else
      gathered = gather_matrix(wave, op, layout, which, [&](int e, int l) { return to_double(in.at(e, l), scalar); });
    if (!gathered) return false;
  }
  std::vector<double>& product = matrix_scratch_[3];
  if (product.size() < size_t(mma.m * mma.n)) product.resize(size_t(mma.m * mma.n));
  multiply(matrix_scratch_[0].data(), matrix_scratch_[1].data(), product.data(), mma.m, mma.n, mma.k);
  const double* c = matrix_scratch_[2].data();
  const double* p = product.data();
  const double c_sign = c_modifier & 1 ? -1 : 1, ab_sign = sign_a * sign_b;
  uint64_t* out = cells(wave, op.result);
  const uint32_t* index = layout.index[3].data();
  for (int e = 0; e < layout.per_lane[3]; ++e) {
    const uint32_t* place = index + size_t(e) * size_t(wave_size_);
    uint64_t* row = out + size_t(e) * size_t(wave_size_);
    if (per) {
      for (int l = 0; l < wave_size_; ++l) row[l] = low_bits(uint64_t(int64_t(c[place[l]] + p[place[l]])), 32);
      continue;
    }
    for (int l = 0; l < wave_size_; ++l) row[l] = bits_of(static_cast<float>(c[place[l]] * c_sign + ab_sign * p[place[l]]));
  }
  return true;
}

}  // namespace kemit::exec

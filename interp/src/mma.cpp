// The matrix op: D = A x B + C over the wave's fragments (layouts: mma_layout.cpp, docs/ir.md).
// Every lane of the wave takes part, as on the hardware. Products and sums are exact in double
// (fp8 / bf8 operands: 8 bytes to each i64 element, byte j holding element 8 * slot + j);
// each D element is rounded to f32 once (the hardware's internal order is unspecified, the
// numerics lane's tolerance covers the difference). Integer instructions (signed i8 bytes packed
// 4 to an i32 or 8 to an i64, i32 C and D): every product and sum is an integer far below 2^53, so
// the double sums are exact, and D is that sum wrapped to 32 bits, two's complement, as the
// hardware's i32 accumulator wraps. A layout that gives one element of A or B to
// several lanes (gfx11 wmma replicates A and B in both half-waves) needs them to agree.
#include <array>
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
  std::vector<double> d;             // the sums A x B, by rows
  std::vector<double> fragment;      // one lane's A or B fragment
};

// Every 8-bit float pattern of each format decoded: a lookup per operand byte.
const std::array<std::array<double, 256>, 5>& fp8_values() {
  static const auto tables = [] {
    std::array<std::array<double, 256>, 5> out{};
    for (int format = 1; format < 5; ++format)
      for (int byte = 0; byte < 256; ++byte) out[format][byte] = fp8_to_double(static_cast<Fp8>(format), byte);
    return out;
  }();
  return tables;
}

// Row `row`'s sums of A x B (A m x k, B k x N, both by rows), each started at -0 and summed over k
// in order: N fixed, so the compiler keeps the row in registers and runs its columns as vectors.
template <size_t N> void row_sums(const double* a_row, const double* b, size_t k, double* out) {
  double sums[N];
  for (size_t col = 0; col < N; ++col) sums[col] = -0.0;
  for (size_t i = 0; i < k; ++i) {
    const double x = a_row[i];
    const double* y = b + i * N;
    for (size_t col = 0; col < N; ++col) sums[col] += x * y[col];
  }
  for (size_t col = 0; col < N; ++col) out[col] = sums[col];
}

void row_sums(const double* a_row, const double* b, size_t k, size_t n, double* out) {
  if (n == 16) return row_sums<16>(a_row, b, k, out);
  if (n == 32) return row_sums<32>(a_row, b, k, out);
  for (size_t col = 0; col < n; ++col) out[col] = -0.0;
  for (size_t i = 0; i < k; ++i)
    for (size_t col = 0; col < n; ++col) out[col] += a_row[i] * b[i * n + col];
}

}  // namespace

void Wave::mma_fragment(const MmaLayout& layout, const Operand& operand, int lane, double* out) {
  const int width = layout.operand_width;
  if (const int per = layout.int8_per_element) {
    for (int e = 0; e < width; ++e)
      out[e] = static_cast<double>(sign_extend_bits(8, reg(operand.slot + e / per, lane) >> (8 * (e % per))));
  } else if (layout.fp8 != Fp8::none) {
    const auto& values = fp8_values()[static_cast<size_t>(layout.fp8)];
    for (int e = 0; e < width; ++e) out[e] = values[(reg(operand.slot + e / 8, lane) >> (8 * (e % 8))) & 0xff];
  } else {
    for (int e = 0; e < width; ++e) out[e] = to_double(layout.operand_kind, reg(operand.slot + e, lane));
  }
}

void Wave::mma(const Instr& in, uint64_t mask) {
  const MmaLayout& layout = mma_layouts()[in.mma];
  if (mask != all_lanes || layout.wave != width)
    fail(in, __builtin_ctzll((~mask & all_lanes) | (uint64_t{1} << 63)), "mma needs every lane of its wave active");
  thread_local MmaScratch scratch;
  auto& [a, b, a_from, b_from, d, fragment] = scratch;
  a.assign(static_cast<size_t>(layout.m) * layout.k, 0);
  b.assign(static_cast<size_t>(layout.k) * layout.n, 0);
  fragment.resize(static_cast<size_t>(layout.operand_width));
  if (layout.replicated) {
    a_from.assign(a.size(), -1);
    b_from.assign(b.size(), -1);
  }
  // Each lane's fragment to its places in `out` (`at`: the layout's flat places of the operand).
  auto gather = [&](const Operand& operand, const std::vector<int>& at, std::vector<double>& out,
                    std::vector<int>& from, const std::vector<std::pair<int, int>>& places, const char* matrix) {
    const size_t per_lane = static_cast<size_t>(layout.operand_width);
    for (int lane = 0; lane < width; ++lane) {
      mma_fragment(layout, operand, lane, fragment.data());
      const int* place = &at[lane * per_lane];
      if (!layout.replicated) {
        for (size_t e = 0; e < per_lane; ++e) out[place[e]] = fragment[e];
        continue;
      }
      for (size_t e = 0; e < per_lane; ++e) {
        const double value = fragment[e];
        if (from[place[e]] >= 0 && std::memcmp(&out[place[e]], &value, sizeof value) != 0) {
          auto [row, col] = places[lane * per_lane + e];
          fail(in, lane, std::string("lanes ") + std::to_string(from[place[e]]) + " and " + std::to_string(lane) +
                             " hold different values of " + matrix + "[" + std::to_string(row) + "][" +
                             std::to_string(col) + "], which the layout replicates");
        }
        out[place[e]] = value;
        from[place[e]] = lane;
      }
    }
  };
  gather(in.in[0], layout.a_at, a, a_from, layout.a, "A");
  gather(in.in[1], layout.b_at, b, b_from, layout.b, "B");
  // Each D element is its C plus the sum of the products over k in order, that sum started at -0,
  // the identity of IEEE addition: products that are all -0 sum to -0, so a C of -0 stays -0 as
  // the exact sum rounded once gives (from +0 it would be +0). Without replicated C elements the
  // sums run row by row, a whole row of D at once (the same order).
  const size_t k = layout.k, n = layout.n;
  const bool integer = layout.int8_per_element != 0;
  auto c_of = [&](int lane, int e) {
    uint64_t bits = reg(in.in[2].slot + e, lane);
    return integer ? static_cast<double>(sign_extend(Scalar::i32, bits)) : to_double(Scalar::f32, bits);
  };
  // D's bits: the exact sum wrapped to i32, or rounded once to f32.
  auto d_of = [&](double sum) {
    return integer ? static_cast<uint64_t>(static_cast<int64_t>(sum)) & width_mask(Scalar::i32) : from_double(Scalar::f32, sum);
  };
  const size_t per_lane = static_cast<size_t>(layout.accumulator_width);
  if (!layout.c_replicated) {
    d.resize(static_cast<size_t>(layout.m) * n);
    for (size_t row = 0; row < static_cast<size_t>(layout.m); ++row) row_sums(&a[row * k], b.data(), k, n, &d[row * n]);
    for (int lane = 0; lane < width; ++lane)
      for (size_t e = 0; e < per_lane; ++e)
        reg(in.result.slot + e, lane) = d_of(c_of(lane, e) + d[layout.c_at[lane * per_lane + e]]);
    return;
  }
  for (int lane = 0; lane < width; ++lane)
    for (size_t e = 0; e < per_lane; ++e) {
      auto [row, col] = layout.c[lane * per_lane + e];
      double sum = -0.0;
      for (size_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      reg(in.result.slot + e, lane) = d_of(c_of(lane, e) + sum);
    }
}

}  // namespace kemit::interp

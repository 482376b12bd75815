// The matrix op: D = A x B + C over the wave's fragments (layouts: mma_layout.cpp, docs/ir.md).
// Every lane of the wave takes part, as on the hardware. Products and sums are exact in double
// (fp8 / bf8 operands: 8 bytes to each i64 element, byte j holding element 8 * slot + j);
// each D element is rounded to f32 once (the hardware's internal order is unspecified, the
// numerics lane's tolerance covers the difference). A layout that gives one element of A or B to
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
        double value = layout.fp8 == Fp8::none
                           ? to_double(layout.operand_kind, reg(operand.slot + e, lane))
                           : fp8_to_double(layout.fp8, (reg(operand.slot + e / 8, lane) >> (8 * (e % 8))) & 0xff);
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
  // Each D element is its C plus the products over k in order. Without replicated C elements the
  // sums run row by row, k outermost, each step over a whole row of D at once (the same order).
  auto c_of = [&](int lane, int e) { return to_double(Scalar::f32, reg(in.in[2].slot + e, lane)); };
  if (!layout.c_replicated) {
    d.assign(static_cast<size_t>(layout.m) * n, 0);
    for (int lane = 0; lane < width; ++lane)
      for (int e = 0; e < layout.accumulator_width; ++e) {
        auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
        d[row * n + col] = c_of(lane, e);
      }
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
        reg(in.result.slot + e, lane) = from_double(Scalar::f32, d[row * n + col]);
      }
    return;
  }
  for (int lane = 0; lane < width; ++lane)
    for (int e = 0; e < layout.accumulator_width; ++e) {
      auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
      double sum = c_of(lane, e);
      for (size_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      reg(in.result.slot + e, lane) = from_double(Scalar::f32, sum);
    }
}

}  // namespace kemit::interp

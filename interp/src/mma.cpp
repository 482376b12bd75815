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
  std::vector<double> a, b_columns;  // A by rows, B by columns: each dot product reads both in order
  std::vector<int> a_from, b_from;   // the lane that gave each element, for replicated layouts
};

}  // namespace

void Wave::mma(const Instr& in, uint64_t mask) {
  const MmaLayout& layout = mma_layouts()[in.mma];
  if (mask != all_lanes || layout.wave != width)
    fail(in, __builtin_ctzll((~mask & all_lanes) | (uint64_t{1} << 63)), "mma needs every lane of its wave active");
  thread_local MmaScratch scratch;
  auto& [a, b_columns, a_from, b_from] = scratch;
  a.assign(static_cast<size_t>(layout.m) * layout.k, 0);
  b_columns.assign(static_cast<size_t>(layout.k) * layout.n, 0);
  if (layout.replicated) {
    a_from.assign(a.size(), -1);
    b_from.assign(b_columns.size(), -1);
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
  const size_t k = layout.k;
  gather(in.in[0], layout.a, a, a_from, [&](int row, int col) { return row * k + col; }, "A");
  gather(in.in[1], layout.b, b_columns, b_from, [&](int row, int col) { return col * k + row; }, "B");
  for (int lane = 0; lane < width; ++lane)
    for (int e = 0; e < layout.accumulator_width; ++e) {
      auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
      const double* a_row = &a[row * k];
      const double* b_column = &b_columns[col * k];
      double sum = to_double(Scalar::f32, reg(in.in[2].slot + e, lane));
      for (size_t i = 0; i < k; ++i) sum += a_row[i] * b_column[i];
      reg(in.result.slot + e, lane) = from_double(Scalar::f32, sum);
    }
}

}  // namespace kemit::interp

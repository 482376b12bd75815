// The matrix op: D = A x B + C over the wave's fragments (layouts: mma_layout.cpp, docs/ir.md).
// Every lane of the wave takes part, as on the hardware. Products and sums are exact in double
// (fp8 / bf8 operands: 8 bytes to each i64 element, byte j holding element 8 * slot + j);
// each D element is rounded to f32 once (the hardware's internal order is unspecified, the
// numerics lane's tolerance covers the difference). A layout that gives one element of A or B to
// several lanes (gfx11 wmma replicates A and B in both half-waves) needs them to agree.
#include <cstring>

#include "mma_layout.h"
#include "wave.h"

namespace kemit::interp {

void Wave::mma(const Instr& in, uint64_t mask) {
  const MmaLayout& layout = mma_layouts()[in.mma];
  uint64_t full = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  if (mask != full || layout.wave != width)
    fail(in, __builtin_ctzll((~mask & full) | (uint64_t{1} << 63)), "mma needs every lane of its wave active");
  std::vector<double> a(static_cast<size_t>(layout.m) * layout.k), b(static_cast<size_t>(layout.k) * layout.n);
  std::vector<int> a_from(a.size(), -1), b_from(b.size(), -1);
  auto gather = [&](const Operand& operand, const std::vector<std::pair<int, int>>& places, std::vector<double>& out,
                    std::vector<int>& from, int columns, const char* matrix) {
    for (int lane = 0; lane < width; ++lane)
      for (int e = 0; e < layout.operand_width; ++e) {
        auto [row, col] = places[static_cast<size_t>(lane) * layout.operand_width + e];
        size_t at = static_cast<size_t>(row) * columns + col;
        double value = layout.fp8 == Fp8::none
                           ? to_double(layout.operand_kind, reg(operand.slot + e, lane))
                           : fp8_to_double(layout.fp8, (reg(operand.slot + e / 8, lane) >> (8 * (e % 8))) & 0xff);
        if (from[at] >= 0 && std::memcmp(&out[at], &value, sizeof value) != 0)
          fail(in, lane, std::string("lanes ") + std::to_string(from[at]) + " and " + std::to_string(lane) +
                             " hold different values of " + matrix + "[" + std::to_string(row) + "][" +
                             std::to_string(col) + "], which the layout replicates");
        out[at] = value;
        from[at] = lane;
      }
  };
  gather(in.in[0], layout.a, a, a_from, layout.k, "A");
  gather(in.in[1], layout.b, b, b_from, layout.n, "B");
  for (int lane = 0; lane < width; ++lane)
    for (int e = 0; e < layout.accumulator_width; ++e) {
      auto [row, col] = layout.c[static_cast<size_t>(lane) * layout.accumulator_width + e];
      double sum = to_double(Scalar::f32, reg(in.in[2].slot + e, lane));
      for (int k = 0; k < layout.k; ++k)
        sum += a[static_cast<size_t>(row) * layout.k + k] * b[static_cast<size_t>(k) * layout.n + col];
      reg(in.result.slot + e, lane) = from_double(Scalar::f32, sum);
    }
}

}  // namespace kemit::interp

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
#include <string>
#include <vector>

#include "mma_layout.h"
#include "wave.h"

namespace kemit::interp {

namespace {

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

// One operand element from its cell's bits, exactly: a signed byte, an 8-bit float, or a half.
struct Decoder {
  const MmaLayout& layout;
  const std::array<double, 256>* fp8 =
      layout.fp8 != Fp8::none ? &fp8_values()[static_cast<size_t>(layout.fp8)] : nullptr;
  // decode(value) with value(bits, shift) chosen once for the layout, not per element.
  template <class F> void with(F&& decode) const {
    if (layout.int8_per_element)
      decode([](uint64_t bits, int shift) { return static_cast<double>(static_cast<int8_t>(bits >> shift)); });
    else if (fp8)
      decode([table = fp8](uint64_t bits, int shift) { return (*table)[(bits >> shift) & 0xff]; });
    else
      decode([kind = layout.operand_kind](uint64_t bits, int) { return to_double(kind, bits); });
  }
};

// The operand's elements by rows (from their first holders; `cells` is the operand's first slot);
// false when a replica holds another value.
bool gather(const Decoder& decoder, const MmaGather& from, const uint64_t* cells, double* out) {
  bool agree = true;
  decoder.with([&](auto value) {
    const size_t count = from.cell.size();
    for (size_t i = 0; i < count; ++i) out[i] = value(cells[from.cell[i]], from.shift[i]);
    for (const auto& replica : from.replicas) {
      const double held = value(cells[replica.cell], replica.shift);
      agree &= std::memcmp(&held, &out[replica.element], sizeof held) == 0;
    }
  });
  return agree;
}

// Four columns of a row of sums (a vector of the compiler's, whatever the processor's width), and
// the same read from or written to doubles in place.
typedef double Quad __attribute__((vector_size(32)));
typedef double QuadAt __attribute__((vector_size(32), aligned(8), may_alias));

// `rows` rows of sums of A x B from `row` (A m x k, B k x N, both by rows), each sum started at -0
// and summed over k in order: N fixed, so the compiler keeps the rows in registers.
template <size_t N, size_t rows> [[gnu::always_inline]] inline void row_sums(const double* a, const double* b,
                                                                            size_t k, size_t row, double* d) {
  constexpr size_t quads = N / 4;
  Quad sums[rows][quads];
  for (size_t r = 0; r < rows; ++r)
    for (size_t q = 0; q < quads; ++q) sums[r][q] = Quad{-0.0, -0.0, -0.0, -0.0};
  for (size_t i = 0; i < k; ++i) {
    const auto* y = reinterpret_cast<const QuadAt*>(b + i * N);
    for (size_t r = 0; r < rows; ++r) {
      const double x = a[(row + r) * k + i];
      for (size_t q = 0; q < quads; ++q) sums[r][q] += x * y[q];
    }
  }
  for (size_t r = 0; r < rows; ++r)
    for (size_t q = 0; q < quads; ++q) reinterpret_cast<QuadAt*>(d + (row + r) * N)[q] = sums[r][q];
}

// D = A x B (m x n). Each element's products are added in k order whatever the vector width (a
// vector holds columns, never parts of one sum), and -ffp-contract=off keeps a product and a sum
// two roundings, so the AVX2 clone, which the processor picks at run time, gives the default's bits.
__attribute__((target_clones("avx2", "default"))) void product(const double* a, const double* b, size_t m, size_t k,
                                                                 size_t n, double* d) {
  if (n == 16 && m % 2 == 0) {
    for (size_t row = 0; row < m; row += 2) row_sums<16, 2>(a, b, k, row, d);
  } else if (n == 32) {
    for (size_t row = 0; row < m; ++row) row_sums<32, 1>(a, b, k, row, d);
  } else {
    for (size_t row = 0; row < m; ++row) {
      double* out = d + row * n;
      for (size_t col = 0; col < n; ++col) out[col] = -0.0;
      for (size_t i = 0; i < k; ++i)
        for (size_t col = 0; col < n; ++col) out[col] += a[row * k + i] * b[i * n + col];
    }
  }
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

// Lane by lane, A then B, as the layout places them: the first lane whose element differs from the
// one an earlier lane holds, named with that lane (the report of a replicated layout's mismatch).
void Wave::mma_replica_error(const Instr& in, const MmaLayout& layout) {
  std::vector<double> fragment(static_cast<size_t>(layout.operand_width));
  auto check = [&](const Operand& operand, const std::vector<int>& at, size_t size,
                   const std::vector<std::pair<int, int>>& places, const char* matrix) {
    std::vector<double> out(size);
    std::vector<int> from(size, -1);
    const size_t per_lane = static_cast<size_t>(layout.operand_width);
    for (int lane = 0; lane < width; ++lane) {
      mma_fragment(layout, operand, lane, fragment.data());
      const int* place = &at[lane * per_lane];
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
  check(in.in[0], layout.a_at, static_cast<size_t>(layout.m) * layout.k, layout.a, "A");
  check(in.in[1], layout.b_at, static_cast<size_t>(layout.k) * layout.n, layout.b, "B");
  fail(in, 0, "the layout's replicas disagree");  // unreachable: the check above names them
}

void Wave::mma(const Instr& in, uint64_t mask) {
  const MmaLayout& layout = mma_layouts()[in.mma];
  if (mask != all_lanes || layout.wave != width)
    fail(in, __builtin_ctzll((~mask & all_lanes) | (uint64_t{1} << 63)), "mma needs every lane of its wave active");
  alignas(64) double a[MMA_MAX_OPERAND], b[MMA_MAX_OPERAND], d[MMA_MAX_D];
  const Decoder decoder{layout};
  const bool agree = gather(decoder, layout.a_gather, lane_row(in.in[0].slot), a);
  if (!(gather(decoder, layout.b_gather, lane_row(in.in[1].slot), b) && agree)) mma_replica_error(in, layout);
  // Each D element is its C plus the sum of the products over k in order, that sum started at -0,
  // the identity of IEEE addition: products that are all -0 sum to -0, so a C of -0 stays -0 as
  // the exact sum rounded once gives (from +0 it would be +0). Without replicated C elements the
  // sums run row by row, a whole row of D at once (the same order).
  const size_t k = layout.k, n = layout.n;
  const bool integer = layout.int8_per_element != 0;
  const size_t per_lane = static_cast<size_t>(layout.accumulator_width);
  if (!layout.c_replicated) {
    product(a, b, static_cast<size_t>(layout.m), k, n, d);
    for (size_t e = 0; e < per_lane; ++e) {
      const uint64_t* c = lane_row(in.in[2].slot + static_cast<int>(e));
      uint64_t* out = lane_row(in.result.slot + static_cast<int>(e));
      const uint16_t* at = &layout.d_of_cell[e * static_cast<size_t>(width)];
      // D's bits: the exact sum wrapped to i32, or rounded once to f32.
      if (integer)
        for (int l = 0; l < width; ++l)
          out[l] = static_cast<uint64_t>(static_cast<int64_t>(static_cast<double>(sign_extend(Scalar::i32, c[l])) +
                                                              d[at[l]])) & width_mask(Scalar::i32);
      else
        for (int l = 0; l < width; ++l) out[l] = from_double(Scalar::f32, to_double(Scalar::f32, c[l]) + d[at[l]]);
    }
    return;
  }
  auto c_of = [&](int lane, int e) {
    uint64_t bits = reg(in.in[2].slot + e, lane);
    return integer ? static_cast<double>(sign_extend(Scalar::i32, bits)) : to_double(Scalar::f32, bits);
  };
  auto d_of = [&](double sum) {
    return integer ? static_cast<uint64_t>(static_cast<int64_t>(sum)) & width_mask(Scalar::i32)
                   : from_double(Scalar::f32, sum);
  };
  for (int lane = 0; lane < width; ++lane)
    for (size_t e = 0; e < per_lane; ++e) {
      auto [row, col] = layout.c[lane * per_lane + e];
      double sum = -0.0;
      for (size_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      reg(in.result.slot + static_cast<int>(e), lane) = d_of(c_of(lane, static_cast<int>(e)) + sum);
    }
}

}  // namespace kemit::interp

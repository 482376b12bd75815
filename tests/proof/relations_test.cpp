// The relational domain (kemit/proof/poly.h): relations between sizes, ids and loop variables
// that no interval holds are proven by substitution; a false relation is never proven, and the
// prover refutes it with z3's witness; an obligation neither decides in time is UNPROVEN, named.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kemit/proof/poly.h"
#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

// n in 1..2^28, iv in [0, n - 1]: the last element's 4 bytes end at n*4, not past it.
struct LoopOverN {
  Relations r;
  int n = r.fresh("n", {1, Int(1) << 28});
  int iv = r.fresh("iv", {0, (Int(1) << 28) - 1});
  LoopOverN() { r.bound_above(iv, Poly::atom(n) - Poly::constant(1)); }
  Poly bytes_left(Int end_of_access) {
    return Poly::constant(4) * Poly::atom(n) - (Poly::constant(4) * Poly::atom(iv) + Poly::constant(end_of_access));
  }
};

TEST(Relations, ALoopBoundIntervalsCannotHoldIsProven) {
  LoopOverN loop;
  Poly left = loop.bytes_left(4);
  EXPECT_LT(loop.r.range_of(left).lo, 0);  // the intervals alone: iv may be 2^28 - 1 with n = 1
  EXPECT_TRUE(loop.r.prove_nonneg(left));
}

TEST(Relations, AnAccessOnePastTheEndIsNotProven) {
  LoopOverN loop;
  EXPECT_FALSE(loop.r.prove_nonneg(loop.bytes_left(8)));
}

TEST(Relations, SumsOfProductsCompareAsPolynomials) {
  // first*524 + count*524 <= rows*524, with count <= rows - first.
  Relations r;
  int rows = r.fresh("rows", {0, 1 << 26});
  int first = r.fresh("first", {0, (1 << 26) - 1});
  int count = r.fresh("count", {1, 65536});
  r.bound_above(count, Poly::atom(rows) - Poly::atom(first));
  Poly c524 = Poly::constant(524);
  Poly view = c524 * Poly::atom(first) + c524 * Poly::atom(count);
  EXPECT_TRUE(r.prove_nonneg(c524 * Poly::atom(rows) - view));
  EXPECT_FALSE(r.prove_nonneg(c524 * Poly::atom(rows) - view - Poly::constant(1)));
}

TEST(Relations, ADivisorNarrowsTheLastValue) {
  // An even value below 1030 is at most 1028: 1028 + 2 <= 1030, but 1029 + 2 is not.
  Relations r;
  int even = r.fresh("even", {0, 1029}, 2);
  EXPECT_TRUE(r.prove_nonneg(Poly::constant(1030) - Poly::atom(even) - Poly::constant(2)));
  EXPECT_FALSE(r.prove_nonneg(Poly::constant(1030) - Poly::atom(even) - Poly::constant(3)));
}

TEST(Relations, ADivisorNarrowsASymbolicBound) {
  // c < cols = 8 * vectors, c a multiple of 8: c + 8 <= cols, but not c + 9.
  Relations r;
  int vectors = r.fresh("vectors", {0, 2048});
  int c = r.fresh("c", {0, 16383}, 8);
  r.bound_above(c, Poly::constant(8) * Poly::atom(vectors) - Poly::constant(1));
  Poly cols = Poly::constant(8) * Poly::atom(vectors);
  EXPECT_TRUE(r.prove_nonneg(cols - Poly::atom(c) - Poly::constant(8)));
  EXPECT_FALSE(r.prove_nonneg(cols - Poly::atom(c) - Poly::constant(9)));
}

TEST(Relations, CeilingDivisionBoundsTheGrid) {
  // grid = ceil(n, 256) and wg < grid: the last workgroup's first lane, wg*256, is below n.
  Relations r;
  int n = r.fresh("n", {1, 1 << 30});
  int grid = r.fresh("ceil(n,256)", {1, 1 << 22});
  r.bound_above(grid, Poly::atom(n) + Poly::constant(255), 256);
  int wg = r.fresh("wg", {0, (1 << 22) - 1});
  r.bound_above(wg, Poly::atom(grid) - Poly::constant(1));
  Poly first_lane = Poly::constant(256) * Poly::atom(wg);
  EXPECT_TRUE(r.prove_nonneg(Poly::atom(n) - Poly::constant(1) - first_lane));
  EXPECT_FALSE(r.prove_nonneg(Poly::atom(n) - Poly::constant(2) - first_lane));
}

// Attention's chunk C = 2^23 / max(q_tiles*32, seq_k), a division by a run-time value: a chunk of
// C heads times a head's q_tiles*32 rows stays within 2^23 (b q <= a), and C + 1 heads pass it
// (a < b q + b); 2^23 - 1 does not hold (q_tiles 1, seq_k <= 32: C*32 is 2^23).
TEST(Relations, ARunTimeDivisorBoundsItsQuotient) {
  Relations r;
  int tiles = r.fresh("q_tiles", {1, 262144});
  int keys = r.fresh("seq_k", {1, 8388608});
  int widest = r.fresh("max", {32, 8388608});
  r.bound_below(widest, scaled(Poly::atom(tiles), 32));
  r.bound_below(widest, Poly::atom(keys));
  int chunk = r.fresh("C", {0, 262144});
  Poly range = Poly::constant(1 << 23);
  r.bound_quotient(chunk, range, Poly::atom(widest));
  Poly rows = scaled(Poly::atom(tiles), 32) * Poly::atom(chunk);
  EXPECT_LT(r.range_of(range - rows).lo, 0);  // the intervals alone: 2^18 heads of 2^23 rows
  EXPECT_TRUE(r.prove_nonneg(range - rows));
  EXPECT_FALSE(r.prove_nonneg(range - Poly::constant(1) - rows));
  Poly past = Poly::atom(widest) * Poly::atom(chunk) + Poly::atom(widest) - range - Poly::constant(1);
  EXPECT_TRUE(r.prove_nonneg(past));
  EXPECT_FALSE(r.prove_nonneg(past - Poly::constant(1)));
}

// One element per lane under `gid < n`, and a read of the next one: a[gid] is proven by the
// relations, a[gid + 1] is false at gid = n - 1, and z3 shows it.
TEST(Relations, AFalseRelationIsRefutedWithItsWitness) {
  const std::string module = gid_kernel("next_element", R"(  %7 = icmp %6, %1 {pred=slt} : i1
  if %7 {
    %8 = ptr_add %0, %6 {element=f32} : ptr.global
    %9 = load %8 {align=4} : f32
    %10 = const {value=1} : i32
    %11 = add %6, %10 {nsw, nuw} : i32
    %12 = ptr_add %0, %11 {element=f32} : ptr.global
    %13 = load %12 {align=4} : f32
  }
)");
  std::string plan = "; kemit launch plan 2\nsize n 0..268435456\nbuffer a n*4\n"
                     "launch next_element grid ceil(n,256),1,1 block 256 lds 0 args a=buffer:a n=scalar:n\n";
  auto findings = prove(module, plan);
  EXPECT_EQ(only(findings, "bounds", "%9 = load").how, "relations");
  Finding next = only(findings, "bounds", "%13 = load");
  ASSERT_EQ(next.verdict, ProofVerdict::REFUTED) << finding_text(next);
  nlohmann::json w = nlohmann::json::parse(next.witness);
  int64_t n = w["sizes"]["n"], gid = int64_t(w["workgroup"][0]) * 256 + int64_t(w["lane"]);
  EXPECT_EQ(gid, n - 1);
}

// With no resources for z3 (its rlimit: a step count, so the verdict does not depend on the
// machine's load), what the relations cannot decide is UNPROVEN and names its op: x*x - 3 is never
// 0 in 32 bits (an odd square is 1 mod 8), which only a bit-level proof of the product shows.
TEST(Relations, AQueryPastItsResourceLimitIsUnprovenNamingTheOp) {
  const std::string module = R"(; kemit canonical IR 1
kernel @odd_square {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 y : i32
  param %1 x : i32
  %2 = mul %1, %1 : i32
  %3 = const {value=3} : i32
  %4 = sub %2, %3 : i32
  %5 = udiv %0, %4 : i32
}
)";
  std::string plan = "; kemit launch plan 2\nsize x 0..2147483647\n"
                     "launch odd_square grid 1,1,1 block 64 lds 0 args y=scalar:x x=scalar:x\n";
  ProverOptions options;
  options.z3_rlimit = 1;
  auto findings = prove_module(module, plan, ArchLimits{}, options);
  Finding divisor = only(findings, "divisor", "%5 = udiv");
  ASSERT_EQ(divisor.verdict, ProofVerdict::UNPROVEN) << finding_text(divisor);
  EXPECT_NE(finding_text(divisor).find("UNPROVEN divisor of `%5 = udiv %0, %4 : i32` (canonical, kernel odd_square)"),
            std::string::npos)
      << finding_text(divisor);
  EXPECT_NE(divisor.how.find("z3 decided nothing"), std::string::npos) << divisor.how;
}

}  // namespace
}  // namespace kemit::proof::test

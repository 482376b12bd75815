// The reference interpreter (interp/): lane semantics and refusals on small hand-built kernels.
// test_interp.py covers the cross-lane and matrix ops against the numpy references.
#include <gtest/gtest.h>

#include <vector>

#include "kemit/interp/interp.h"
#include "kemit/ir/builder.h"

namespace {

using namespace kemit;

ir::Kernel prefix_sums(const std::string& arch) {
  ir::Builder b("t", arch);
  ir::Value out = b.param("out", ir::pointer("global"));
  ir::Type i32 = ir::scalar("i32");
  ir::Value tid = b.workitem_id("x");
  ir::Value zero = b.const_int(i32, 0);
  ir::Value one = b.const_int(i32, 1);
  auto results = b.for_loop(zero, tid, one, {zero}, [&](const ir::Value& i, const std::vector<ir::Value>& it) {
    return std::vector<ir::Value>{b.add(it[0], i)};
  });
  ir::Value address = b.ptr_add(out, tid, i32);
  b.store(results[0], address, 4);
  return b.finish();
}

TEST(Interp, DivergentLoopLanesLeaveOneByOne) {
  std::vector<int32_t> out(64, -1);
  interp::Launch launch{{1, 1, 1}, {64, 1, 1}};
  auto stats = interp::run(prefix_sums("gfx90a"), launch,
                           {{"out", {reinterpret_cast<uint8_t*>(out.data()), out.size() * 4, true}}}, {});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i * (i - 1) / 2);
  EXPECT_EQ(stats.workgroups, 1u);
  EXPECT_GT(stats.lane_instructions, 64u * 63u / 2);  // the add runs once per trip of each lane
}

TEST(Interp, OutOfBoundsNamesTheOpAndTheIndex) {
  std::vector<int32_t> out(10, 0);
  interp::Launch launch{{1, 1, 1}, {32, 1, 1}};
  try {
    interp::run(prefix_sums("gfx1100"), launch, {{"out", {reinterpret_cast<uint8_t*>(out.data()), 40, true}}}, {});
    FAIL() << "no error";
  } catch (const interp::InterpError& error) {
    EXPECT_EQ(std::string(error.what()).substr(0, 125),
              "store %7, %8 {align=4}: index 10 (bytes 40 to 44) is out of bounds of buffer 'out' (10 elements, 40 bytes) "
              "(lane 10 of wave 0");
  }
}

// An error thrown on a wave's own stack, caught outside, then two more runs of several waves and
// workgroups on the same thread. Under AddressSanitizer (ci/sanitize.sh) the unannotated stack
// switches made that throw report stack-use-after-scope (run.cpp: leave_stack, entered_stack).
TEST(Interp, ErrorThrownOnAWaveStackLeavesLaterRunsIntact) {
  std::vector<int32_t> small(10, 0);
  EXPECT_THROW(interp::run(prefix_sums("gfx1100"), interp::Launch{{1, 1, 1}, {64, 1, 1}},
                           {{"out", {reinterpret_cast<uint8_t*>(small.data()), 40, true}}}, {}),
               interp::InterpError);
  for (int repeat = 0; repeat < 2; ++repeat) {
    std::vector<int32_t> out(64, -1);
    auto stats = interp::run(prefix_sums("gfx1100"), interp::Launch{{3, 1, 1}, {64, 1, 1}},
                             {{"out", {reinterpret_cast<uint8_t*>(out.data()), out.size() * 4, true}}}, {});
    for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i * (i - 1) / 2);
    EXPECT_EQ(stats.workgroups, 3u);
  }
}

TEST(Interp, MissingParamIsAnError) {
  interp::Launch launch;
  EXPECT_THROW(interp::run(prefix_sums("gfx90a"), launch, {}, {}), interp::InterpError);
}

}  // namespace

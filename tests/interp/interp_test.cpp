// The reference interpreter (interp/): lane semantics and refusals on small hand-built kernels.
// test_interp.py covers the cross-lane and matrix ops against the numpy references.
#include <gtest/gtest.h>

#include <cstring>
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
    // The three workgroups store the same elements, a race; this run is about the stacks, so the
    // race detector stays off.
    auto stats = interp::run(prefix_sums("gfx1100"), interp::Launch{{3, 1, 1}, {64, 1, 1}},
                             {{"out", {reinterpret_cast<uint8_t*>(out.data()), out.size() * 4, true}}}, {},
                             interp::RunOptions{{}, false});
    for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i * (i - 1) / 2);
    EXPECT_EQ(stats.workgroups, 3u);
  }
}

TEST(Interp, MissingParamIsAnError) {
  interp::Launch launch;
  EXPECT_THROW(interp::run(prefix_sums("gfx90a"), launch, {}, {}), interp::InterpError);
}

// Witness runs at real size (docs/numerics.md): the paged memory both runners share, and the
// interpreter's run of chosen workgroups.
TEST(PagedMemory, PagesAreMadeOnTouchWithTheSeededFillAndKeepWrites) {
  witness::PagedBuffer buffer("x", uint64_t(1) << 40, witness::Fill::f32, 7, 4096);
  float first = 0;
  buffer.read(uint64_t(1) << 39, &first, 4);
  uint32_t expected_bits = uint32_t(witness::fill_bits(witness::Fill::f32, witness::buffer_key(7, "x"), (uint64_t(1) << 39) / 4));
  uint32_t bits = 0;
  std::memcpy(&bits, &first, 4);
  EXPECT_EQ(bits, expected_bits);
  EXPECT_EQ(buffer.pages().size(), 1u);  // a 1 TiB buffer: one page of 4 KiB made
  const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  buffer.write(4092, data, 8);  // straddles pages 0 and 1
  uint8_t back[8] = {};
  buffer.read(4092, back, 8);
  EXPECT_EQ(std::memcmp(back, data, 8), 0);
  EXPECT_EQ(buffer.pages().size(), 3u);
  const auto& page0 = buffer.pages().at(0);
  EXPECT_EQ(page0.written[4092 / 64] >> (4092 % 64) & 0xf, 0xfu);
  EXPECT_EQ(page0.written[0], 0u);
  EXPECT_EQ(buffer.pages().at(1).written[0] & 0xf, 0xfu);
}

TEST(PagedMemory, HalfFillsAreTheF32ValuesExactly) {
  uint64_t key = witness::buffer_key(3, "h");
  for (uint64_t i = 0; i < 4096; ++i) {
    uint32_t f32 = uint32_t(witness::fill_bits(witness::Fill::f32, key, i));
    EXPECT_EQ(witness::fill_bits(witness::Fill::bf16, key, i) << 16, f32);
    float value = 0;
    std::memcpy(&value, &f32, 4);
    _Float16 half = static_cast<_Float16>(value);
    uint16_t half_bits = 0;
    std::memcpy(&half_bits, &half, 2);
    EXPECT_EQ(witness::fill_bits(witness::Fill::f16, key, i), half_bits) << i;
  }
}

TEST(Witness, AFailedWorkgroupIsReportedAndTheNextStillRuns) {
  // out[tid + 256 * group] = tid on a view of 300 elements: workgroup 1 runs past it from lane 44.
  ir::Builder b("w", "gfx90a");
  ir::Value out = b.param("out", ir::pointer("global"));
  ir::Type i32 = ir::scalar("i32");
  ir::Value index = b.add(b.mul(b.workgroup_id("x"), b.const_int(i32, 256)), b.workitem_id("x"));
  b.store(index, b.ptr_add(out, index, i32), 4);
  ir::Kernel kernel = b.finish();
  witness::Launch launch;
  launch.grid = {3, 1, 1};
  launch.block = {256, 1, 1};
  launch.buffers = {{"o", uint64_t(1) << 36, "i32"}};
  launch.views["out"] = {"o", uint64_t(1) << 35, 300 * 4};
  launch.workgroups = {{1, 0, 0}, {0, 0, 0}};
  interp::WitnessReport report = interp::run_witness(kernel, launch);
  ASSERT_EQ(report.runs.size(), 2u);
  EXPECT_FALSE(report.runs[0].ok);
  EXPECT_EQ(report.runs[0].workitem, 44);
  EXPECT_NE(report.runs[0].message.find("out of bounds"), std::string::npos) << report.runs[0].error;
  EXPECT_TRUE(report.runs[1].ok) << report.runs[1].error;
  EXPECT_EQ(report.buffers[0].pages().size(), 1u);
  launch.views["out"].offset = uint64_t(1) << 36;  // past the buffer's end
  EXPECT_THROW(interp::run_witness(kernel, launch), interp::InterpError);
}

}  // namespace

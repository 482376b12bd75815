// From the contract to a witness run: a REFUTED obligation's witness, or the largest launch a plan
// allows, becomes a launch description that the reference interpreter runs at real size, showing
// the broken promise as the poison or out-of-bounds access it causes.
#include "kemit/proof/witness_launch.h"

#include <nlohmann/json.hpp>

#include "kemit/interp/interp.h"
#include "kemit/ir/parser.h"
#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

witness::WorkgroupRun only_run(const std::string& canonical, const witness::Launch& launch) {
  interp::WitnessReport report = interp::run_witness(ir::parse_module(canonical).at(0), launch);
  EXPECT_EQ(report.runs.size(), 1u);
  return report.runs.empty() ? witness::WorkgroupRun{} : report.runs[0];
}

witness::Launch witness_launch(const std::string& plan, const Finding& finding) {
  return launch_at(parse_plan(plan), witness_point(finding.witness));
}

TEST(WitnessLaunch, AProductPast2To31RunsAsPoisonAtTheWitnessWorkgroup) {
  std::string plan = rows_plan("1..2097153");
  Finding product = only(prove(ROWS, plan), "nsw", "%7 = mul");
  ASSERT_EQ(product.verdict, ProofVerdict::REFUTED);
  witness::Launch launch = witness_launch(plan, product);
  EXPECT_EQ(launch.kernel, "rows_first");
  EXPECT_EQ(launch.grid, (witness::Dims{2097153, 1, 1}));
  EXPECT_EQ(launch.block, (witness::Dims{256, 1, 1}));
  EXPECT_EQ(launch.scalars.at("rows"), 2097153);
  ASSERT_EQ(launch.buffers.size(), 2u);
  EXPECT_EQ(launch.buffers[0].bytes, 2097153ull * 4096);  // x: 8 GiB and a row
  EXPECT_EQ(launch.views.at("x").bytes, 2097153ull * 4096);
  witness::WorkgroupRun run = only_run(ROWS, launch);
  EXPECT_EQ(run.workgroup, (witness::Dims{2097152, 0, 0}));
  ASSERT_FALSE(run.ok);
  EXPECT_NE(run.op.find("mul"), std::string::npos) << run.error;
  EXPECT_NE(run.message.find("nsw"), std::string::npos) << run.error;
}

TEST(WitnessLaunch, ARemovedGuardRunsOutOfBounds) {
  Finding load = only(prove(guarded(false), GUARDED_PLAN), "bounds", "%10 = load");
  ASSERT_EQ(load.verdict, ProofVerdict::REFUTED);
  witness::WorkgroupRun run = only_run(guarded(false), witness_launch(GUARDED_PLAN, load));
  ASSERT_FALSE(run.ok);
  EXPECT_NE(run.message.find("out of bounds"), std::string::npos) << run.error;
  // The same launch with the guard in place runs to its end.
  witness::WorkgroupRun guarded_run = only_run(guarded(true), witness_launch(GUARDED_PLAN, load));
  EXPECT_TRUE(guarded_run.ok) << guarded_run.error;
}

TEST(WitnessLaunch, TheLargestLaunchOfAChunkedPlanRunsItsLastChunk) {
  Plan plan = parse_plan(CHUNKED_PLAN);
  std::vector<LaunchPoint> points = largest_points(plan);
  ASSERT_EQ(points.size(), 1u);
  ASSERT_EQ(points[0].chunks.size(), 1u);
  EXPECT_EQ(int_text(points[0].chunks[0].first), "33822867456");  // 63 * 2^29: the last of 64 chunks
  EXPECT_EQ(int_text(points[0].chunks[0].second), "536870912");
  witness::Launch launch = launch_at(plan, points[0]);
  EXPECT_EQ(launch.grid, (witness::Dims{2097152, 1, 1}));
  EXPECT_EQ(launch.views.at("y").offset, 33822867456ull * 4);
  EXPECT_EQ(launch.views.at("y").bytes, 1ull << 31);
  EXPECT_EQ(launch.buffers[0].bytes, 1ull << 37);  // 128 GiB, none of it made but the pages touched
  EXPECT_EQ(launch.scalars.at("n"), 536870912);
  interp::WitnessReport report = interp::run_witness(ir::parse_module(guarded(true)).at(0), launch);
  ASSERT_EQ(report.runs.size(), 2u);  // the first and the last workgroup
  for (const auto& run : report.runs) EXPECT_TRUE(run.ok) << run.error;
  EXPECT_EQ(report.runs[1].workgroup, (witness::Dims{2097151, 0, 0}));
}

// Sizes whose ranges are a box: all at their tops would pass 2^40 bytes a buffer; each is largest
// once, the other at 1, and a size is cut where its buffer would pass 2^40.
TEST(WitnessLaunch, EachSizeIsLargestOnceWithinTheBytesOfARun) {
  Plan plan = parse_plan(
      "; kemit launch plan 2\nsize m 0..1048576\nsize k 1..16777216\nbuffer a m*k*4\n"
      "launch rows_first grid m,1,1 block 256 lds 0 args x=buffer:a y=buffer:a rows=scalar:m\n");
  std::vector<std::map<std::string, Int>> extremes = extreme_sizes(plan);
  ASSERT_EQ(extremes.size(), 2u);
  EXPECT_EQ(int_text(extremes[0].at("m")), "1048576");
  EXPECT_EQ(int_text(extremes[0].at("k")), "1");
  EXPECT_EQ(int_text(extremes[1].at("m")), "1");
  EXPECT_EQ(int_text(extremes[1].at("k")), "16777216");
  Plan wide = parse_plan("; kemit launch plan 2\nsize n 1..1099511627776\nbuffer a n*4\n"
                         "launch rows_first grid 1,1,1 block 256 lds 0 args x=buffer:a y=buffer:a rows=scalar:n\n");
  EXPECT_EQ(int_text(extreme_sizes(wide).at(0).at("n")), "274877906944");  // 2^40 bytes of f32
}

TEST(WitnessLaunch, TheDescriptionIsTheJsonTheRunnersRead) {
  Plan plan = parse_plan(grid_stride_plan("0..2130706432"));
  LaunchPoint point = largest_points(plan).at(0);
  point.workgroups = {{65535, 0, 0}};
  nlohmann::json written = nlohmann::json::parse(launch_json(launch_at(plan, point, 7)));
  EXPECT_EQ(written["kernel"], "ew_add_f32_v1_b256");
  EXPECT_EQ(written["grid"], nlohmann::json::array({65536, 1, 1}));
  EXPECT_EQ(written["seed"], 7);
  EXPECT_EQ(written["args"]["n"], 2130706432);
  EXPECT_EQ(written["args"]["y"]["buffer"], "y");
  EXPECT_EQ(written["buffers"]["a"]["bytes"], 2130706432ll * 4);
  EXPECT_EQ(written["workgroups"], nlohmann::json::array({nlohmann::json::array({65535, 0, 0})}));
}

TEST(WitnessLaunch, WhatCannotBeALaunchIsRefusedNamingIt) {
  EXPECT_THROW(witness_point("{\"sizes\": {}}"), WitnessLaunchError);
  Plan plan = parse_plan(CHUNKED_PLAN);
  LaunchPoint point;
  point.sizes = {{"n", 1024}};  // a chunked line without its chunk
  try {
    launch_at(plan, point);
    FAIL() << "a chunked line ran without its chunk";
  } catch (const WitnessLaunchError& error) {
    EXPECT_NE(std::string(error.what()).find("plan line 5 (ew_guarded): a chunked line needs the chunk"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace kemit::proof::test

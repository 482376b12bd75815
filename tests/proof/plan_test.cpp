// The plan parser: version 2 texts read strictly, every error naming its line.
#include <gtest/gtest.h>

#include "kemit/proof/plan.h"

namespace kemit::proof {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_plan(text);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Plan, ReadsSizesBuffersAndAChunkedLaunch) {
  Plan plan = parse_plan(
      "; kemit launch plan 2\nsize n 0..34359738368\nbuffer a n*4\nbuffer y n*4\n"
      "launch k chunks n by 536870912 grid ceil(count,256),1,1 block 256 lds 0 args a=buffer:a@first*4+count*4 "
      "y=buffer:y n=scalar:count\n");
  ASSERT_EQ(plan.sizes.size(), 1u);
  EXPECT_TRUE(plan.sizes[0].hi == (Int(1) << 35));
  ASSERT_EQ(plan.launches.size(), 1u);
  const Launch& launch = plan.launches[0];
  ASSERT_EQ(launch.chunks.size(), 1u);
  EXPECT_EQ(launch.chunks[0].size, "n");
  EXPECT_EQ(launch.chunks[0].first, "first");
  EXPECT_EQ(expr_text(launch.grid[0].lo), "ceil(count,256)");
  EXPECT_EQ(launch.args[0].kind, Binding::Kind::view);
  EXPECT_EQ(expr_text(launch.args[0].offset), "first*4");
  EXPECT_EQ(expr_text(launch.args[0].bytes), "count*4");
  EXPECT_EQ(launch.args[1].kind, Binding::Kind::buffer);
  EXPECT_EQ(expr_text(launch.args[2].value), "count");
  EXPECT_EQ(launch.line, 5);
}

TEST(Plan, ReadsNestedChunksWithTheirOwnNames) {
  const std::string head = "; kemit launch plan 2\nsize rows 0..64\nsize cols 0..64\nbuffer a rows*cols*4\n";
  Plan plan = parse_plan(head +
                         "launch k chunks rows by 32 chunks cols by 1024/max(rows,1) grid ceil(count2,32),ceil(count,32),1 "
                         "block 256 lds 0 args a=buffer:a@(first*cols+first2)*4+((count-1)*cols+count2)*4\n");
  const Launch& launch = plan.launches.at(0);
  ASSERT_EQ(launch.chunks.size(), 2u);
  EXPECT_EQ(launch.chunks[1].size, "cols");
  EXPECT_EQ(expr_text(launch.chunks[1].by), "1024/max(rows,1)");
  EXPECT_EQ(launch.chunks[1].first, "first2");
  EXPECT_EQ(launch.chunks[1].count, "count2");
  EXPECT_EQ(error_of(head + "launch k chunks rows by 32 grid count2,1,1 block 256 lds 0 args a=buffer:a\n"),
            "line 5: 'count2' in 'count2' is not a declared size");
  EXPECT_EQ(error_of(head + "launch k chunks rows by 32 chunks rows by 8 grid 1,1,1 block 256 lds 0 args a=buffer:a\n"),
            "line 5: nested chunks of 'rows' inside chunks of itself");
  EXPECT_EQ(error_of(head + "launch k chunks rows by 32 chunks cols by 8 chunks rows by 2 grid 1,1,1 block 256 lds 0 "
                              "args a=buffer:a\n"),
            "line 5: more than 2 levels of chunks");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize first2 0..1\n"), "line 2: 'first2' is not a size name");
}

TEST(Plan, GridRangesAndExpressionsEvaluateAsIntegers) {
  Plan plan = parse_plan("; kemit launch plan 2\nsize rows 1..100\nbuffer x rows*4096\n"
                         "launch k grid 1..65536,ceil(rows,3),1 block 64 lds 16 args x=buffer:x\n");
  EXPECT_TRUE(plan.launches[0].grid[0].is_range);
  EXPECT_FALSE(plan.launches[0].grid[1].is_range);
  EXPECT_TRUE(eval_expr(plan.launches[0].grid[1].lo, {{"rows", 7}}) == 3);
  EXPECT_TRUE(eval_expr(parse_expr("(7-9)/2"), {}) == -1);  // floor division
  EXPECT_TRUE(eval_expr(parse_expr("min(3,max(1,2))*ceil(5,2)"), {}) == 6);
}

TEST(Plan, VersionOneHasNoContract) {
  Plan plan = parse_plan("; kemit launch plan 1\nlaunch k grid run-time block 256 lds 0 args n=scalar:n\n");
  EXPECT_EQ(plan.version, 1);
  EXPECT_TRUE(plan.launches.empty());
}

TEST(Plan, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("; kemit launch plan 3\n"), "line 1: expected '; kemit launch plan 2' (got '; kemit launch plan 3')");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 5..1\n"), "line 2: size 'n' has lo > hi");
  EXPECT_EQ(error_of("; kemit launch plan 2\nbuffer a m*4\n"), "line 2: 'm' in 'm*4' is not a declared size");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\nlaunch k grid 1,1 block 1 lds 0 args\n"),
            "line 3: grid '1,1' does not have three dimensions");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\nlaunch k grid n,1,1 block 1 lds 0 args x=buffer:x\n"),
            "line 3: binding 'x=buffer:x' names no declared buffer");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\nlaunch k grid count,1,1 block 1 lds 0 args\n"),
            "line 3: 'count' in 'count' is not a declared size");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\nlaunch k grid n+,1,1 block 1 lds 0 args\n"),
            "line 3: expression 'n+' at character 3: the expression ends too early");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\n"), "line 2: the plan has no launch");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\n\n"), "line 3: an empty line");
  EXPECT_EQ(error_of("; kemit launch plan 2\nsize n 1..2\nlaunch k grid n,1,1 block x lds 0 args\n"),
            "line 3: block 'x' is not a decimal integer");
}

}  // namespace
}  // namespace kemit::proof

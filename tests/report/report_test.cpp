// The shared report model (parity/report): the shard rule, the row rule, the merge's refusals.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "kemit/driver/config.h"
#include "kemit/report/merge.h"
#include "kemit/report/render.h"
#include "kemit/report/report.h"
#include "kemit/report/shard.h"

namespace kemit::report {
namespace {

std::string shard_error(const std::string& text) {
  try {
    parse_shard(text);
  } catch (const ShardError& error) {
    return error.what();
  }
  return "no error";
}

TEST(Shards, ParsesKOfNAndRefusesEverythingElse) {
  Shard shard = parse_shard("2/3");
  EXPECT_EQ(shard.index, 2);
  EXPECT_EQ(shard.count, 3);
  EXPECT_EQ(parse_shard("1/1").text(), "1/1");
  EXPECT_EQ(shard_error("0/3"), "--shard '0/3': K must be between 1 and N=3 (shards are numbered from 1)");
  EXPECT_EQ(shard_error("4/3"), "--shard '4/3': K must be between 1 and N=3 (shards are numbered from 1)");
  EXPECT_EQ(shard_error("1/0"), "--shard '1/0': N must be at least 1");
  for (const char* junk : {"junk", "1/", "/3", "a/b", "-1/3", " 1/3", "1/3 ", "1//3", "1.0/3", "", "1/3/4", "9999999/3"})
    EXPECT_NE(shard_error(junk).find("expected K/N with whole numbers, e.g. --shard 2/3"), std::string::npos)
        << junk << ": " << shard_error(junk);
}

// Every config lands in exactly one shard: for each N, the shards' sets are disjoint and their
// union is the whole set.
void expect_partition(const std::vector<std::pair<std::string, std::int64_t>>& keys, int count) {
  std::map<std::pair<std::string, std::int64_t>, int> hits;
  for (int k = 1; k <= count; ++k)
    for (const auto& [family, id] : keys)
      if (in_shard(Shard{k, count}, family, id)) ++hits[{family, id}];
  std::set<std::pair<std::string, std::int64_t>> all(keys.begin(), keys.end());
  ASSERT_EQ(hits.size(), all.size());
  for (const auto& [key, times] : hits) EXPECT_EQ(times, 1) << key.first << ":" << key.second << " of " << count;
}

TEST(Shards, TheRealConfigsArePartitioned) {
  std::vector<std::pair<std::string, std::int64_t>> keys;
  for (const auto& family : driver::load_config_dir(KEMIT_SOURCE_ROOT "/parity/configs", "parity/configs", {}))
    for (const auto& config : family.configs) keys.push_back({family.family, config.id});
  ASSERT_GT(keys.size(), 100u);
  for (int count : {1, 2, 3, 4, 7, 16}) expect_partition(keys, count);
}

TEST(Shards, GeneratedConfigsArePartitionedAndSpreadEvenly) {
  std::vector<std::pair<std::string, std::int64_t>> keys;
  for (const char* family : {"a", "elementwise", "gemm_mma", "x_1"})
    for (std::int64_t id = 0; id < 2500; ++id) keys.push_back({family, id});
  for (int count : {1, 2, 3, 5, 10}) expect_partition(keys, count);
  std::map<int, int> sizes;
  for (const auto& [family, id] : keys) ++sizes[shard_of(family, id, 3)];
  for (const auto& [shard, size] : sizes) EXPECT_NEAR(size, 10000 / 3, 200) << "shard " << shard;
}

TEST(Shards, TheAssignmentIsPinned) {
  // Every lane shards through this one function; these pin the rule itself.
  EXPECT_EQ(shard_of("elementwise", 12, 3), shard_of("elementwise", 12, 3));
  std::set<int> seen;
  for (std::int64_t id = 0; id < 30; ++id) seen.insert(shard_of("elementwise", id, 3));
  EXPECT_EQ(seen, (std::set<int>{1, 2, 3}));
}

TEST(Rows, OneRuleForEveryLane) {
  EXPECT_EQ(row_status({1, 1, 0, 0, 0}, false), Status::red);
  EXPECT_EQ(row_status({0, 0, 0, 0, 1}, true), Status::red);
  EXPECT_EQ(row_status({3, 0, 2, 1, 0}, false), Status::green);
  EXPECT_EQ(row_status({0, 0, 2, 0, 0}, false), Status::not_applicable);
  EXPECT_EQ(row_status({0, 0, 2, 1, 0}, false), Status::red);
  EXPECT_EQ(row_status({0, 0, 2, 1, 0}, true), Status::partial);
  EXPECT_EQ(row_status({0, 0, 0, 0, 0}, false), Status::red);
  EXPECT_EQ(row_status({0, 0, 0, 0, 0}, true), Status::partial);
}

Report shard_report(int k, int n, std::vector<Row> rows, std::vector<Case> cases) {
  Report r;
  r.lane = "parity";
  r.run.tool = "check_byte_identity";
  r.run.commit = "c0ffee";
  r.run.run_key = "'check_byte_identity'";
  r.run.started = "2026-12-02T15:00:0" + std::to_string(k) + "Z";
  r.run.shard = Shard{k, n};
  r.rows = std::move(rows);
  r.cases = std::move(cases);
  judge_rows(r);
  return r;
}

Case passed(const std::string& family, std::int64_t id) {
  return {family, id, "canonical", "IDENTICAL", Outcome::passed, "", "", 0.1};
}

TEST(Merge, SumsEvidenceSoAPartialRowIsDecided) {
  // Shard 1 holds only refusals of "alpha" (PARTIAL), shard 2 its emitting config (GREEN).
  Report one = shard_report(1, 2, {{"alpha", "canonical", {0, 0, 0, 1, 0}, Status::red, ""}}, {passed("alpha", 1)});
  Report two = shard_report(2, 2, {{"alpha", "canonical", {1, 0, 0, 0, 0}, Status::red, ""}}, {passed("alpha", 2)});
  EXPECT_EQ(one.rows[0].status, Status::partial);
  Report merged = merge_reports({{"one.json", one}, {"two.json", two}});
  ASSERT_EQ(merged.rows.size(), 1u);
  EXPECT_EQ(merged.rows[0].status, Status::green);
  EXPECT_TRUE(merged.green());
  EXPECT_FALSE(merged.run.shard);
  EXPECT_EQ(merged.run.started, "2026-12-02T15:00:01Z");
  EXPECT_EQ(merged.cases.size(), 2u);
  // The JSON round trip keeps everything the merge needs.
  Report again = report_from_json(envelope_json(merged));
  EXPECT_EQ(again.rows[0].evidence.passed, 1);
  EXPECT_EQ(again.cases[1].id, 2);
}

TEST(Merge, NothingCheckedAnywhereIsRedAfterTheMerge) {
  Report one = shard_report(1, 2, {{"alpha", "canonical", {0, 0, 0, 1, 0}, Status::red, "add a config that emits"}}, {});
  Report two = shard_report(2, 2, {{"alpha", "canonical", {0, 0, 0, 0, 0}, Status::red, "add a config that emits"}}, {});
  EXPECT_TRUE(one.green());  // a shard says only that nothing failed in it
  Report merged = merge_reports({{"one.json", one}, {"two.json", two}});
  EXPECT_EQ(merged.rows[0].status, Status::red);
  EXPECT_EQ(merged.rows[0].note, "add a config that emits");
  EXPECT_FALSE(merged.green());
}

std::string merge_error(std::vector<NamedReport> inputs) {
  try {
    merge_reports(inputs);
  } catch (const MergeError& error) {
    return error.what();
  }
  return "merged";
}

TEST(Merge, RefusesWhatIsNotTheShardsOfOneRun) {
  Report one = shard_report(1, 2, {}, {passed("alpha", 1)});
  Report two = shard_report(2, 2, {}, {passed("alpha", 2)});
  Report other_tool = two;
  other_tool.run.tool = "check_llvm";
  EXPECT_EQ(merge_error({{"a.json", one}, {"b.json", other_tool}}),
            "b.json and a.json are not shards of one run: their tools differ ('check_llvm' vs 'check_byte_identity')");
  Report other_run = two;
  other_run.run.run_key = "'check_byte_identity' '--only' 'alpha'";
  EXPECT_NE(merge_error({{"a.json", one}, {"b.json", other_run}}).find("their runs"), std::string::npos);
  Report other_commit = two;
  other_commit.run.commit = "beef";
  EXPECT_NE(merge_error({{"a.json", one}, {"b.json", other_commit}}).find("their commits differ"), std::string::npos);
  EXPECT_EQ(merge_error({{"a.json", one}, {"b.json", one}}), "b.json and a.json are both shard 1/2");
  EXPECT_EQ(merge_error({{"a.json", one}}),
            "shard(s) 2/2 missing: a merge of part of a run would not be the run's result");
  Report of_three = shard_report(2, 3, {}, {});
  EXPECT_NE(merge_error({{"a.json", one}, {"c.json", of_three}}).find("shards of different splits overlap"),
            std::string::npos);
  Report overlapping = two;
  overlapping.cases.push_back(passed("alpha", 1));
  EXPECT_EQ(merge_error({{"a.json", one}, {"b.json", overlapping}}),
            "b.json and a.json both hold alpha:1@canonical: the shards overlap");
  Report unsharded = one;
  unsharded.run.shard.reset();
  EXPECT_NE(merge_error({{"u.json", unsharded}}).find("is not a shard"), std::string::npos);
}

Case failed(const std::string& family, std::int64_t id) {
  return {family, id, "canonical", "MISMATCH", Outcome::failed, "MISMATCH: x", "x", 0.1};
}

// A shard whose rows were edited to GREEN over its failed cases: summing its evidence would hide
// the failures ("3 failed", then RESULT: GREEN).
TEST(Merge, RefusesAShardWhoseRowsContradictItsCases) {
  Report two = shard_report(2, 2, {{"alpha", "canonical", {1, 0, 0, 0, 0}, Status::red, ""}}, {passed("alpha", 2)});
  Report honest = shard_report(1, 2, {{"alpha", "canonical", {0, 1, 0, 0, 0}, Status::red, ""}}, {failed("alpha", 1)});
  EXPECT_FALSE(merge_reports({{"one.json", honest}, {"two.json", two}}).green());

  Report status_edited = honest;
  status_edited.rows[0].status = Status::green;
  EXPECT_EQ(merge_error({{"one.json", status_edited}, {"two.json", two}}),
            "one.json is inconsistent: the row alpha canonical says GREEN but its evidence (failed 1, blocking 0, "
            "passed 0) says RED; the shard's report was edited or is damaged: run the shard again");
  Report evidence_edited = honest;
  evidence_edited.rows[0].evidence = {1, 0, 0, 0, 0};
  evidence_edited.rows[0].status = Status::green;
  EXPECT_EQ(merge_error({{"one.json", evidence_edited}, {"two.json", two}}),
            "one.json is inconsistent: the case alpha:1@canonical failed (MISMATCH) but no row of alpha is RED; the "
            "shard's report was edited or is damaged: run the shard again");
  Report other_row_red = evidence_edited;  // a RED row of the family, but not the one that failed
  other_row_red.rows.push_back({"alpha", "llvm19", {0, 1, 0, 0, 0}, Status::red, ""});
  EXPECT_NE(merge_error({{"one.json", other_row_red}, {"two.json", two}})
                .find("1 case(s) of alpha canonical failed but its row counts 0 failure(s)"),
            std::string::npos);
  Report row_removed = honest;
  row_removed.rows.clear();
  EXPECT_NE(merge_error({{"one.json", row_removed}, {"two.json", two}}).find("one.json is inconsistent"),
            std::string::npos);
}

TEST(Reports, AFailedCaseMakesAReportRedWhateverItsRows) {
  Report r = shard_report(1, 1, {{"alpha", "canonical", {1, 0, 0, 0, 0}, Status::red, ""}}, {failed("alpha", 1)});
  r.run.shard.reset();
  judge_rows(r);
  EXPECT_EQ(r.rows[0].status, Status::green);
  EXPECT_FALSE(r.green());
}

// Whatever bytes a case holds, every writer writes it: JSON and JUnit get valid UTF-8.
TEST(Reports, EveryWriterTakesBytesThatAreNotUtf8) {
  Report r = shard_report(1, 1, {{"alpha", "canonical", {0, 1, 0, 0, 0}, Status::red, ""}}, {failed("alpha", 1)});
  r.cases[0].detail = "stderr: \xff\xfe split \xc3";
  r.cases[0].message = "MISMATCH: \xe2\x82";
  r.run.repro = {"check_byte_identity", "--root", "/tmp/tree\xff"};
  nlohmann::json lane = {{"cwd", "/tmp/tree\xff"}, {"k\xff", 1}};
  make_text_safe(lane);
  EXPECT_EQ(lane["cwd"], "/tmp/tree\xEF\xBF\xBD");
  EXPECT_EQ(lane["k\xEF\xBF\xBD"], 1);
  nlohmann::json envelope = envelope_json(r);
  make_text_safe(envelope);
  EXPECT_NO_THROW(envelope.dump());
  EXPECT_EQ(envelope["summary"]["cases"][0]["detail"], "stderr: \xEF\xBF\xBD\xEF\xBF\xBD split \xEF\xBF\xBD");
  std::string xml = junit_xml(r);
  EXPECT_NE(xml.find("stderr: \xEF\xBF\xBD\xEF\xBF\xBD split \xEF\xBF\xBD"), std::string::npos) << xml;
  EXPECT_EQ(xml.find('\xff'), std::string::npos);
}

TEST(Reports, FailureMessageIsTheVerdictAndTheFirstDifference) {
  EXPECT_EQ(failure_message("MISMATCH", "first difference at line 7, column 3:\n  py:  \"a\"\n  cpp: \"b\"\n--- diff"),
            "MISMATCH: first difference at line 7, column 3: py:  \"a\" cpp: \"b\"");
  EXPECT_EQ(failure_message("PARSE_ERROR", "error: expected type\nmore"), "PARSE_ERROR: error: expected type");
  EXPECT_EQ(failure_message("CRASH", ""), "CRASH");
}

}  // namespace
}  // namespace kemit::report

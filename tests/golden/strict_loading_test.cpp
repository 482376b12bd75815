// Every way a shard file can be wrong is a clear error naming the file, the line, what is
// wrong and what to do. Fixtures: fixtures/bad/<case>/conv.json (made by make_fixtures.py).
#include <gtest/gtest.h>

#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"

namespace kemit::golden {
namespace {

struct BadShard {
  const char* name;
  const char* file;
  std::size_t line;
  const char* problem;  // a substring of the error's problem text
  const char* remedy;   // a substring of the error's remedy text
};

std::ostream& operator<<(std::ostream& os, const BadShard& c) { return os << c.name; }

class StrictLoading : public ::testing::TestWithParam<BadShard> {};

TEST_P(StrictLoading, RefusesWithFileLineAndRemedy) {
  const BadShard& c = GetParam();
  std::string path = std::string(KEMIT_GOLDEN_FIXTURES) + "/bad/" + c.name + "/" + c.file;
  try {
    load_shard(path);
    FAIL() << "loaded " << path << " without an error";
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(e.problem().find(c.problem), std::string::npos) << e.what();
    EXPECT_NE(e.remedy().find(c.remedy), std::string::npos) << e.what();
    std::string prefix = path + (c.line ? ":" + std::to_string(c.line) : std::string()) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

constexpr const char* kReRecord = "run_diff --record-golden";

INSTANTIATE_TEST_SUITE_P(
    BadFixtures, StrictLoading,
    ::testing::Values(
        BadShard{"duplicate_key_in_entry", "conv.json", 21, "duplicate key \"bytes\" in entries[0].canonical",
                 kReRecord},
        BadShard{"duplicate_key_in_header", "conv.json", 4, "duplicate key \"family\" in the top-level object",
                 "delete the stale copy"},
        BadShard{"duplicate_entry_key", "conv.json", 22, "duplicate key \"arch\" in entries[1]", kReRecord},
        BadShard{"conflict_markers", "conv.json", 23, "git conflict marker \"<<<<<<<\"", "run `golden resolve "},
        BadShard{"invalid_json", "conv.json", 24, "invalid JSON", "git checkout -- "},
        BadShard{"format_version_newer", "conv.json", 2, "format version 2 is not supported",
                 "written by a newer kemit"},
        BadShard{"format_version_text", "conv.json", 2, "format version \"1\" is not supported", kReRecord},
        BadShard{"family_not_a_name", "conv.json", 3, "family \"Conv-2D\" is not a family name ([a-z0-9_]+)",
                 kReRecord},
        BadShard{"family_not_file_name", "conv.json", 3, "family \"gemm\" does not match the file", kReRecord},
        BadShard{"file_name", "Conv.json", 0, "a shard file is named <family>.json", "rename the file"},
        BadShard{"sha_uppercase", "conv.json", 21, "entry id 1 canonical.sha256 must be a sha256: 64 lowercase hex",
                 kReRecord},
        BadShard{"sha_short", "conv.json", 23, "entry id 5 ll.llvm22.sha256 must be a sha256", kReRecord},
        BadShard{"counters_disagree", "conv.json", 6,
                 "counters disagree with the entries (sections.llvm19.emitted: stored 2, entries give 1; "
                 "sections.llvm19.refused: stored 1, entries give 2)",
                 "golden resolve"},
        BadShard{"unknown_entry_field", "conv.json", 22, "unknown field \"note\" in entry id 2", kReRecord},
        BadShard{"unknown_header_field", "conv.json", 5, "unknown field \"comment\" in the header", kReRecord},
        BadShard{"unknown_section_field", "conv.json", 21, "unknown field \"text\" in entry id 1 ll.llvm22",
                 kReRecord},
        BadShard{"entries_out_of_order", "conv.json", 23,
                 "entry id 2 follows id 5: entries must be in increasing id order", kReRecord},
        BadShard{"duplicate_id", "conv.json", 23, "duplicate entry id 2", kReRecord},
        BadShard{"missing_flavor", "conv.json", 23, "entry id 5 lacks flavor \"llvm22\"", kReRecord},
        BadShard{"negative_bytes", "conv.json", 21, "entry id 1 canonical.bytes must be a non-negative integer",
                 kReRecord},
        BadShard{"wrong_written_by", "conv.json", 4, "\"written_by\" must be \"run_diff --record-golden\"",
                 kReRecord},
        BadShard{"refusal_with_sections", "conv.json", 22,
                 "entry id 2 is a validation refusal and cannot also hold \"canonical\"", kReRecord}),
    [](const ::testing::TestParamInfo<BadShard>& info) { return std::string(info.param.name); });

TEST(StrictLoading, ValidFixtureLoads) {
  Shard shard = load_shard(std::string(KEMIT_GOLDEN_FIXTURES) + "/valid/conv.json");
  EXPECT_EQ(shard.family, "conv");
  ASSERT_EQ(shard.entries.size(), 3u);
  EXPECT_EQ(shard.entries[1].rejected, "vec must be one of 1, 2, 4, 8 (got 3)");
  EXPECT_EQ(shard.entries[0].flavors.at("llvm19").resources[ResourceKind::vgpr], 64u);
  EXPECT_FALSE(shard.entries[0].flavors.at("llvm19").resources[ResourceKind::agpr].has_value());
}

TEST(StrictLoading, EmptyFileIsInvalidJson) {
  try {
    parse_shard("", "golden/shards/conv.json");
    FAIL();
  } catch (const GoldenError& e) {
    EXPECT_NE(e.problem().find("invalid JSON"), std::string::npos) << e.what();
  }
}

TEST(StrictLoading, CountersCheckCanBeSkippedForResolve) {
  std::string path = std::string(KEMIT_GOLDEN_FIXTURES) + "/bad/counters_disagree/conv.json";
  LoadOptions options;
  options.check_counters = false;
  Shard shard = load_shard(path, options);
  EXPECT_EQ(shard.counters.sections.at("llvm19").emitted, 1u);  // recomputed, not the stored 2
}

}  // namespace
}  // namespace kemit::golden

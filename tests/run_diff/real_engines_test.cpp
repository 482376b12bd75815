// run_diff with the real engines: --explain on a temporary git repository (the Python engine
// copied in, blessed, then a lowering line changed), and resources through the LLVM lane.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "kemit/run_diff/run_diff.h"
#include "support.h"

namespace kemit::run_diff {
namespace {

namespace fs = std::filesystem;
using namespace testing_support;

// The first `count` configs of today's elementwise family, as their own config file.
void write_elementwise_configs(const fs::path& file, size_t count) {
  std::string text = read_text(fs::path(KEMIT_SOURCE_ROOT) / "parity/configs/elementwise.json");
  std::string out = "{\n  \"family\": \"elementwise\",\n  \"configs\": [\n";
  size_t at = 0;
  for (size_t i = 0; i < count; ++i) {
    at = text.find("{\"id\": ", at);
    ASSERT_NE(at, std::string::npos);
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end - at);
    if (line.back() == ',') line.pop_back();
    out += "    " + line + (i + 1 < count ? ",\n" : "\n");
    at = end;
  }
  write_text(file, out + "  ]\n}\n");
}

std::string git(const fs::path& repo) {
  return "git -C '" + repo.string() + "' -c user.name=kemit-test -c user.email=test@kemit.invalid ";
}

TEST(Explain, ShowsTheDiffSinceTheBlessingCommitAndTheCommitsInBetween) {
  CiVariable no_ci(nullptr);
  TempDir temp;
  fs::path repo = temp.path / "repo";
  fs::create_directories(repo / "py_engine");
  fs::copy(fs::path(KEMIT_SOURCE_ROOT) / "py_engine/kemit", repo / "py_engine/kemit", fs::copy_options::recursive);
  // The Python engine reads the IR tables beside py_engine/ at import.
  fs::copy(fs::path(KEMIT_SOURCE_ROOT) / "tables", repo / "tables", fs::copy_options::recursive);
  for (auto it = fs::recursive_directory_iterator(repo); it != fs::recursive_directory_iterator(); ++it)
    if (it->path().filename() == "__pycache__") {
      fs::remove_all(it->path());
      it.disable_recursion_pending();
    }
  write_elementwise_configs(repo / "parity/configs/elementwise.json", 2);
  std::string log;
  ASSERT_EQ(shell("git init -q '" + repo.string() + "' && " + git(repo) + "add -A && " + git(repo) +
                      "commit -q -m 'engine and configs'",
                  &log),
            0)
      << log;

  // Bless with the repository's Python engine on both sides (this test is about history, not parity).
  std::string python = std::string(KEMIT_TEST_PYTHON) + " -m kemit.emit --serve";
  std::vector<std::string> locate = {"--root", repo.string(), "--no-resources", "--jobs", "1", "--cpp-cmd",
                                     "env PYTHONPATH=" + (repo / "py_engine").string() + " " + python};
  auto args = [&](std::vector<std::string> mode) {
    mode.insert(mode.end(), locate.begin(), locate.end());
    return mode;
  };
  Result blessed = run_diff(args({"--record-golden"}));
  ASSERT_EQ(blessed.exit_code, 0) << blessed.all();
  ASSERT_EQ(shell(git(repo) + "add golden/shards && " + git(repo) + "commit -q -m 'bless elementwise'", &log), 0) << log;
  std::string bless_commit;
  ASSERT_EQ(shell(git(repo) + "rev-parse --short=12 HEAD", &bless_commit), 0);
  bless_commit = bless_commit.substr(0, 12);

  // Nothing changed yet: explain says so.
  Result unchanged = run_diff(args({"--explain", "elementwise:1"}));
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.all();
  EXPECT_NE(unchanged.out.find("nothing changed"), std::string::npos) << unchanged.out;

  // Change a lowering line, commit it: every flavor text of config 1 changes, the canonical IR not.
  replace_in_file(repo / "py_engine/kemit/llvm/lower.py", "[\"  ret void\", \"}\"]",
                  "[\"  ret void ; explained\", \"}\"]");
  ASSERT_EQ(shell(git(repo) + "commit -q -am 'lower: comment after ret'", &log), 0) << log;
  Result check = run_diff(args({"--check-golden"}));
  EXPECT_EQ(check.exit_code, 1) << check.all();
  EXPECT_NE(check.out.find("CHANGED elementwise #1"), std::string::npos) << check.out;

  Result r = run_diff(args({"--explain", "elementwise:1"}));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("was blessed by " + bless_commit.substr(0, 7)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bless elementwise"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("== canonical:"), std::string::npos) << r.out;
  for (const char* flavor : {"llvm16", "llvm19", "llvm22"})
    EXPECT_NE(r.out.find(std::string("== ") + flavor + ": blessed "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(matches the blessed entry)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-  ret void"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+  ret void ; explained"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower: comment after ret"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("engine and configs"), std::string::npos) << "only commits after the bless: " << r.out;

  // The worktree is gone, even from git's list.
  std::string worktrees;
  ASSERT_EQ(shell(git(repo) + "worktree list --porcelain", &worktrees), 0);
  EXPECT_EQ(worktrees.find("kemit_explain_"), std::string::npos) << worktrees;

  // An entry that is not blessed, or a config that does not exist, cannot be explained.
  EXPECT_EQ(run_diff(args({"--explain", "elementwise:9"})).exit_code, 2);
}

TEST(Resources, RecordedAndComparedWhenTheLaneIsBuilt) {
  // The set-up installs every LLVM and builds everything: a missing piece fails, never skips.
  ASSERT_TRUE(lane_built()) << "this build has no LLVM lane: install llvm-N-dev (ci/setup.sh) and re-run cmake";
  ASSERT_TRUE(fs::exists(std::string(KEMIT_BUILD_DIR) + "/cpp_engine/kemit_emit")) << "kemit_emit not built";
  CiVariable no_ci(nullptr);
  TempDir temp;
  write_elementwise_configs(temp.path / "configs/elementwise.json", 2);
  fs::create_directories(temp.path / "shards");  // an explicit --golden-dir must exist
  std::vector<std::string> base = {"--configs", (temp.path / "configs").string(), "--golden-dir",
                                   (temp.path / "shards").string(), "--flavor", "llvm19", "--jobs", "1"};
  // A flavor subset cannot add new configs (they need every flavor), so bless all flavors.
  std::vector<std::string> record = {"--record-golden", "--configs", (temp.path / "configs").string(), "--golden-dir",
                                     (temp.path / "shards").string(), "--jobs", "1"};
  Result blessed = run_diff(record);
  ASSERT_EQ(blessed.exit_code, 0) << blessed.all();
  fs::path shard = temp.path / "shards/elementwise.json";
  std::string text = read_text(shard);
  std::smatch match;
  std::regex vgpr("\"llvm19\": \\{\"sha256\": \"[0-9a-f]{64}\", \"bytes\": [0-9]+, \"resources\": \\{\"vgpr\": ([0-9]+),");
  ASSERT_NE(text.find("\"resources\""), std::string::npos) << "no LLVM toolchain to measure with:\n" << blessed.out;
  ASSERT_TRUE(std::regex_search(text, match, vgpr)) << text;

  auto with_base = [&](std::vector<std::string> more) {
    more.insert(more.begin(), base.begin(), base.end());
    return more;
  };
  Result ok = run_diff(with_base({"--check-golden"}));
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
  EXPECT_NE(ok.out.find("resources compared"), std::string::npos) << ok.out;

  // A stored figure that differs from what llc reports is RESOURCES_CHANGED (a spill shows so).
  std::string figure = match[0].str();
  std::string changed = std::regex_replace(figure, std::regex("\"vgpr\": [0-9]+,"),
                                           "\"vgpr\": " + std::to_string(std::stoi(match[1].str()) + 100) + ",");
  replace_in_file(shard, figure, changed);
  Result r = run_diff(with_base({"--check-golden"}));
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("RESOURCES_CHANGED elementwise #1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RESOURCES_CHANGED 1"), std::string::npos) << r.out;
  // Without the lane the stored figures are neither compared nor lost.
  EXPECT_EQ(run_diff(with_base({"--check-golden", "--no-resources"})).exit_code, 0);
}

// A bless with --no-resources stores no figures: a later check with the lane measures them but has
// nothing to compare them with, and says so instead of "resources compared".
TEST(Resources, ABlessWithoutResourcesIsNotClaimedCompared) {
  ASSERT_TRUE(lane_built()) << "this build has no LLVM lane: install llvm-N-dev (ci/setup.sh) and re-run cmake";
  CiVariable no_ci(nullptr);
  TempDir temp;
  write_elementwise_configs(temp.path / "configs/elementwise.json", 2);
  fs::create_directories(temp.path / "shards");  // an explicit --golden-dir must exist
  std::vector<std::string> where = {"--configs", (temp.path / "configs").string(), "--golden-dir",
                                    (temp.path / "shards").string(), "--jobs", "1"};
  auto with = [&](std::vector<std::string> mode) {
    mode.insert(mode.end(), where.begin(), where.end());
    return mode;
  };
  Result blessed = run_diff(with({"--record-golden", "--no-resources"}));
  ASSERT_EQ(blessed.exit_code, 0) << blessed.all();
  Result check = run_diff(with({"--check-golden", "--flavor", "llvm19"}));
  EXPECT_EQ(check.exit_code, 0) << check.all();
  EXPECT_TRUE(std::regex_search(check.last_line(),
                                std::regex("resources compared for 0 of 2 modules: 2 blessed without resources \\(fill "
                                           "them in: .*run_diff .*--record-golden --only elementwise\\)$")))
      << check.last_line();
  Result filled = run_diff(with({"--record-golden"}));
  ASSERT_EQ(filled.exit_code, 0) << filled.all();
  EXPECT_NE(filled.out.find("resources filled in 1, 2"), std::string::npos) << filled.out;
  Result again = run_diff(with({"--check-golden", "--flavor", "llvm19"}));
  EXPECT_NE(again.last_line().find(", resources compared (2 modules)"), std::string::npos) << again.last_line();
}

}  // namespace
}  // namespace kemit::run_diff

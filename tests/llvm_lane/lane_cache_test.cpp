// The result cache as the lane uses it: keys that change with every input, a
// poisoned entry detected and recomputed, LRU pruning, the same format as Python's.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "kemit/lane_support/result_cache.h"
#include "lane_cache.h"
#include "lane_test_support.h"

namespace kemit::lane::testing {
namespace {

using kemit::lane_support::ResultCache;
namespace fs = std::filesystem;

std::string fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(LaneCache, KeyChangesWhenAnyInputChanges) {
  const LaneModule base{"elementwise", 3, "llvm19", "gfx942", "define void @k() { ret void }\n", false};
  const LaneOptions options;
  const std::string version = "19.1.7";
  std::set<std::string> keys{lane_cache_key(base, options, version)};
  auto add = [&](const LaneModule& module, const LaneOptions& o, const std::string& v) {
    EXPECT_TRUE(keys.insert(lane_cache_key(module, o, v)).second) << "a changed input kept the key";
  };
  LaneModule m = base;
  m.text += " ";
  add(m, options, version);
  m = base, m.flavor = "llvm22";
  add(m, options, version);
  m = base, m.arch = "gfx90a";
  add(m, options, version);
  m = base, m.expect_no_spill = true;
  add(m, options, version);
  m = base, m.config = 4;  // parse diagnostics name the config
  add(m, options, version);
  LaneOptions o = options;
  o.run_codegen = false;
  add(base, o, version);
  o = options, o.codegen = Codegen::LLC;
  add(base, o, version);
  add(base, options, "19.1.8");
  EXPECT_EQ(lane_cache_key(base, options, version), lane_cache_key(base, options, version)) << "not deterministic";
  o = options, o.jobs = 7, o.cache_dir = "/elsewhere", o.progress_label = "x";  // do not change the answer
  EXPECT_EQ(lane_cache_key(base, o, version), lane_cache_key(base, options, version));
}

TEST(LaneCache, KeyIsPinned) {
  // The key of a list of parts is sha256 over the length-prefixed parts: entries of an earlier
  // build stay readable.
  EXPECT_EQ(ResultCache::key({"llvm-lane 2", "text\n\twith tabs", ""}),
            "b18b8fb5fa70776bc5bb0a1c3dd2a472277e9f6ee62b2d9d42bc3baba21dbbd1");
  EXPECT_EQ(ResultCache::key({}), "4a510f3a3490a34f0c9d6a9f266b19b16d1784839c51c76fb368b85152fa65ff");
}

TEST(LaneCache, BrokenEntriesAreDeletedCountedAndMissed) {
  ResultCache cache(fresh_dir("kemit_cache_units"));
  const std::string key = ResultCache::key({"a"}), other = ResultCache::key({"b"});
  EXPECT_FALSE(cache.get(key));
  cache.put(key, "value one");
  ASSERT_EQ(cache.get(key).value_or(""), "value one");
  const std::string path = cache.dir() + "/" + key.substr(0, 2) + "/" + key;
  std::string entry = slurp(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << entry.substr(0, entry.size() - 3) << "TWO";  // poisoned
  EXPECT_FALSE(cache.get(key));
  EXPECT_FALSE(fs::exists(path)) << "a poisoned entry must be deleted";
  cache.put(other, "x");  // an entry copied under another key's name
  fs::copy_file(cache.dir() + "/" + other.substr(0, 2) + "/" + other, path);
  EXPECT_FALSE(cache.get(key));
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.corrupt, 2u);
  ASSERT_EQ(stats.problems.size(), 2u);
  EXPECT_NE(stats.problems[0].find("does not match its sha256"), std::string::npos) << stats.problems[0];
  EXPECT_NE(stats.problems[1].find("names another key"), std::string::npos) << stats.problems[1];
  EXPECT_NE(cache.summary().find("2 corrupt entries recomputed"), std::string::npos) << cache.summary();
  fs::remove_all(cache.dir());
}

TEST(LaneCache, PruneDropsTheLeastRecentlyUsedPastTheCap) {
  ResultCache cache(fresh_dir("kemit_cache_prune"), /*max_bytes=*/3000);
  std::vector<std::string> keys;
  for (int i = 0; i < 6; ++i) {
    keys.push_back(ResultCache::key({std::to_string(i)}));
    cache.put(keys.back(), std::string(900, 'x'));
    std::string path = cache.dir() + "/" + keys.back().substr(0, 2) + "/" + keys.back();
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(10 - i));  // 0 is oldest
  }
  cache.prune();
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(cache.get(keys[i]).has_value(), i >= 4) << "entry " << i;  // about 1 KB each, cap 2.7 KB after pruning
  fs::remove_all(cache.dir());
}

TEST(LaneCache, PoisonedLaneEntryIsRecomputedAndReported) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions options = test_options();
  options.cache_dir = fresh_dir("kemit_lane_cache");
  const LaneModule module = module_from("lds_reverse.ll", "llvm19", "gfx942");
  LaneRunStats cold, warm, poisoned, again;
  LaneResult truth = check_modules({module}, options, &cold).at(0);
  ASSERT_EQ(truth.verdict, Verdict::LLVM_OK) << truth.detail;
  EXPECT_EQ(cold.cache_misses, 1u);
  EXPECT_EQ(check_modules({module}, options, &warm).at(0).kernels.at(0).vgpr_count, truth.kernels.at(0).vgpr_count);
  EXPECT_EQ(warm.cache_hits, 1u);
  // Plant a wrong figure in the entry's value and leave its checksum as it was.
  fs::path entry;
  for (const auto& file : fs::recursive_directory_iterator(options.cache_dir))
    if (file.is_regular_file()) entry = file.path();
  std::string text = slurp(entry.string());
  size_t at = text.find("\"vgpr_count\":");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 13, "\"vgpr_count\":9");
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << text;
  LaneResult recomputed = check_modules({module}, options, &poisoned).at(0);
  EXPECT_EQ(recomputed.kernels.at(0).vgpr_count, truth.kernels.at(0).vgpr_count) << "a poisoned value was trusted";
  EXPECT_EQ(poisoned.cache_corrupt, 1u);
  EXPECT_EQ(poisoned.cache_hits, 0u);
  ASSERT_EQ(poisoned.cache_problems.size(), 1u);
  EXPECT_NE(poisoned.cache_problems[0].find(entry.string()), std::string::npos) << poisoned.cache_problems[0];
  check_modules({module}, options, &again);
  EXPECT_EQ(again.cache_hits, 1u) << "the recomputed value is stored again";
  fs::remove_all(options.cache_dir);
}

TEST(LaneCache, CrashesAreNeverCached) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions options = test_options();
  options.cache_dir = fresh_dir("kemit_lane_cache_crash");
  const LaneModule module = module_from("broken_with_debug_info.ll", "llvm19", "gfx942");
  LaneRunStats first, second;
  EXPECT_EQ(check_modules({module}, options, &first).at(0).verdict, Verdict::CRASH);
  EXPECT_EQ(check_modules({module}, options, &second).at(0).verdict, Verdict::CRASH);
  EXPECT_EQ(second.cache_hits, 0u) << "a crash may be a timeout on a busy machine: never stored";
  fs::remove_all(options.cache_dir);
}

}  // namespace
}  // namespace kemit::lane::testing

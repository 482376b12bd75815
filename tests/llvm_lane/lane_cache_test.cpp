// The result cache as the lane uses it: keys that change with every input, a
// poisoned entry detected and recomputed, LRU pruning, the same format as Python's.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include "kemit/driver/sha256.h"
#include "kemit/lane/proofs.h"
#include "kemit/lane_support/result_cache.h"
#include "checker_phase.h"
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

// A lane entry's value is a JSON object; the checkers' remembered versions are plain strings.
bool holds_a_lane_answer(const fs::path& entry) {
  std::string text = slurp(entry.string());
  size_t header = 0;
  for (int line = 0; line < 3 && header != std::string::npos; ++line) header = text.find('\n', header) + 1;
  return header < text.size() && text[header] == '{';
}

// The cache's one module answer (<dir>/<2 hex>/<64 hex>), never its marker or a checker's version.
fs::path only_entry(const std::string& dir) {
  std::vector<fs::path> entries;
  for (const auto& file : fs::recursive_directory_iterator(dir))
    if (file.is_regular_file() && file.path().filename().string().size() == 64 && holds_a_lane_answer(file.path()))
      entries.push_back(file.path());
  EXPECT_EQ(entries.size(), 1u) << "expected one entry in " << dir;
  return entries.empty() ? fs::path() : entries.front();
}

// Rewrites an entry's value and its checksum, as a forger who knows the format would.
void forge_entry(const fs::path& entry, const std::function<void(nlohmann::json&)>& edit) {
  std::string text = slurp(entry.string());
  size_t header = 0;
  for (int line = 0; line < 3; ++line) header = text.find('\n', header) + 1;
  nlohmann::json value = nlohmann::json::parse(text.substr(header));
  edit(value);
  std::string forged = value.dump();
  std::string key_line = text.substr(text.find('\n') + 1);
  key_line = key_line.substr(0, key_line.find('\n'));
  std::ofstream(entry, std::ios::binary | std::ios::trunc)
      << "kemit-result-cache 1\n" << key_line << "\nsha256 " << driver::sha256_hex(forged) << "\n" << forged;
}

// The lane's options over a fresh cache folder named `name`.
LaneOptions cached_options(const std::string& name) {
  LaneOptions options = test_options();
  options.cache_dir = fresh_dir(name);
  return options;
}

// A binary of the given bytes, standing in for a checker or llc (its digest is part of the key).
std::string fake_binary(const std::string& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

VerdictInputs key_inputs(const std::string& dir) {
  VerdictInputs in;
  in.module = LaneModule{"elementwise", 3, "llvm19", "gfx942", "define void @k() { ret void }\n", false};
  in.flavor = driver::FlavorFacts{"llvm19", 19, "e-p:64:64", {"gfx90a", "gfx942"}};
  in.toolchain = Toolchain{fake_binary(dir, "checker", "checker one"), fake_binary(dir, "llc", "llc one")};
  in.llvm_version = "19.1.7";
  return in;
}

// Every field of VerdictInputs, changed alone, gives a new key (a hit would serve an answer
// computed from other inputs); the settings that decide only speed are not in it at all.
TEST(LaneCache, KeyChangesWhenAnyInputChanges) {
  const std::string dir = fresh_dir("kemit_key_inputs");
  const VerdictInputs base = key_inputs(dir);
  std::set<std::string> keys{lane_cache_key(base)};
  auto changed = [&](const char* what, auto edit) {
    VerdictInputs in = base;
    edit(in);
    EXPECT_TRUE(keys.insert(lane_cache_key(in)).second) << "changing " << what << " kept the key";
  };
  changed("module.family", [](VerdictInputs& in) { in.module.family = "elementwise2"; });
  changed("module.config", [](VerdictInputs& in) { in.module.config = 4; });  // parse diagnostics name it
  changed("module.flavor", [](VerdictInputs& in) { in.module.flavor = "llvm22"; });
  changed("module.arch", [](VerdictInputs& in) { in.module.arch = "gfx90a"; });
  changed("module.text", [](VerdictInputs& in) { in.module.text += " "; });
  changed("module.expect_no_spill", [](VerdictInputs& in) { in.module.expect_no_spill = true; });
  changed("flavor.name", [](VerdictInputs& in) { in.flavor.name = "llvm19x"; });
  changed("flavor.major", [](VerdictInputs& in) { in.flavor.major = 22; });
  changed("flavor.datalayout", [](VerdictInputs& in) { in.flavor.datalayout += "-n32"; });
  changed("flavor.processors (gfx90a dropped)", [](VerdictInputs& in) { in.flavor.processors = {"gfx942"}; });
  changed("flavor.processors (order)", [](VerdictInputs& in) { in.flavor.processors = {"gfx942", "gfx90a"}; });
  changed("run_codegen", [](VerdictInputs& in) { in.run_codegen = false; });
  changed("codegen", [](VerdictInputs& in) { in.codegen = Codegen::LLC; });
  changed("the checker's bytes", [&](VerdictInputs& in) {
    in.toolchain.checker = fake_binary(dir, "checker_rebuilt", "checker two");
  });
  changed("llvm_version", [](VerdictInputs& in) { in.llvm_version = "19.1.8"; });
  // llc's bytes decide the answer only where llc compiles.
  VerdictInputs llc = base;
  llc.codegen = Codegen::LLC;
  const std::string llc_key = lane_cache_key(llc);
  llc.toolchain.llc = fake_binary(dir, "llc_other", "llc two");
  EXPECT_NE(lane_cache_key(llc), llc_key) << "a changed llc kept the key of --codegen llc";
  VerdictInputs inprocess = base;
  inprocess.toolchain.llc = llc.toolchain.llc;
  EXPECT_EQ(lane_cache_key(inprocess), lane_cache_key(base)) << "in-process codegen never runs llc";
  EXPECT_EQ(lane_cache_key(base), lane_cache_key(key_inputs(dir))) << "not deterministic";
  fs::remove_all(dir);
}

// The same for a proof answer: every part of what the prover is asked, changed alone, gives a new
// key, and the config's name (no part of the request) changes nothing.
TEST(LaneCache, ProofKeyChangesWhenAnyPartOfTheRequestChanges) {
  const ProofRequest base{"alpha", 1, "gfx942", "canonical text", "; kemit launch plan 2\n",
                          {{"llvm16", "text 16"}, {"llvm19", "text 19"}}};
  driver::ArchFacts arch;
  arch.max_block_lanes = 1024;
  arch.max_grid_lanes = 1LL << 32;
  arch.lds_bytes = 65536;
  arch.wave_size = 64;
  std::set<std::string> keys{proof_cache_key("prover", base, arch)};
  auto changed = [&](const char* what, auto edit) {
    ProofRequest request = base;
    driver::ArchFacts facts = arch;
    std::string digest = "prover";
    edit(request, facts, digest);
    EXPECT_TRUE(keys.insert(proof_cache_key(digest, request, facts)).second) << "changing " << what << " kept the key";
  };
  changed("the prover", [](ProofRequest&, driver::ArchFacts&, std::string& d) { d = "prover rebuilt"; });
  changed("canonical", [](ProofRequest& r, driver::ArchFacts&, std::string&) { r.canonical += " "; });
  changed("plan", [](ProofRequest& r, driver::ArchFacts&, std::string&) { r.plan += " "; });
  changed("a flavor's text", [](ProofRequest& r, driver::ArchFacts&, std::string&) { r.llvm["llvm19"] += " "; });
  changed("a flavor's name", [](ProofRequest& r, driver::ArchFacts&, std::string&) {
    r.llvm["llvm22"] = r.llvm["llvm19"];
    r.llvm.erase("llvm19");
  });
  changed("a flavor dropped", [](ProofRequest& r, driver::ArchFacts&, std::string&) { r.llvm.erase("llvm16"); });
  changed("max_block_lanes", [](ProofRequest&, driver::ArchFacts& a, std::string&) { a.max_block_lanes = 512; });
  changed("max_grid_lanes", [](ProofRequest&, driver::ArchFacts& a, std::string&) { a.max_grid_lanes = 1 << 30; });
  changed("lds_bytes", [](ProofRequest&, driver::ArchFacts& a, std::string&) { a.lds_bytes = 32768; });
  changed("wave_size", [](ProofRequest&, driver::ArchFacts& a, std::string&) { a.wave_size = 32; });
  changed("texts moved between fields", [](ProofRequest& r, driver::ArchFacts&, std::string&) {
    std::swap(r.canonical, r.plan);
  });
  ProofRequest renamed = base;
  renamed.family = "beta";
  renamed.config = 7;
  EXPECT_EQ(proof_cache_key("prover", renamed, arch), proof_cache_key("prover", base, arch));
}

// A checker rebuilt in place (same path, other bytes) is a new key: no version bump by hand.
TEST(LaneCache, ARebuiltCheckerAtTheSamePathIsANewKey) {
  const std::string dir = fresh_dir("kemit_key_rebuilt");
  VerdictInputs in = key_inputs(dir);
  const std::string before = lane_cache_key(in);
  fake_binary(dir, "checker", "checker one, rebuilt with a fix");
  EXPECT_NE(lane_cache_key(in), before);
  fs::remove_all(dir);
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
  LaneOptions options = cached_options("kemit_lane_cache");
  const LaneModule module = module_from("lds_reverse.ll", "llvm19", "gfx942");
  LaneRunStats cold, warm, poisoned, again;
  LaneResult truth = check_modules({module}, options, &cold).at(0);
  ASSERT_EQ(truth.verdict, Verdict::LLVM_OK) << truth.detail;
  EXPECT_EQ(cold.cache_misses, 1u);
  EXPECT_EQ(check_modules({module}, options, &warm).at(0).kernels.at(0).vgpr_count, truth.kernels.at(0).vgpr_count);
  EXPECT_EQ(warm.cache_hits, 1u);
  // Plant a wrong figure in the entry's value and leave its checksum as it was.
  fs::path entry = only_entry(options.cache_dir);
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
  LaneOptions options = cached_options("kemit_lane_cache_crash");
  const LaneModule module = module_from("broken_with_debug_info.ll", "llvm19", "gfx942");
  LaneRunStats first, second;
  EXPECT_EQ(check_modules({module}, options, &first).at(0).verdict, Verdict::CRASH);
  EXPECT_EQ(check_modules({module}, options, &second).at(0).verdict, Verdict::CRASH);
  EXPECT_EQ(second.cache_hits, 0u) << "a crash may be a timeout on a busy machine: never stored";
  fs::remove_all(options.cache_dir);
}

// A prune walks the folder only when this process wrote an entry since it last walked it: a warm
// run (nothing written) and a second phase of the same process leave a stale temporary in place;
// the prune after the next write removes it.
TEST(ResultCacheFolder, PruneWalksOnlyAfterNewEntries) {
  const std::string dir = fresh_dir("kemit_cache_prune_walks");
  ResultCache cache(dir);
  cache.put(ResultCache::key({"first"}), "one");
  cache.prune();  // walks: an entry was written
  const std::string key = ResultCache::key({"second"});
  const std::string stale = dir + "/" + key.substr(0, 2) + "/" + key + ".tmp.1.2.3";
  fs::create_directories(fs::path(stale).parent_path());
  std::ofstream(stale) << "left by a killed run";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  ResultCache second_phase(dir);
  second_phase.prune();
  EXPECT_TRUE(fs::exists(stale)) << "nothing was written since the last walk: no walk";
  second_phase.put(key, "two");
  second_phase.prune();
  EXPECT_FALSE(fs::exists(stale)) << "a write since the last walk: the stale temporary is deleted";
  fs::remove_all(dir);
}

// The cache deletes and prunes only the files it named: another program's files in its folder
// survive any cap, and temporaries are removed only once a killed run left them stale.
TEST(ResultCacheFolder, PruneNeverTouchesAFileTheCacheDidNotName) {
  const std::string dir = fresh_dir("kemit_cache_owned");
  ResultCache cache(dir, /*max_bytes=*/1000);
  EXPECT_TRUE(fs::exists(dir + "/CACHEDIR.TAG")) << "a new cache marks its folder";
  std::vector<std::string> foreign = {dir + "/report.pdf", dir + "/other/db.sqlite", dir + "/ab/notes.txt",
                                      dir + "/ab/" + std::string(64, 'c'),  // an entry name in the wrong folder
                                      dir + "/zz/" + std::string(64, 'z')};
  for (const auto& path : foreign) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << std::string(4000, 'p');
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(100));  // the oldest of all
  }
  const std::string key = ResultCache::key({"k"});
  const std::string stale = dir + "/" + key.substr(0, 2) + "/" + key + ".tmp.1.2.3";
  const std::string fresh = dir + "/" + key.substr(0, 2) + "/" + key + ".tmp.4.5.6";
  const std::string python = dir + "/" + key.substr(0, 2) + "/" + key + ".tmp.7.8";  // result_cache.py's name
  cache.put(key, std::string(5000, 'x'));  // past the cap alone
  std::ofstream(stale) << "left by a killed run";
  std::ofstream(fresh) << "being written";
  std::ofstream(python) << "left by a killed Python lane";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(python, fs::file_time_type::clock::now() - std::chrono::hours(2));
  cache.prune();
  for (const auto& path : foreign) EXPECT_TRUE(fs::exists(path)) << path << " was deleted by the cache";
  EXPECT_FALSE(cache.get(key)) << "the cache's own entry past the cap is pruned";
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(python));
  EXPECT_TRUE(fs::exists(fresh)) << "a concurrent writer's temporary";
  EXPECT_TRUE(fs::exists(dir + "/CACHEDIR.TAG"));
  fs::remove_all(dir);
}

TEST(ResultCacheFolder, AFolderWithOtherFilesIsRefusedUnlessMarked) {
  const std::string dir = fresh_dir("kemit_cache_refused");
  fs::create_directories(dir + "/docs");
  std::ofstream(dir + "/thesis.pdf") << "%PDF-1.7";
  try {
    ResultCache cache(dir);
    ADD_FAILURE() << "a folder of someone else's files was taken as a cache";
  } catch (const lane_support::CacheError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find(dir), std::string::npos) << message;
    EXPECT_NE(message.find("is not a kemit result cache"), std::string::npos) << message;
    EXPECT_NE(message.find("--no-cache"), std::string::npos) << message;
  }
  EXPECT_THROW(lane_support::check_cache_settings(dir), lane_support::CacheError);
  EXPECT_FALSE(fs::exists(dir + "/CACHEDIR.TAG")) << "a refused folder is left as it was";
  // Another program's CACHEDIR.TAG does not make the folder a kemit cache.
  std::ofstream(dir + "/CACHEDIR.TAG") << "Signature: 8a477f597d28d172789f06886806bc55\n# cargo\n";
  EXPECT_THROW(ResultCache{dir}, lane_support::CacheError);
  fs::remove_all(dir);
  // An empty folder, and a folder of the cache's own entries (written before the marker), are taken and marked.
  fs::create_directories(dir);
  { ResultCache cache(dir); cache.put(ResultCache::key({"old"}), "v"); }
  fs::remove(dir + "/CACHEDIR.TAG");
  { ResultCache cache(dir); EXPECT_EQ(cache.get(ResultCache::key({"old"})).value_or(""), "v"); }
  EXPECT_TRUE(fs::exists(dir + "/CACHEDIR.TAG"));
  // Once marked, files put there later are the user's: ignored, never refused, never deleted.
  std::ofstream(dir + "/later.pdf") << "%PDF";
  EXPECT_NO_THROW(ResultCache{dir});
  EXPECT_TRUE(fs::exists(dir + "/later.pdf"));
  fs::remove_all(dir);
}

TEST(ResultCacheFolder, TheCapIsParsedSafely) {
  auto cap = [](const char* value) {
    setenv("KEMIT_CACHE_MAX_MB", value, 1);
    return ResultCache::default_max_bytes();
  };
  EXPECT_EQ(cap("1"), std::uint64_t(1) << 20);
  EXPECT_EQ(cap("2048"), std::uint64_t(2048) << 20);
  EXPECT_EQ(cap("99999999999999999999999"), std::numeric_limits<std::uint64_t>::max()) << "a huge cap wrapped";
  EXPECT_EQ(cap("17592186044416"), std::numeric_limits<std::uint64_t>::max()) << "2^44 MiB << 20 wraps to 0";
  for (const char* garbage : {"abc", "-5", "0", "1.5", "10MB", " 7"}) {
    setenv("KEMIT_CACHE_MAX_MB", garbage, 1);
    try {
      ResultCache::default_max_bytes();
      ADD_FAILURE() << "KEMIT_CACHE_MAX_MB='" << garbage << "' was taken";
    } catch (const lane_support::CacheError& error) {
      EXPECT_NE(std::string(error.what()).find("KEMIT_CACHE_MAX_MB"), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(cap(""), std::uint64_t(1024) << 20) << "set but empty is the default, as unset";
  unsetenv("KEMIT_CACHE_MAX_MB");
  EXPECT_EQ(ResultCache::default_max_bytes(), std::uint64_t(1024) << 20);
}

TEST(ResultCacheFolder, ASymlinkOrOversizedEntryIsNotRead) {
  const std::string dir = fresh_dir("kemit_cache_links");
  ResultCache cache(dir);
  const std::string key = ResultCache::key({"linked"});
  cache.put(key, "value");
  const std::string path = dir + "/" + key.substr(0, 2) + "/" + key;
  const std::string target = dir + "/elsewhere.txt";
  fs::rename(path, target);
  fs::create_symlink(target, path);
  EXPECT_FALSE(cache.get(key));
  EXPECT_TRUE(fs::exists(target)) << "the link's target is not the cache's to delete";
  EXPECT_FALSE(fs::exists(fs::symlink_status(path))) << "the link (the cache's own name) is removed";
  EXPECT_NE(cache.stats().problems.at(0).find("symlink"), std::string::npos) << cache.stats().problems.at(0);
  fs::remove_all(dir);
}

// The wrong GREEN of a cache whose key left out the hello's facts: an engine whose hello drops
// gfx90a from llvm19's allow-list is RED (CODEGEN_ERROR) uncached, and must stay RED when a clean
// engine filled the cache; the reverse (a clean engine after the broken one) must stay GREEN.
TEST(LaneCache, TheHellosAllowListIsPartOfTheKey) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions clean = cached_options("kemit_lane_cache_hello");
  LaneOptions dropped = clean;
  for (auto& flavor : dropped.flavors)
    if (flavor.name == "llvm19") flavor.processors.erase(std::remove(flavor.processors.begin(), flavor.processors.end(), "gfx90a"), flavor.processors.end());
  const LaneModule module = module_from("lds_reverse.ll", "llvm19", "gfx90a");
  LaneOptions uncached = dropped;
  uncached.cache_dir = "";
  ASSERT_EQ(check_one(module, uncached).verdict, Verdict::CODEGEN_ERROR) << "the fixture must be RED uncached";
  ASSERT_EQ(check_one(module, clean).verdict, Verdict::LLVM_OK);  // fills the cache
  LaneRunStats stats;
  EXPECT_EQ(check_modules({module}, dropped, &stats).at(0).verdict, Verdict::CODEGEN_ERROR)
      << "a cache a clean engine filled turned a RED into a GREEN";
  EXPECT_EQ(stats.cache_hits, 0u);
  EXPECT_EQ(check_one(module, clean).verdict, Verdict::LLVM_OK) << "and the reverse: a wrong RED";
  fs::remove_all(clean.cache_dir);
}

// A value with a good checksum that no run of the lane produces is not believed: deleted,
// recomputed, reported (a figure above the shard limit, a negative figure, no kernel at all).
TEST(LaneCache, ForgedValuesWithGoodChecksumsAreRecomputed) {
  REQUIRE_FLAVOR("llvm19");
  const LaneModule module = module_from("lds_reverse.ll", "llvm19", "gfx942");
  struct Forgery {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    const char* why;
  };
  const std::vector<Forgery> forgeries = {
      {"a figure above the input limits", [](nlohmann::json& v) { v["kernels"][0]["vgpr_count"] = std::uint64_t(1) << 60; },
       "outside 0..9007199254740991"},
      {"a negative figure", [](nlohmann::json& v) { v["kernels"][0]["vgpr_spill_count"] = -7; }, "outside 0.."},
      {"no kernel", [](nlohmann::json& v) { v["kernels"] = nlohmann::json::array(); }, "LLVM_OK with no kernel"},
      {"a verdict the lane never stores", [](nlohmann::json& v) { v["verdict"] = "CRASH"; }, "never stored"},
      {"a figure that is not an integer", [](nlohmann::json& v) { v["kernels"][0]["group_segment_fixed_size"] = 2.5; }, "not an integer"},
  };
  for (const auto& forgery : forgeries) {
    SCOPED_TRACE(forgery.name);
    LaneOptions options = cached_options("kemit_lane_cache_forged");
    LaneResult truth = check_one(module, options);
    ASSERT_EQ(truth.verdict, Verdict::LLVM_OK) << truth.detail;
    fs::path entry = only_entry(options.cache_dir);
    forge_entry(entry, forgery.edit);
    LaneRunStats stats;
    LaneResult again = check_modules({module}, options, &stats).at(0);
    EXPECT_EQ(encode_lane_result(again), encode_lane_result(truth)) << "a forged value was believed";
    EXPECT_EQ(stats.cache_corrupt, 1u);
    ASSERT_EQ(stats.cache_problems.size(), 1u);
    EXPECT_NE(stats.cache_problems[0].find(forgery.why), std::string::npos) << stats.cache_problems[0];
    EXPECT_NE(stats.cache_problems[0].find("deleted and recomputed"), std::string::npos) << stats.cache_problems[0];
    fs::remove_all(options.cache_dir);
  }
}

// A FIFO where an entry should be is refused at once (no reader waits for a writer), deleted
// (it has the cache's own name) and recomputed.
TEST(LaneCache, AFifoEntryDoesNotHang) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions options = cached_options("kemit_lane_cache_fifo");
  const LaneModule module = module_from("lds_reverse.ll", "llvm19", "gfx942");
  LaneResult truth = check_one(module, options);
  fs::path entry = only_entry(options.cache_dir);
  fs::remove(entry);
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  LaneRunStats stats;
  EXPECT_EQ(encode_lane_result(check_modules({module}, options, &stats).at(0)), encode_lane_result(truth));
  EXPECT_EQ(stats.cache_corrupt, 1u);
  ASSERT_EQ(stats.cache_problems.size(), 1u);
  EXPECT_NE(stats.cache_problems[0].find("FIFO"), std::string::npos) << stats.cache_problems[0];
  EXPECT_TRUE(fs::is_regular_file(entry)) << "the recomputed value replaces the FIFO";
  fs::remove_all(options.cache_dir);
}

// A stand-in checker that announces `version` and appends a line to `log` each time it starts.
std::string logging_checker(const std::string& dir, const std::string& version, const std::string& log) {
  std::string path = fake_binary(dir, "kemit_llcheck19",
                                 "#!/bin/sh\necho started >> '" + log + "'\nprintf 'READY\\t" + version +
                                     "\\n'\nwhile read line; do :; done\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

size_t starts(const std::string& log) {
  std::string text = slurp(log);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

const std::chrono::milliseconds kVersionTimeout{10000};

// A warm run starts no checker for its version: the first run asks and stores it under the
// binary's digest, the second reads it; without a cache every run asks.
TEST(CheckerVersions, AWarmRunStartsNoChecker) {
  std::string dir = fresh_dir("kemit_checker_version_warm");
  std::string log = dir + "/starts.log";
  std::map<int, Toolchain> toolchains = {{19, Toolchain{logging_checker(dir, "19.1.7", log), ""}}};
  std::string cache = dir + "/cache";
  EXPECT_EQ(checker_versions(toolchains, {19}, kVersionTimeout, cache).at(19), "19.1.7");
  EXPECT_EQ(checker_versions(toolchains, {19}, kVersionTimeout, cache).at(19), "19.1.7");
  EXPECT_EQ(starts(log), 1u) << "the warm run started the checker again";
  checker_versions(toolchains, {19}, kVersionTimeout, "");
  EXPECT_EQ(starts(log), 2u) << "a run without a cache must ask the checker";
  fs::remove_all(dir);
}

// A rebuilt checker at the same path (other bytes, another version) is asked again, never
// served the version its predecessor printed.
TEST(CheckerVersions, ARebuiltCheckerIsAskedAgain) {
  std::string dir = fresh_dir("kemit_checker_version_rebuilt");
  std::string log = dir + "/starts.log";
  std::string cache = dir + "/cache";
  std::map<int, Toolchain> toolchains = {{19, Toolchain{logging_checker(dir, "19.1.7", log), ""}}};
  EXPECT_EQ(checker_versions(toolchains, {19}, kVersionTimeout, cache).at(19), "19.1.7");
  logging_checker(dir, "19.1.8", log);
  EXPECT_EQ(checker_versions(toolchains, {19}, kVersionTimeout, cache).at(19), "19.1.8");
  EXPECT_EQ(starts(log), 2u);
  fs::remove_all(dir);
}

// A stored value that is not a version of the checker's major (planted with a good checksum)
// is rejected, the checker asked, and the right version stored in its place.
TEST(CheckerVersions, APlantedVersionIsRejectedAndAskedAgain) {
  std::string dir = fresh_dir("kemit_checker_version_planted");
  std::string log = dir + "/starts.log";
  std::string cache = dir + "/cache";
  std::string checker = logging_checker(dir, "19.1.7", log);
  std::map<int, Toolchain> toolchains = {{19, Toolchain{checker, ""}}};
  for (const std::string planted : {"16.0.6", "19.1.7; rm -rf", ""}) {
    SCOPED_TRACE(planted);
    ResultCache(cache).put(checker_version_key(checker, 19), planted);
    EXPECT_EQ(checker_versions(toolchains, {19}, kVersionTimeout, cache).at(19), "19.1.7");
    EXPECT_EQ(ResultCache(cache).get(checker_version_key(checker, 19)).value_or(""), "19.1.7");
  }
  EXPECT_EQ(starts(log), 3u);
  fs::remove_all(dir);
}

// A checker that is missing is no version and no key (the lane reports TOOLCHAIN_MISSING).
TEST(CheckerVersions, AMissingCheckerHasNoVersion) {
  std::string dir = fresh_dir("kemit_checker_version_missing");
  std::map<int, Toolchain> toolchains = {{19, Toolchain{dir + "/kemit_llcheck19", ""}}};
  EXPECT_EQ(checker_version_key(dir + "/kemit_llcheck19", 19), "");
  EXPECT_TRUE(checker_versions(toolchains, {19}, kVersionTimeout, dir + "/cache").empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kemit::lane::testing

#include "commands.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "kemit/driver/selection.h"
#include "kemit/golden/error.h"
#include "kemit/golden/merge.h"
#include "kemit/golden/roofline.h"
#include "kemit/golden/shard_io.h"
#include "kemit/golden/summary.h"

namespace kemit::golden::cli {

namespace {

// A folder that does not exist is a usage error, never "0 shards, 0 bad": a typo must not pass.
bool require_folder(const std::string& shard_dir, const char* command) {
  std::error_code ec;
  if (std::filesystem::is_directory(shard_dir, ec)) return true;
  std::cerr << fmt::format("golden {}: {}: no such folder of shards (pass --dir DIR or --root DIR)\n", command,
                           shard_dir);
  return false;
}

// The roofline of every shard's family that `select` names (all when empty): an unknown family or
// id is a usage error (driver::UsageError), as in every tool that takes FAMILY[:ID] words.
std::vector<FamilyRoofline> summary_rooflines(const SummaryOptions& o) {
  driver::Selection selection = driver::parse_selection(o.select, "");
  const auto intents = tree_intents(o.root);
  std::vector<FamilyRoofline> out;
  std::vector<driver::ConfigKey> present;
  for (const auto& path : list_shard_files(o.shard_dir)) {
    Shard shard = load_shard(path);
    FamilyRoofline family = tree_family_roofline(o.configs_dir, shard, intents);
    for (const auto& e : shard.entries) present.push_back({family.family, static_cast<int>(e.id), ""});
    if (!selection.ids.empty() && !selection.ids.count(family.family)) continue;
    auto unselected = [&](const ConfigRoofline& c) {
      return !driver::is_selected(selection, {family.family, static_cast<int>(c.id), ""});
    };
    family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(), unselected), family.configs.end());
    out.push_back(std::move(family));
  }
  driver::require_named(selection, present);
  return out;
}

}  // namespace

int summary(const SummaryOptions& o) {
  if (!require_folder(o.shard_dir, "summary")) return 2;
  try {
    Summary s = summarize(o.shard_dir);
    std::vector<FamilyRoofline> rooflines = summary_rooflines(o);
    if (o.as_json) {
      nlohmann::json out = summary_json(s);
      for (const auto& r : rooflines) out["families"][r.family]["roofline"] = roofline_json(r, o.per_config);
      std::cout << out.dump(2) << "\n";
      return 0;
    }
    std::cout << summary_text(s);
    std::cout << "roofline (from today's configs and parity/intents, the stored waves/SIMD; docs/isa_profile.md):\n";
    for (const auto& r : rooflines) std::cout << roofline_text(r, o.per_config);
    return 0;
  } catch (const GoldenError& e) {
    std::cerr << "golden summary: " << e.what() << "\n";
    return 2;
  } catch (const std::runtime_error& e) {  // a bad intents or config file, an unknown FAMILY:ID (UsageError)
    std::cerr << "golden summary: " << e.what() << "\n";
    return 2;
  }
}

int check(const std::string& shard_dir, const std::vector<std::string>& files) {
  std::vector<std::filesystem::path> paths(files.begin(), files.end());
  if (paths.empty()) {
    if (!require_folder(shard_dir, "check")) return 2;
    paths = list_shard_files(shard_dir);
    if (paths.empty()) {
      std::cerr << fmt::format("golden check: {} holds no shards (<family>.json): nothing was checked\n", shard_dir);
      return 2;
    }
  }
  int failures = 0;
  for (const auto& path : paths) {
    try {
      Shard shard = load_shard(path);
      std::cout << fmt::format("OK    {} ({} configs)\n", path.string(), shard.entries.size());
    } catch (const GoldenError& e) {
      std::cout << "ERROR " << e.what() << "\n";
      ++failures;
    }
  }
  std::cout << fmt::format("golden check: {} shards, {} bad\n", paths.size(), failures);
  return failures ? 1 : 0;
}

int merge_driver(const std::string& base, const std::string& ours, const std::string& theirs,
                 const std::string& merged_path) {
  std::string report;
  int code = run_merge_driver(base, ours, theirs, merged_path, report);
  std::cerr << report;
  return code;
}

int resolve(const std::string& file) {
  try {
    std::string report;
    int code = resolve_file(file, report);
    (code == 0 ? std::cout : std::cerr) << report;
    return code;
  } catch (const GoldenError& e) {
    std::cerr << "golden resolve: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace kemit::golden::cli

#include "commands.h"

#include <iostream>

#include <fmt/format.h>

#include "kemit/golden/error.h"
#include "kemit/golden/merge.h"
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

}  // namespace

int summary(const std::string& shard_dir, bool as_json) {
  if (!require_folder(shard_dir, "summary")) return 2;
  try {
    Summary s = summarize(shard_dir);
    if (as_json)
      std::cout << summary_json(s).dump(2) << "\n";
    else
      std::cout << summary_text(s);
    return 0;
  } catch (const GoldenError& e) {
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

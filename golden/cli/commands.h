// The `golden` CLI's subcommands; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace kemit::golden::cli {

// `golden summary`: the counters, TWIN lines and the roofline of each family (derived from today's
// configs and intents and the stored waves/SIMD: docs/golden.md).
struct SummaryOptions {
  std::string shard_dir;
  bool as_json = false;
  bool per_config = false;          // a roofline line per config
  std::vector<std::string> select;  // FAMILY[:ID[,ID...]]: the rooflines shown (none: every config)
  std::string root;                 // the tree whose parity/intents hold the expressions
  std::string configs_dir;          // today's config files
};
int summary(const SummaryOptions& options);
int check(const std::string& shard_dir, const std::vector<std::string>& files);
int merge_driver(const std::string& base, const std::string& ours, const std::string& theirs,
                 const std::string& merged_path);
int resolve(const std::string& file);

}  // namespace kemit::golden::cli

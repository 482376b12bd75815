// The `golden` CLI's subcommands; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace kemit::golden::cli {

int summary(const std::string& shard_dir, bool as_json);
int check(const std::string& shard_dir, const std::vector<std::string>& files);
int merge_driver(const std::string& base, const std::string& ours, const std::string& theirs,
                 const std::string& merged_path);
int resolve(const std::string& file);

}  // namespace kemit::golden::cli

// Reading and writing shard files. Loading is strict (every deviation is an error naming the
// file, the line and the remedy); writing is canonical (same data, same bytes) and atomic.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kemit/golden/shard.h"

namespace kemit::golden {

struct LoadOptions {
  // Only `golden resolve` turns this off: it rebuilds the counters of a textually merged file.
  bool check_counters = true;
  // The family the file must hold; empty means the file name's stem (a merge driver passes the
  // family of %P, since git hands it temporary file names).
  std::string expected_family;
  // Maps the lines of `text` to lines of another file (one side split out of conflict markers).
  const std::vector<std::size_t>* line_map = nullptr;
};

// Parses shard text; `label` names the file in error messages. Throws GoldenError.
Shard parse_shard(std::string_view text, const std::string& label, const LoadOptions& options = {});
Shard load_shard(const std::filesystem::path& path, const LoadOptions& options = {});
std::string read_file(const std::filesystem::path& path);

// The canonical text of a shard (layout in docs/golden.md). Recomputes the counters and checks
// the invariants first (sorted unique ids, every flavor present, well-formed digests).
std::string serialize_shard(const Shard& shard);

// Throws GoldenError when `shard` breaks an invariant a stored shard must keep.
void validate_shard(const Shard& shard, const std::string& label);

// golden/shards/<family>.json
std::filesystem::path shard_path(const std::filesystem::path& shard_dir, const std::string& family);
// Every *.json in `shard_dir`, sorted by name (no error when the folder does not exist yet).
std::vector<std::filesystem::path> list_shard_files(const std::filesystem::path& shard_dir);

// The shard folder, relative to the repository root.
inline constexpr std::string_view kDefaultShardDir = "golden/shards";

}  // namespace kemit::golden

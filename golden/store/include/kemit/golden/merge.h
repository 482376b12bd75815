// Merging shards entry by entry: the git merge driver (three-way) and `golden resolve`
// (two-way, for a file that already holds conflict markers).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kemit/golden/shard.h"

namespace kemit::golden {

struct MergeConflict {
  std::uint64_t id = 0;
  std::string what;  // "both sides changed it differently (canonical, llvm19)", ...
};

struct MergeResult {
  Shard merged;                          // complete and valid when clean()
  std::vector<MergeConflict> conflicts;  // configs the two sides disagree on
  std::string header_conflict;           // non-empty: the flavor lists cannot be merged
  // The conflicting configs as each side has them, for writing conflict markers.
  std::vector<Entry> ours_conflicting, theirs_conflicting;
  bool clean() const { return conflicts.empty() && header_conflict.empty(); }
};

// Entry by entry, by id. With a base: a change on one side wins, the same change on both sides
// is fine, different changes (or a change against a removal) conflict. Without a base (null):
// equal entries are fine, an entry on one side only is kept, different entries conflict.
// Counters of `merged` are recomputed.
MergeResult merge_shards(const Shard* base, const Shard& ours, const Shard& theirs);

// The merged shard with each conflicting config written twice between git-style markers
// ("<<<<<<< ours" / "=======" / ">>>>>>> theirs"), so nothing is lost; `golden resolve` reads it.
std::string conflict_marked_text(const MergeResult& result);

// What the user sees: family, path, each conflicting id and sections, and what to do.
std::string describe_merge_conflicts(const std::string& path, const MergeResult& result);

// `golden merge-driver %O %A %B %P`: writes the merge to `ours` (%A). Returns 0 when merged,
// 1 on a conflict (the file then holds markers around the conflicting configs only, or is left
// untouched when the flavor lists conflict), 2 when a side fails to load (left untouched).
// Messages go to `report`.
int run_merge_driver(const std::filesystem::path& base, const std::filesystem::path& ours,
                     const std::filesystem::path& theirs, const std::string& merged_path, std::string& report);

// `golden resolve FILE`: splits conflict markers into ours and theirs, merges them without a
// base and rewrites the file; without markers, rewrites it with recomputed counters (after a
// textual merge or a hand resolution). Returns 0 when written, 1 on a conflict (file
// untouched); throws GoldenError when a side fails to load.
int resolve_file(const std::filesystem::path& path, std::string& report);

}  // namespace kemit::golden

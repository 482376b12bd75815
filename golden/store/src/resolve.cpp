// The two commands git users meet: the merge driver git calls, and `golden resolve` for a
// shard that was merged as text.
#include <fmt/format.h>

#include "conflict_markers.h"
#include "kemit/golden/atomic_file.h"
#include "kemit/golden/error.h"
#include "kemit/golden/merge.h"
#include "kemit/golden/shard_io.h"

namespace kemit::golden {

namespace {

std::string family_of_path(const std::string& path) {
  std::filesystem::path p(path);
  std::string stem = p.stem().string();
  if (p.extension() != ".json" || !is_family_name(stem))
    throw GoldenError(path, 0, "a shard file is named <family>.json with a family name of [a-z0-9_]+",
                      "the merge driver is registered for golden/shards/*.json only");
  return stem;
}

Shard load_side(const std::filesystem::path& file, const std::string& label, const std::string& family) {
  LoadOptions options;
  options.expected_family = family;
  return parse_shard(read_file(file), label, options);
}

}  // namespace

int run_merge_driver(const std::filesystem::path& base, const std::filesystem::path& ours,
                     const std::filesystem::path& theirs, const std::string& merged_path, std::string& report) {
  MergeResult result;
  try {
    std::string family = family_of_path(merged_path);
    // %O is empty when both branches created the file: a merge without a base.
    bool has_base = !read_file(base).empty();
    Shard base_shard = has_base ? load_side(base, merged_path + " (base)", family) : Shard{};
    Shard ours_shard = load_side(ours, merged_path + " (ours)", family);
    Shard theirs_shard = load_side(theirs, merged_path + " (theirs)", family);
    result = merge_shards(has_base ? &base_shard : nullptr, ours_shard, theirs_shard);
    if (result.clean()) {
      write_file_atomically(ours, serialize_shard(result.merged));
      return 0;
    }
    report = describe_merge_conflicts(merged_path, result);
    if (result.header_conflict.empty()) write_file_atomically(ours, conflict_marked_text(result));
    return 1;
  } catch (const GoldenError& e) {
    report = fmt::format("golden merge-driver: {}\n  the file was left as ours; fix the error, then merge again or run "
                         "`golden resolve {}`\n",
                         e.what(), merged_path);
    return 2;
  }
}

int resolve_file(const std::filesystem::path& path, std::string& report) {
  std::string label = path.string();
  std::string family = family_of_path(label);
  StoreLock lock(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path());
  std::string text = read_file(path);
  LoadOptions options;
  options.expected_family = family;
  options.check_counters = false;
  Shard merged;
  if (!detail::first_conflict_marker(text)) {
    merged = parse_shard(text, label, options);
  } else {
    detail::ConflictSides sides = detail::split_conflict_sides(text, label);
    options.line_map = &sides.ours.line_map;
    Shard ours = parse_shard(sides.ours.text, label + " (ours side of the conflict)", options);
    options.line_map = &sides.theirs.line_map;
    Shard theirs = parse_shard(sides.theirs.text, label + " (theirs side of the conflict)", options);
    MergeResult result = merge_shards(nullptr, ours, theirs);
    if (!result.clean()) {
      report = describe_merge_conflicts(label, result) + "  (the file was not changed)\n";
      return 1;
    }
    merged = std::move(result.merged);
  }
  std::string bytes = serialize_shard(merged);
  if (bytes != text) write_file_atomically(path, bytes);
  report = fmt::format("golden resolve {}: {} configs, counters recomputed{}\n", label, merged.entries.size(),
                       bytes == text ? " (file already canonical)" : "");
  return 0;
}

}  // namespace kemit::golden

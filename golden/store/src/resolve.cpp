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

namespace {

// A side of the merge that does not load. The loader's own remedy is not repeated: it names the
// side's label ("x.json (theirs)") as if it were a file, and its commands (`golden resolve`,
// `git checkout --`) would keep ours alone. What is true: the file holds ours, the other side's
// entries are not in it, and re-recording the family on the merged configs brings everything back.
std::string side_failed(const GoldenError& e, const std::string& side, const std::string& merged_path,
                        const std::string& family) {
  std::string lost = side == "ours" ? "ours does not load, and theirs' entries are not in it"
                     : side == "theirs" ? "theirs' entries are not in it"
                                        : "with no common ancestor to merge from, theirs' entries are not in it";
  return fmt::format(
      "golden merge-driver: {} side of {}{}: {}\n"
      "  the file was left as ours: {}; `golden resolve` cannot bring them back (it sees ours alone)\n"
      "  merge the configs, then re-record the family: `{}`, and `git add {}`\n",
      side, merged_path, e.line() ? fmt::format(", line {}", e.line()) : std::string(), e.problem(), lost,
      record_command(family), merged_path);
}

}  // namespace

int run_merge_driver(const std::filesystem::path& base, const std::filesystem::path& ours,
                     const std::filesystem::path& theirs, const std::string& merged_path, std::string& report) {
  MergeResult result;
  std::string family, side;  // side: the one being loaded, for the advice when it does not load
  try {
    family = family_of_path(merged_path);
    // %O is empty when both branches created the file: a merge without a base.
    bool has_base = !read_file(base).empty();
    side = "base";
    Shard base_shard = has_base ? load_side(base, merged_path + " (base)", family) : Shard{};
    side = "ours";
    Shard ours_shard = load_side(ours, merged_path + " (ours)", family);
    side = "theirs";
    Shard theirs_shard = load_side(theirs, merged_path + " (theirs)", family);
    side.clear();
    result = merge_shards(has_base ? &base_shard : nullptr, ours_shard, theirs_shard);
    if (result.clean()) {
      write_file_atomically(ours, serialize_shard(result.merged));
      return 0;
    }
    report = describe_merge_conflicts(merged_path, result);
    if (result.header_conflict.empty()) write_file_atomically(ours, conflict_marked_text(result));
    return 1;
  } catch (const GoldenError& e) {
    if (!side.empty()) {
      report = side_failed(e, side, merged_path, family);
    } else {
      report = fmt::format("golden merge-driver: {}\n  the file was left as ours: theirs' entries are not in it; "
                           "merge the configs, then re-record the family with `run_diff --record-golden --only "
                           "FAMILY`\n",
                           e.what());
    }
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
    // A side that does not load: the loader's remedy would name "FILE (ours side ...)" as a file.
    auto load = [&](const detail::ConflictSide& side, const char* name) {
      options.line_map = &side.line_map;
      try {
        return parse_shard(side.text, label, options);
      } catch (const GoldenError& e) {
        throw GoldenError(label, e.line(), std::string("the ") + name + " side of the conflict: " + e.problem(),
                          "fix that side's lines between the markers (the file was not changed), then run `golden "
                          "resolve " + label + "` again; or re-record the family with `" + record_command(family) + "`");
      }
    };
    Shard ours = load(sides.ours, "ours");
    Shard theirs = load(sides.theirs, "theirs");
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

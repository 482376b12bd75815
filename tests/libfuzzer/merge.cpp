// libFuzzer target: the merge driver's inputs. Input with git conflict markers is one textually merged
// shard (what `golden resolve` reads); otherwise it is base, ours and theirs separated by a line
// "%%%%" (what `golden merge-driver` reads). Every loadable trio is merged, and the result
// serialized or conflict-marked as the driver would write it.
#include <cstdint>
#include <string>
#include <vector>

#include "conflict_markers.h"
#include "kemit/golden/error.h"
#include "kemit/golden/merge.h"
#include "kemit/golden/shard_io.h"

namespace {

using namespace kemit::golden;
const char* kLabel = "golden/shards/conv.json";

void merge_sides(const Shard* base, const Shard& ours, const Shard& theirs) {
  MergeResult result = merge_shards(base, ours, theirs);
  if (result.clean()) {
    (void)serialize_shard(result.merged);
    return;
  }
  (void)describe_merge_conflicts(kLabel, result);
  if (result.header_conflict.empty()) (void)conflict_marked_text(result);
}

void resolve_text(const std::string& text) {
  LoadOptions options;
  options.check_counters = false;
  detail::ConflictSides sides = detail::split_conflict_sides(text, kLabel);
  options.line_map = &sides.ours.line_map;
  Shard ours = parse_shard(sides.ours.text, kLabel, options);
  options.line_map = &sides.theirs.line_map;
  Shard theirs = parse_shard(sides.theirs.text, kLabel, options);
  merge_sides(nullptr, ours, theirs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (detail::first_conflict_marker(text)) {
      resolve_text(text);
      return 0;
    }
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t cut; parts.size() < 2 && (cut = text.find("\n%%%%\n", start)) != std::string::npos; start = cut + 6)
      parts.push_back(text.substr(start, cut - start));
    parts.push_back(text.substr(start));
    if (parts.size() != 3) return 0;
    bool has_base = !parts[0].empty();
    Shard base = has_base ? parse_shard(parts[0], kLabel) : Shard{};
    merge_sides(has_base ? &base : nullptr, parse_shard(parts[1], kLabel), parse_shard(parts[2], kLabel));
  } catch (const GoldenError&) {
  }
  return 0;
}

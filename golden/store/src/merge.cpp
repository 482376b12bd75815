// Entry-by-entry merging of two versions of one family's shard, with or without a base.
#include "kemit/golden/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/golden/compare.h"
#include "shard_text.h"

namespace kemit::golden {

namespace {

std::vector<std::string> section_names(const Entry& a, const Entry& b, const std::vector<std::string>& flavors) {
  std::vector<std::string> names;
  for (const SectionChange& c : entry_changes(a, b, flavors)) names.push_back(c.section);
  if (!resource_changes(a, b, flavors).empty()) names.push_back("resources");
  if (names.empty()) names.push_back("flavor sections");
  return names;
}

// Three-way choice for one id; null result with a conflict text when the sides disagree.
const Entry* choose(const Entry* base, const Entry* ours, const Entry* theirs, bool has_base,
                    const std::vector<std::string>& flavors, std::string& conflict) {
  if (ours && theirs) {
    if (*ours == *theirs) return ours;
    if (base && *base == *ours) return theirs;
    if (base && *base == *theirs) return ours;
    const char* how = !has_base ? "the two sides differ"
                      : base    ? "both sides changed it differently"
                                : "both sides added it with different contents";
    conflict = fmt::format("{} ({})", how, fmt::join(section_names(*ours, *theirs, flavors), ", "));
    return nullptr;
  }
  const Entry* only = ours ? ours : theirs;
  if (!only) return nullptr;  // removed on both sides (or never there)
  if (!base) return only;     // added on one side
  if (*base == *only) return nullptr;  // removed on the other side, unchanged here
  conflict = fmt::format("changed on {} but removed on {}", ours ? "ours" : "theirs", ours ? "theirs" : "ours");
  return nullptr;
}

// The merged flavor list, or an explanation of why there is none.
bool merge_flavors(const Shard* base, const Shard& ours, const Shard& theirs, std::vector<std::string>& out,
                   std::string& conflict) {
  if (ours.flavors == theirs.flavors) out = ours.flavors;
  else if (base && base->flavors == ours.flavors) out = theirs.flavors;
  else if (base && base->flavors == theirs.flavors) out = ours.flavors;
  else {
    conflict = fmt::format("the flavor lists differ: ours [{}], theirs [{}]", fmt::join(ours.flavors, ", "),
                           fmt::join(theirs.flavors, ", "));
    return false;
  }
  return true;
}

// An entry taken from a side with other flavors: drop flavors the merge retired; a flavor the
// merge added but the entry lacks cannot be made up.
bool fit_flavors(Entry& e, const std::vector<std::string>& flavors, std::string& conflict) {
  if (e.is_rejected()) return true;
  for (auto it = e.flavors.begin(); it != e.flavors.end();)
    it = std::find(flavors.begin(), flavors.end(), it->first) == flavors.end() ? e.flavors.erase(it) : std::next(it);
  for (const auto& f : flavors)
    if (!e.flavors.count(f)) {
      conflict = fmt::format("lacks flavor {}, which the other side added to the shard", f);
      return false;
    }
  return true;
}

}  // namespace

MergeResult merge_shards(const Shard* base, const Shard& ours, const Shard& theirs) {
  MergeResult result;
  result.merged.family = ours.family;
  if (!merge_flavors(base, ours, theirs, result.merged.flavors, result.header_conflict)) return result;
  std::set<std::uint64_t> ids;
  for (const Shard* s : {base, &ours, &theirs})
    if (s)
      for (const Entry& e : s->entries) ids.insert(e.id);
  for (std::uint64_t id : ids) {
    const Entry *b = base ? base->find(id) : nullptr, *o = ours.find(id), *t = theirs.find(id);
    std::string conflict;
    const Entry* chosen = choose(b, o, t, base != nullptr, result.merged.flavors, conflict);
    Entry taken;
    if (chosen) {
      taken = *chosen;
      if (fit_flavors(taken, result.merged.flavors, conflict)) {
        result.merged.entries.push_back(std::move(taken));
        continue;
      }
    }
    if (conflict.empty()) continue;
    result.conflicts.push_back({id, conflict});
    if (o) result.ours_conflicting.push_back(*o);
    if (t) result.theirs_conflicting.push_back(*t);
  }
  result.merged.counters = compute_counters(result.merged.entries, result.merged.flavors);
  return result;
}

namespace {

// Each side's entry lines in id order, with that side's commas (the last line has none).
std::map<std::uint64_t, std::string> side_lines(const std::vector<Entry>& clean, const std::vector<Entry>& conflicting) {
  std::map<std::uint64_t, const Entry*> by_id;
  for (const Entry& e : clean) by_id[e.id] = &e;
  for (const Entry& e : conflicting) by_id[e.id] = &e;
  std::map<std::uint64_t, std::string> lines;
  std::size_t i = 0;
  for (const auto& [id, e] : by_id) {
    std::string line;
    detail::append_entry(line, *e);
    lines[id] = line + (++i < by_id.size() ? ",\n" : "\n");
  }
  return lines;
}

}  // namespace

std::string conflict_marked_text(const MergeResult& result) {
  std::string out;
  detail::append_header(out, result.merged, result.merged.counters);
  auto ours = side_lines(result.merged.entries, result.ours_conflicting);
  auto theirs = side_lines(result.merged.entries, result.theirs_conflicting);
  std::set<std::uint64_t> ids;
  for (const auto& kv : ours) ids.insert(kv.first);
  for (const auto& kv : theirs) ids.insert(kv.first);
  std::string ours_block, theirs_block;
  auto flush = [&] {
    if (ours_block.empty() && theirs_block.empty()) return;
    out += "<<<<<<< ours\n" + ours_block + "=======\n" + theirs_block + ">>>>>>> theirs\n";
    ours_block.clear();
    theirs_block.clear();
  };
  for (std::uint64_t id : ids) {
    auto o = ours.find(id), t = theirs.find(id);
    bool same = o != ours.end() && t != theirs.end() && o->second == t->second;
    if (same) {
      flush();
      out += o->second;
      continue;
    }
    if (o != ours.end()) ours_block += o->second;
    if (t != theirs.end()) theirs_block += t->second;
  }
  flush();
  return out + std::string(detail::kShardTail);
}

std::string describe_merge_conflicts(const std::string& path, const MergeResult& result) {
  std::string family = result.merged.family;
  std::string out = fmt::format("golden merge conflict in {} (family {}):\n", path, family);
  if (!result.header_conflict.empty())
    return out + fmt::format("  {}\n  the file was left as ours; re-record the family with `run_diff --record-golden "
                             "--only {}` on the merged configs\n",
                             result.header_conflict, family);
  for (const MergeConflict& c : result.conflicts) out += fmt::format("  config {}: {}\n", c.id, c.what);
  out += fmt::format(
      "  the file holds both versions of each conflicting config between <<<<<<< and >>>>>>> lines;\n"
      "  keep one line of each (or re-record it with `run_diff --record-golden --only {} --allow-changes`),\n"
      "  delete the other and the markers, then run `golden resolve {}` and `git add {}`\n",
      family, path, path);
  return out;
}

}  // namespace kemit::golden

// The comparison behind `run_diff --check-golden`: entry by entry, by id, with moves found
// through the spec digest.
#include "kemit/golden/compare.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>

#include "kemit/golden/error.h"
#include "name_lists.h"

namespace kemit::golden {

namespace {

bool same_text(const Section& a, const Section& b) {
  return a.sha256 == b.sha256 && a.bytes == b.bytes && a.rejected == b.rejected;
}


std::vector<std::string> sorted_flavors(std::vector<std::string> flavors) {
  sort_flavors(flavors);
  return flavors;
}

void validate_fresh_entry(const Entry& e, const FreshResults& fresh) {
  auto bad = [&](const std::string& problem) {  // the message is built only on failure
    throw GoldenError("", 0, fmt::format("fresh results of {}: config {}: {}", fresh.family, e.id, problem),
                      "this is a bug in the caller of the golden store");
  };
  if (e.id == 0) bad("ids start at 1");
  if (!is_sha256_hex(e.spec_digest)) bad("spec_digest is not 64 lowercase hex digits");
  if (e.arch.empty()) bad("no arch");
  if (e.is_rejected()) return;
  if (e.kernel_name.empty()) bad("no kernel name");
  if (!is_sha256_hex(e.canonical.sha256)) bad("canonical sha256 is not 64 lowercase hex digits");
  for (const auto& f : fresh.flavors) {
    auto it = e.flavors.find(f);
    if (it == e.flavors.end()) bad(fmt::format("lacks flavor {}, which the run checks", f));
    if (!it->second.is_rejected() && !is_sha256_hex(it->second.sha256))
      bad(fmt::format("{} sha256 is not 64 lowercase hex digits", f));
  }
}

Finding finding_for(Category category, const Entry& e) {
  Finding f;
  f.category = category;
  f.id = f.stored_id = e.id;
  f.kernel_name = e.kernel_name;
  f.arch = e.arch;
  return f;
}

// Splits an entry's differences into text changes, refusal-text changes and resource changes;
// builds findings only when there is something to report (the common case is "identical").
void add_entry_findings(const Entry& before, const Entry& after, const std::vector<std::string>& flavors,
                        std::uint64_t stored_id, std::vector<Finding>& out) {
  std::vector<SectionChange> changes = entry_changes(before, after, flavors);
  std::vector<ResourceChange> resources = resource_changes(before, after, flavors);
  std::vector<CodeChange> code = code_changes(before, after, flavors);
  if (changes.empty() && resources.empty() && code.empty()) return;
  Finding changed = finding_for(Category::changed, after), reasons = changed;
  changed.stored_id = reasons.stored_id = stored_id;
  reasons.category = Category::reason_changed;
  for (SectionChange& c : changes) {
    bool reason_only = c.before.is_rejected() && c.after.is_rejected();
    (reason_only ? reasons : changed).sections.push_back(std::move(c));
  }
  if (!changed.sections.empty()) out.push_back(changed);
  if (!reasons.sections.empty()) out.push_back(reasons);
  if (!resources.empty()) {
    Finding r = finding_for(Category::resources_changed, after);
    r.stored_id = stored_id;
    r.resources = std::move(resources);
    out.push_back(std::move(r));
  }
  if (!code.empty()) {
    Finding r = finding_for(Category::code_changed, after);
    r.stored_id = stored_id;
    r.code = std::move(code);
    out.push_back(std::move(r));
  }
}

void add_count_changes(const std::string& flavor, const char* prefix, const std::map<std::string, std::uint64_t>& before,
                       const std::map<std::string, std::uint64_t>& after, std::vector<CodeChange>& out) {
  std::set<std::string> names;
  for (const auto& [name, count] : before) names.insert(name);
  for (const auto& [name, count] : after) names.insert(name);
  auto count_of = [](const std::map<std::string, std::uint64_t>& counts, const std::string& name) {
    auto found = counts.find(name);
    return found == counts.end() ? std::uint64_t{0} : found->second;
  };
  for (const auto& name : names)
    if (count_of(before, name) != count_of(after, name))
      out.push_back({flavor, prefix + name, std::to_string(count_of(before, name)), std::to_string(count_of(after, name))});
}

SectionChange text_change(std::string section, const Section& before, const Section& after) {
  SectionChange c;
  c.section = std::move(section);
  c.before = before;
  c.after = after;
  return c;
}

SectionChange field_change(std::string field, const std::string& before, const std::string& after) {
  SectionChange c;
  c.section = std::move(field);
  c.before_text = before;
  c.after_text = after;
  return c;
}

void add_stale_flavors(const Shard& shard, const std::vector<std::string>& run, const std::vector<std::string>& all,
                       Comparison& out) {
  auto stale = [&](const std::string& flavor, bool missing_from_shard) {
    Finding f;
    f.category = Category::stale_flavor;
    f.flavor = flavor;
    f.flavor_missing_from_shard = missing_from_shard;
    out.findings.push_back(std::move(f));
  };
  for (const auto& f : run)
    if (!contains(shard.flavors, f)) stale(f, true);
  for (const auto& f : shard.flavors)
    if (!contains(all, f)) stale(f, false);
}

// How many measured flavor sections of one compared config had stored figures to compare with.
void count_resources(const Entry& before, const Entry& after, const std::vector<std::string>& flavors,
                     Comparison& out) {
  for (const auto& f : flavors) {
    auto b = before.flavors.find(f), a = after.flavors.find(f);
    if (a == after.flavors.end() || a->second.resources.empty()) continue;
    bool stored = b != before.flavors.end() && !b->second.resources.empty();
    ++(stored ? out.resources_compared : out.resources_unstored);
  }
}

// The entries the shard already holds (by id or by move): a NEW config changes the counters only
// because it is new, and is reported once, as NEW.
std::vector<Entry> without_new(const std::vector<Entry>& entries, const std::vector<Finding>& findings) {
  std::set<std::uint64_t> fresh_only;
  for (const Finding& f : findings)
    if (f.category == Category::new_entry) fresh_only.insert(f.id);
  std::vector<Entry> kept;
  for (const Entry& e : entries)
    if (!fresh_only.count(e.id)) kept.push_back(e);
  return kept;
}

Counters restricted(const Counters& c, const std::vector<std::string>& flavors) {
  Counters r = c;
  for (auto it = r.sections.begin(); it != r.sections.end();)
    it = (it->first == kCanonicalSection || contains(flavors, it->first)) ? std::next(it) : r.sections.erase(it);
  return r;
}

}  // namespace

std::vector<SectionChange> entry_changes(const Entry& before, const Entry& after,
                                         const std::vector<std::string>& flavors) {
  std::vector<SectionChange> out;
  if (before.spec_digest != after.spec_digest)
    out.push_back(field_change("spec_digest", before.spec_digest, after.spec_digest));
  if (before.is_rejected() || after.is_rejected()) {
    auto as_section = [](const Entry& e) { return e.is_rejected() ? Section::refused(e.rejected) : e.canonical; };
    if (before.rejected != after.rejected) out.push_back(text_change("validation", as_section(before), as_section(after)));
    return out;
  }
  if (before.kernel_name != after.kernel_name)
    out.push_back(field_change("kernel_name", before.kernel_name, after.kernel_name));
  if (!same_text(before.canonical, after.canonical))
    out.push_back(text_change(std::string(kCanonicalSection), before.canonical, after.canonical));
  for (const auto& f : flavors) {
    auto b = before.flavors.find(f), a = after.flavors.find(f);
    if (b == before.flavors.end() || a == after.flavors.end()) continue;
    if (!same_text(b->second, a->second)) out.push_back(text_change(f, b->second, a->second));
  }
  return out;
}

std::vector<ResourceChange> resource_changes(const Entry& before, const Entry& after,
                                             const std::vector<std::string>& flavors) {
  std::vector<ResourceChange> out;
  for (const auto& f : flavors) {
    auto b = before.flavors.find(f), a = after.flavors.find(f);
    if (b == before.flavors.end() || a == after.flavors.end()) continue;
    for (std::size_t k = 0; k < kResourceKinds; ++k) {
      const auto &old_figure = b->second.resources.figures[k], &new_figure = a->second.resources.figures[k];
      // A figure this run did not measure (a run without the LLVM lane) is not a change, nor is a
      // section blessed without figures (--no-resources: nothing to compare with, said apart).
      // But a figure the run measured that a section with figures lacks is: passing it would
      // call the section compared on the figures it happens to hold.
      if (!new_figure) continue;
      if (old_figure ? *old_figure != *new_figure : !b->second.resources.empty())
        out.push_back({f, static_cast<ResourceKind>(k), old_figure, *new_figure});
    }
  }
  return out;
}

std::vector<CodeChange> code_changes(const Entry& before, const Entry& after, const std::vector<std::string>& flavors) {
  std::vector<CodeChange> out;
  for (const auto& f : flavors) {
    auto b = before.flavors.find(f), a = after.flavors.find(f);
    if (b == before.flavors.end() || a == after.flavors.end()) continue;
    const Section &old_section = b->second, &new_section = a->second;
    // Only what both sides measured: a bless without the lane (or before the profile existed)
    // has nothing to compare with; the next bless fills it in.
    if (!old_section.isa.empty() && !new_section.isa.empty()) {
      const IsaFigures &old_isa = old_section.isa, &new_isa = new_section.isa;
      if (old_isa.waves != new_isa.waves)
        out.push_back({f, "waves/SIMD", old_isa.waves ? std::to_string(*old_isa.waves) : "(not stored)",
                       new_isa.waves ? std::to_string(*new_isa.waves) : "(not measured)"});
      add_count_changes(f, "", old_isa.counts, new_isa.counts, out);
      add_count_changes(f, "loop ", old_isa.loop, new_isa.loop, out);
    }
    if (!old_section.code.empty() && !new_section.code.empty() && old_section.code != new_section.code)
      out.push_back({f, "code", old_section.code.substr(0, 12), new_section.code.substr(0, 12),
                     same_text(old_section, new_section)});
  }
  return out;
}

void validate_fresh(const FreshResults& fresh) {
  if (!is_family_name(fresh.family))
    throw GoldenError("", 0, fmt::format("fresh results name family \"{}\", not [a-z0-9_]+", fresh.family),
                      "this is a bug in the caller of the golden store");
  std::vector<std::uint64_t> ids;
  ids.reserve(fresh.entries.size());
  for (const Entry& e : fresh.entries) {
    validate_fresh_entry(e, fresh);
    ids.push_back(e.id);
  }
  std::sort(ids.begin(), ids.end());
  auto twice = std::adjacent_find(ids.begin(), ids.end());
  if (twice != ids.end())
    throw GoldenError("", 0, fmt::format("fresh results of {} hold config {} twice", fresh.family, *twice),
                      "this is a bug in the caller of the golden store");
  for (const auto& f : fresh.flavors)
    if (!is_family_name(f) || f == kCanonicalSection)
      throw GoldenError("", 0, fmt::format("fresh results name flavor \"{}\"", f), "pass canonical flavor names");
}

static std::vector<const Entry*> entries_by_id(const std::vector<Entry>& entries) {
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) { return a->id < b->id; });
  return sorted;
}

// Stored entries the run lacks, by spec digest, oldest id first: the candidates for a move.
static std::map<std::string, std::deque<const Entry*>> move_candidates(const Shard& shard,
                                                                        const std::set<std::uint64_t>& fresh_ids) {
  std::map<std::string, std::deque<const Entry*>> out;
  for (const Entry& e : shard.entries)
    if (!fresh_ids.count(e.id)) out[e.spec_digest].push_back(&e);
  return out;
}

Comparison compare_with_golden(const Shard* stored, const FreshResults& fresh) {
  validate_fresh(fresh);
  std::vector<std::string> run = sorted_flavors(fresh.flavors);
  std::vector<std::string> all = fresh.all_flavors.empty() ? run : sorted_flavors(fresh.all_flavors);
  Shard empty;
  empty.family = fresh.family;
  empty.flavors = all;
  const Shard& shard = stored ? *stored : empty;

  Comparison out;
  out.family = fresh.family;
  out.shard_exists = stored != nullptr;
  out.configs_in_run = fresh.entries.size();
  for (const auto& f : run)
    if (contains(shard.flavors, f)) out.flavors_compared.push_back(f);
  if (stored) add_stale_flavors(shard, run, all, out);

  std::set<std::uint64_t> fresh_ids;
  if (fresh.complete)
    for (const Entry& e : fresh.entries) fresh_ids.insert(e.id);
  auto candidates = fresh.complete ? move_candidates(shard, fresh_ids) : decltype(move_candidates(shard, {})){};
  std::set<std::uint64_t> moved_away;
  for (const Entry* e : entries_by_id(fresh.entries)) {
    const Entry* old = shard.find(e->id);
    if (!old) {
      auto it = candidates.find(e->spec_digest);
      if (it == candidates.end() || it->second.empty()) {
        out.findings.push_back(finding_for(Category::new_entry, *e));
        continue;
      }
      old = it->second.front();
      it->second.pop_front();
      moved_away.insert(old->id);
      Finding moved = finding_for(Category::moved, *e);
      moved.stored_id = old->id;
      out.findings.push_back(std::move(moved));
    }
    ++out.configs_compared;
    count_resources(*old, *e, out.flavors_compared, out);
    add_entry_findings(*old, *e, out.flavors_compared, old->id, out.findings);
  }
  if (fresh.complete) {
    for (const Entry& e : shard.entries)
      if (!fresh_ids.count(e.id) && !moved_away.count(e.id)) out.findings.push_back(finding_for(Category::missing, e));
    if (stored) {
      Counters before = restricted(shard.counters, out.flavors_compared);
      Counters after = compute_counters(without_new(fresh.entries, out.findings), out.flavors_compared);
      Finding counters;
      counters.category = Category::counters;
      counters.counters = counter_differences(before, after);
      if (!counters.counters.empty()) out.findings.push_back(std::move(counters));
    }
  }
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Finding& a, const Finding& b) {
    return a.category != b.category ? a.category < b.category : a.id < b.id;
  });
  return out;
}

std::size_t Comparison::count(Category c) const {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(), [c](const Finding& f) { return f.category == c; }));
}

}  // namespace kemit::golden

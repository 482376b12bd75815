#include "kemit/golden/bless.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "kemit/golden/atomic_file.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "conflict_markers.h"
#include "name_lists.h"

namespace kemit::golden {

namespace {


// A bless in progress for one family: the shard as it will be written, and why not.
struct FamilyPlan {
  Shard target;
  std::string bytes;
  bool existed = false;
  std::string old_bytes;
  FamilyBlessReport report;
  std::vector<std::string> refusals;

  void refuse(const std::string& why) { refusals.push_back(fmt::format("{}: {}", target.family, why)); }
};

const Section* stored_section(const Entry* old, const std::string& flavor) {
  if (!old || old->is_rejected()) return nullptr;
  auto it = old->flavors.find(flavor);
  return it == old->flavors.end() ? nullptr : &it->second;
}

// The stored entry updated with the run: checked flavors come from the run (keeping resource
// figures the run did not measure when the text is unchanged), unchecked ones stay as stored.
std::optional<Entry> merged_entry(const Entry* old, const Entry& fresh, const std::vector<std::string>& run_flavors,
                                  const std::vector<std::string>& target_flavors, std::string& missing_flavor) {
  Entry m = fresh;
  m.flavors.clear();
  m.canonical.resources = {};
  if (fresh.is_rejected()) return m;
  for (const auto& f : target_flavors) {
    const Section* stored = stored_section(old, f);
    if (!contains(run_flavors, f)) {
      if (!stored) {
        missing_flavor = f;
        return std::nullopt;
      }
      m.flavors[f] = *stored;
      continue;
    }
    Section s = fresh.flavors.at(f);
    if (stored && s.sha256 == stored->sha256 && s.rejected == stored->rejected) {
      for (std::size_t k = 0; k < kResourceKinds; ++k)
        if (!s.resources.figures[k]) s.resources.figures[k] = stored->resources.figures[k];
      if (s.code.empty()) s.code = stored->code;
      if (s.isa.empty()) s.isa = stored->isa;
    }
    m.flavors[f] = std::move(s);
  }
  return m;
}

std::map<std::uint64_t, std::set<Category>> categories_by_id(const Comparison& cmp) {
  std::map<std::uint64_t, std::set<Category>> out;
  for (const Finding& f : cmp.findings)
    if (f.category != Category::stale_flavor && f.category != Category::counters) out[f.id].insert(f.category);
  return out;
}

void plan_flavors(FamilyPlan& plan, const FreshResults& fresh, const std::vector<std::string>& all,
                  const BlessOptions& options) {
  Shard& t = plan.target;
  for (const auto& f : fresh.flavors) {
    if (contains(t.flavors, f)) continue;
    if (!fresh.complete) {
      plan.refuse(fmt::format("the shard lacks flavor {}; adding a flavor needs a complete run of the family", f));
      continue;
    }
    t.flavors.push_back(f);
    plan.report.flavors_added.push_back(f);
  }
  for (const auto& f : std::vector<std::string>(t.flavors)) {
    if (contains(all, f)) continue;
    if (!options.prune || !fresh.complete) {
      plan.refuse(fmt::format("the shard holds flavor {}, which the flavor table lacks; drop it with --prune "
                              "after a complete run",
                              f));
      continue;
    }
    t.flavors.erase(std::find(t.flavors.begin(), t.flavors.end(), f));
    for (Entry& e : t.entries) e.flavors.erase(f);
    plan.report.flavors_removed.push_back(f);
  }
  sort_flavors(t.flavors);
}

// Decides what happens to one fresh config: stored in `result`, or refused.
void plan_entry(FamilyPlan& plan, const Entry& fresh, const Entry* old, const std::set<Category>& why,
                const FreshResults& run, const BlessOptions& options, std::map<std::uint64_t, Entry>& result) {
  auto has = [&](Category c) { return why.count(c) > 0; };
  if (has(Category::moved) && !options.renumber) {
    plan.refuse(fmt::format("config {} has the spec of blessed config {} (MOVED); pass --renumber", fresh.id, old->id));
    return;
  }
  bool changes = has(Category::changed) || has(Category::reason_changed) || has(Category::resources_changed) ||
                 has(Category::code_changed);
  if (changes && !options.allow_changes) {
    plan.refuse(fmt::format("config {} would change (see the CHANGED / REASON_CHANGED / RESOURCES_CHANGED / CODE_CHANGED lines); "
                            "pass --allow-changes",
                            fresh.id));
    return;
  }
  std::string missing;
  auto merged = merged_entry(old, fresh, run.flavors, plan.target.flavors, missing);
  if (!merged) {
    plan.refuse(fmt::format("config {} needs flavor {}, which this run did not check; rerun with every flavor",
                            fresh.id, missing));
    return;
  }
  if (!old) plan.report.added.push_back(fresh.id);
  if (has(Category::moved)) {
    result.erase(old->id);
    plan.report.moved.emplace_back(old->id, fresh.id);
  }
  if (changes) plan.report.changed.push_back(fresh.id);
  if (old && !changes && plan.report.flavors_added.empty() && *merged != *old && !has(Category::moved))
    plan.report.filled.push_back(fresh.id);
  result[fresh.id] = std::move(*merged);
}

void plan_entries(FamilyPlan& plan, const Comparison& cmp, const FreshResults& fresh, const BlessOptions& options) {
  std::map<std::uint64_t, Entry> result;
  for (const Entry& e : plan.target.entries) result.emplace(e.id, e);
  auto why = categories_by_id(cmp);
  std::map<std::uint64_t, std::uint64_t> moved_from;
  for (const Finding& f : cmp.findings)
    if (f.category == Category::moved) moved_from[f.id] = f.stored_id;
  for (const Entry& e : fresh.entries) {
    auto from = moved_from.find(e.id);
    const Entry* old = plan.target.find(from == moved_from.end() ? e.id : from->second);
    plan_entry(plan, e, old, why[e.id], fresh, options, result);
  }
  for (const Finding& f : cmp.findings) {
    if (f.category != Category::missing) continue;
    if (!options.prune) {
      plan.refuse(fmt::format("blessed config {} is no longer in the configs (MISSING); pass --prune", f.id));
      continue;
    }
    result.erase(f.id);
    plan.report.removed.push_back(f.id);
  }
  plan.target.entries.clear();
  for (auto& [id, e] : result) plan.target.entries.push_back(std::move(e));
}

FamilyPlan plan_family(const std::filesystem::path& dir, const FreshResults& fresh, const BlessOptions& options) {
  FamilyPlan plan;
  std::filesystem::path path = shard_path(dir, fresh.family);
  plan.report.family = fresh.family;
  plan.report.path = path;
  std::vector<std::string> all = fresh.all_flavors.empty() ? fresh.flavors : fresh.all_flavors;
  sort_flavors(all);
  std::error_code ignored;
  plan.existed = std::filesystem::exists(std::filesystem::symlink_status(path, ignored));
  bool loaded = false;
  if (plan.existed) {
    try {
      plan.old_bytes = read_file(path);
      plan.target = parse_shard(plan.old_bytes, path.string());
      loaded = true;
    } catch (const GoldenError& error) {
      // A shard that does not load holds nothing this bless could keep: a complete run of the
      // family rebuilds it whole (every config NEW), which is what the loader's message suggests.
      if (detail::first_conflict_marker(plan.old_bytes)) throw;  // `golden resolve` keeps both sides' entries
      if (!fresh.complete)
        throw GoldenError(error.file(), error.line(), error.problem(),
                          error.remedy() + "; a shard that does not load is rebuilt only from a complete run of its "
                                           "family (no FAMILY:ID, --filter, --last-failed or --shard)");
      plan.report.repaired = error.what();
      plan.old_bytes.clear();
    }
  }
  if (loaded) {
  } else if (!plan.report.repaired.empty()) {
    plan.target = Shard{};
    plan.target.family = fresh.family;
    plan.target.flavors = all;
  } else {
    plan.target.family = fresh.family;
    plan.target.flavors = all;
    plan.report.created = true;
  }
  if (options.prune && !fresh.complete) plan.refuse("--prune needs a complete run (no id filter, no sharding)");
  Comparison cmp = compare_with_golden(loaded ? &plan.target : nullptr, fresh);
  plan_flavors(plan, fresh, all, options);
  plan_entries(plan, cmp, fresh, options);
  if (plan.refusals.empty()) {
    plan.target.counters = compute_counters(plan.target.entries, plan.target.flavors);
    plan.bytes = serialize_shard(plan.target);
  }
  return plan;
}

// Every changed shard is staged (written and synced under a temporary name) before any is renamed:
// a full disk or a read-only folder on the third shard leaves all of them as they were.
void write_all_or_nothing(const std::vector<FamilyPlan>& plans, BlessReport& report) {
  std::vector<StagedFile> staged;
  std::vector<std::size_t> staged_plan;
  try {
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].existed && plans[i].report.repaired.empty() && plans[i].bytes == plans[i].old_bytes) continue;
      staged.push_back(stage_file(plans[i].report.path, plans[i].bytes));
      staged_plan.push_back(i);
    }
  } catch (const GoldenError& e) {
    for (const auto& file : staged) discard_staged(file);
    throw GoldenError(e.file(), e.line(), e.problem(),
                      fmt::format("nothing was renamed: every shard of this bless is unchanged ({} staged file(s) "
                                  "discarded); check the folder's permissions and free space, then bless again",
                                  staged.size()));
  }
  for (std::size_t k = 0; k < staged.size(); ++k) {
    try {
      commit_staged(staged[k]);
    } catch (const GoldenError& e) {  // a rename failing after others succeeded: say which are new
      for (std::size_t rest = k + 1; rest < staged.size(); ++rest) discard_staged(staged[rest]);
      std::string renamed;
      for (std::size_t done = 0; done < k; ++done) renamed += " " + staged[done].path.string();
      throw GoldenError(e.file(), e.line(), e.problem(),
                        k == 0 ? "nothing was renamed: every shard of this bless is unchanged"
                               : "already renamed (new):" + renamed + "; the others are unchanged");
    }
    report.families[staged_plan[k]].written = true;
  }
}

}  // namespace

bool ci_environment() {
  const char* ci = std::getenv("CI");
  if (!ci) return false;
  std::string value(ci);
  return !value.empty() && value != "0" && value != "false";
}

BlessReport bless(const std::filesystem::path& shard_dir, const std::vector<FreshResults>& runs,
                  const BlessOptions& options) {
  BlessReport report;
  if (ci_environment() && !options.force && !options.dry_run) {
    report.refusals.push_back(
        "CI is set: golden shards are only checked in CI, never written; bless locally (or pass --force)");
    return report;
  }
  std::set<std::string> families;
  for (const auto& run : runs)
    if (!families.insert(run.family).second)
      throw GoldenError("", 0, fmt::format("fresh results hold family {} twice", run.family),
                        "this is a bug in the caller of the golden store");
  std::optional<StoreLock> lock;
  if (!options.dry_run) lock.emplace(shard_dir);  // held from the first read to the last rename
  std::vector<FamilyPlan> plans;
  for (const auto& run : runs) plans.push_back(plan_family(shard_dir, run, options));
  for (auto& plan : plans) {
    report.refusals.insert(report.refusals.end(), plan.refusals.begin(), plan.refusals.end());
    report.families.push_back(plan.report);
  }
  if (report.refused() || options.dry_run) return report;
  write_all_or_nothing(plans, report);
  return report;
}

}  // namespace kemit::golden

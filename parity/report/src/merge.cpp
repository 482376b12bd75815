#include "kemit/report/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace kemit::report {
namespace {

void require_same(const NamedReport& first, const NamedReport& other, const std::string& what,
                  const std::string& a, const std::string& b) {
  if (a != b)
    throw MergeError(other.path + " and " + first.path + " are not shards of one run: their " + what +
                     " differ ('" + b + "' vs '" + a + "')");
}

// Every input is a shard of the same N, each shard exactly once, all N present.
void require_complete_shards(const std::vector<NamedReport>& inputs) {
  std::map<int, std::string> seen;
  int count = 0;
  for (const auto& input : inputs) {
    const auto& shard = input.report.run.shard;
    if (!shard) throw MergeError(input.path + " is not a shard (its run had no --shard): nothing to merge it with");
    if (count == 0) count = shard->count;
    if (shard->count != count)
      throw MergeError(input.path + " is shard " + shard->text() + " but " + inputs.front().path + " is of " +
                       std::to_string(count) + " shards: shards of different splits overlap");
    auto [at, fresh] = seen.emplace(shard->index, input.path);
    if (!fresh) throw MergeError(input.path + " and " + at->second + " are both shard " + shard->text());
  }
  std::string missing;
  for (int k = 1; k <= count; ++k)
    if (!seen.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(count);
  if (!missing.empty())
    throw MergeError("shard(s) " + missing + " missing: a merge of part of a run would not be the run's result");
}

// A shard's rows and cases must tell one story, or summing its evidence would hide what its
// cases say (a row edited to GREEN over failed cases). For every row: its status is the one
// rule's verdict on its evidence, and it counts at least as many failures as it has failed cases
// of configs; every failed case belongs to a family with a RED row.
void require_consistent(const NamedReport& input) {
  const Report& report = input.report;
  auto inconsistent = [&](const std::string& what) {
    return MergeError(input.path + " is inconsistent: " + what +
                      "; the shard's report was edited or is damaged: run the shard again");
  };
  std::map<std::pair<std::string, std::string>, long> failed_cases;
  std::set<std::string> red_families;
  for (const auto& row : report.rows) {
    Status judged = row_status(row.evidence, report.run.shard.has_value());
    if (row.status != judged)
      throw inconsistent(fmt::format("the row {} {} says {} but its evidence (failed {}, blocking {}, passed {}) "
                                     "says {}",
                                     row.family, row.section, status_name(row.status), row.evidence.failed,
                                     row.evidence.blocking, row.evidence.passed, status_name(judged)));
    if (row.status == Status::red) red_families.insert(row.family);
  }
  for (const auto& c : report.cases) {
    if (c.outcome != Outcome::failed) continue;
    if (!red_families.count(c.family))
      throw inconsistent("the case " + case_name(c) + " failed (" + c.verdict + ") but no row of " + c.family +
                         " is RED");
    if (c.id) ++failed_cases[{c.family, c.section}];
  }
  for (const auto& row : report.rows) {
    auto at = failed_cases.find({row.family, row.section});
    if (at != failed_cases.end() && at->second > row.evidence.failed)
      throw inconsistent(fmt::format("{} case(s) of {} {} failed but its row counts {} failure(s)", at->second,
                                     row.family, row.section, row.evidence.failed));
  }
}

// Cases by name. A family's own case (no config id: its flavors, its counters) is reported by
// every shard that holds the family: it is kept once, failed if any shard failed it.
void add_cases(const NamedReport& input, std::map<std::string, std::pair<std::string, size_t>>& owner, Report& merged) {
  for (const auto& c : input.report.cases) {
    std::string name = case_name(c);
    auto [at, fresh] = owner.emplace(name, std::make_pair(input.path, merged.cases.size()));
    if (fresh) {
      merged.cases.push_back(c);
      continue;
    }
    if (c.id) throw MergeError(input.path + " and " + at->second.first + " both hold " + name + ": the shards overlap");
    Case& kept = merged.cases[at->second.second];
    if (kept.outcome != Outcome::failed && c.outcome == Outcome::failed) kept = c;
  }
}

}  // namespace

Report merge_reports(const std::vector<NamedReport>& inputs) {
  if (inputs.empty()) throw MergeError("no report to merge");
  const NamedReport& first = inputs.front();
  for (const auto& input : inputs) {
    require_same(first, input, "tools", first.report.run.tool, input.report.run.tool);
    require_same(first, input, "lanes", first.report.lane, input.report.lane);
    require_same(first, input, "commits", first.report.run.commit, input.report.run.commit);
    require_same(first, input, "runs (argv without --shard, --json, --junit)", first.report.run.run_key,
                 input.report.run.run_key);
  }
  require_complete_shards(inputs);
  for (const auto& input : inputs) require_consistent(input);

  Report merged;
  merged.lane = first.report.lane;
  merged.run = first.report.run;
  merged.run.shard.reset();
  merged.run.repro.clear();
  for (const auto& input : inputs) {  // the shards ran side by side: the run took as long as the slowest
    merged.run.started = std::min(merged.run.started, input.report.run.started);
    merged.run.duration_seconds = std::max(merged.run.duration_seconds, input.report.run.duration_seconds);
  }
  std::map<std::pair<std::string, std::string>, size_t> row_index;
  std::vector<std::map<Status, std::string>> notes;  // per merged row: a shard's note for each status
  std::map<std::string, std::pair<std::string, size_t>> owner;
  std::set<std::string> failures;
  for (const auto& input : inputs) {
    for (const auto& row : input.report.rows) {
      auto [at, fresh] = row_index.emplace(std::make_pair(row.family, row.section), merged.rows.size());
      if (fresh) {
        merged.rows.push_back({row.family, row.section, {}, Status::red, ""});
        notes.emplace_back();
      }
      merged.rows[at->second].evidence += row.evidence;
      notes[at->second].emplace(row.status, row.note);
    }
    add_cases(input, owner, merged);
    for (const auto& failure : input.report.run_failures)
      if (failures.insert(failure).second) merged.run_failures.push_back(failure);
  }
  for (size_t r = 0; r < merged.rows.size(); ++r) {
    // The lane's own note says what to do; a shard whose row had the merged status wrote it.
    Row& row = merged.rows[r];
    Status status = row_status(row.evidence, false);
    bool counted = status == Status::red && (row.evidence.failed > 0 || row.evidence.blocking == 0);
    auto note = notes[r].find(counted && row.evidence.failed == 0 ? Status::partial : status);
    row.note = note != notes[r].end() && !(status == Status::red && row.evidence.failed > 0) ? note->second : "";
  }
  judge_rows(merged);
  std::stable_sort(merged.rows.begin(), merged.rows.end(),
                   [](const Row& a, const Row& b) { return a.family < b.family; });
  std::stable_sort(merged.cases.begin(), merged.cases.end(), [](const Case& a, const Case& b) {
    if (a.family != b.family) return a.family < b.family;
    return a.id.value_or(-1) < b.id.value_or(-1);
  });
  return merged;
}

}  // namespace kemit::report

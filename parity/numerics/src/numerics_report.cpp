// The lane's reports: the shared report (JSON envelope, JUnit), the lane's own JSON fields and the
// text a person reads (a line per family, each failure with the command that reproduces it).
#include <cstdio>

#include "kemit/tooling/cli.h"
#include "numerics_lane.h"

namespace kemit::numerics {

// Python's json.dumps(value, sort_keys=True): the spec as the lane has always printed it. Only
// the separators differ from nlohmann's compact form; scalars (strings with ensure_ascii) print
// the same.
std::string python_json(const json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it)  // nlohmann keeps keys sorted
      out += (it == value.begin() ? "" : ", ") + json(it.key()).dump(-1, ' ', true) + ": " + python_json(it.value());
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_json(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true);
}

namespace {

std::string reproduce(const tooling::Locations& where, const Item& item, const std::string& section) {
  std::vector<std::string> words{kemit::tooling::relative_to(where.build + "/parity/check_numerics", where.root)};
  for (const auto& flag : kemit::tooling::suggested_flags(where)) words.push_back(flag);
  words.insert(words.end(), {item.family + ":" + std::to_string(item.id), "--section", section});
  return kemit::tooling::shell_join(words);
}

std::string spec_run_text(const Item& item) {
  return python_json(item.spec_run.is_null() ? json::object() : item.spec_run);
}


std::map<std::string, std::pair<long, long>> section_counts(const FamilyRun& run, const std::vector<std::string>& sections) {
  std::map<std::string, std::pair<long, long>> counts;
  for (const auto& section : sections) counts[section] = {0, 0};
  for (const Item* item : run.items)
    for (const auto& r : item->results) {
      auto& [ok, ran] = counts[r.section];
      ok += r.verdict == "NUMERIC_OK";
      ran += 1;
    }
  return counts;
}


std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}


}  // namespace

report::Report build_report(const tooling::Locations& where, const std::vector<FamilyRun>& runs, const report::RunInfo& info) {
  report::Report summary;
  summary.lane = "numerics";
  summary.run = info;
  for (const auto& run : runs) {
    report::Row row;
    row.family = run.family;
    row.section = "numerics";
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        (r.verdict == "NUMERIC_OK" ? row.evidence.passed : row.evidence.failed) += 1;
        report::Case c;
        c.family = item->family;
        c.id = item->id;
        c.section = r.section;
        c.verdict = r.verdict;
        c.seconds = r.seconds;
        if (r.verdict != "NUMERIC_OK") {
          c.outcome = report::Outcome::failed;
          c.message = report::failure_message(r.verdict, r.detail);
          c.detail = r.detail + "\nspec run: " + spec_run_text(*item) + "\nreproduce: " + reproduce(where, *item, r.section);
        }
        summary.cases.push_back(c);
      }
    if (!run.has_configs) row.note = "no emitting configs: add one to parity/configs/" + run.family + ".json";
    summary.rows.push_back(row);
  }
  report::judge_rows(summary);
  return summary;
}


json lane_json(const std::vector<FamilyRun>& runs, const report::Report& summary, const std::vector<std::string>& sections,
               double wall) {
  json data = {{"wall_seconds", wall}, {"sections", sections}, {"families", json::object()}};
  for (size_t f = 0; f < runs.size(); ++f) {
    const FamilyRun& run = runs[f];
    json counts = json::object();
    for (const auto& verdict : kVerdicts) counts[verdict] = 0;
    json configs = json::array();
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        counts[r.verdict] = counts[r.verdict].get<long>() + 1;
        configs.push_back({{"id", item->id},
                           {"section", r.section},
                           {"verdict", r.verdict},
                           {"detail", r.detail},
                           {"mismatch", r.mismatch},
                           {"spec_run", item->spec_run.is_null() ? json::object() : item->spec_run},
                           {"lane_instructions", r.lane_instructions},
                           {"run_seconds", r.run_seconds},
                           {"outputs_sha256", r.outputs_sha256},
                           {"seconds", r.seconds},
                           {"cached", r.cached},
                           {"same_program_as", r.same_program_as}});
      }
    json per_section = json::object();
    for (const auto& [section, count] : section_counts(run, sections))
      per_section[section] = {{"ok", count.first}, {"run", count.second}};
    data["families"][run.family] = {{"status", report::status_name(summary.rows[f].status)},
                                    {"counts", counts},
                                    {"sections", per_section},
                                    {"configs", configs}};
  }
  return data;
}


void print_text(std::ostream& out, const tooling::Locations& where, const std::vector<FamilyRun>& runs,
                const report::Report& summary, const std::vector<std::string>& sections, double wall,
                const kemit::lane_support::ResultCache& cache, const kemit::lane_support::ResultCache& plans) {
  for (size_t f = 0; f < runs.size(); ++f) {
    std::string line;
    for (const auto& section : sections) {
      auto [ok, ran] = section_counts(runs[f], sections)[section];
      line += (line.empty() ? "" : "  ") + section + " " + std::to_string(ok) + "/" + std::to_string(ran);
    }
    char head[128];
    std::snprintf(head, sizeof head, "%-30s %-5s  ", runs[f].family.c_str(), report::status_name(summary.rows[f].status));
    out << head << (line.empty() ? "no emitting configs" : line) << "\n";
  }
  for (const auto& run : runs)
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        if (r.verdict == "NUMERIC_OK") continue;
        out << "FAIL " << item->family << " config " << item->id << " [" << r.section << "]: " << r.verdict << "\n"
            << "    " << r.detail << "\n"
            << "    spec run: " << spec_run_text(*item) << "\n"
            << "    reproduce: " << reproduce(where, *item, r.section) << "\n";
      }
  for (bool canonical : {true, false}) {
    long picked = 0, from_cache = 0, shared = 0;
    long long lanes = 0;
    double seconds = 0;
    for (const auto& run : runs)
      for (const Item* item : run.items)
        for (const auto& r : item->results) {
          if ((r.section == "canonical") != canonical) continue;
          ++picked;
          if (r.cached) {
            ++from_cache;
            continue;
          }
          shared += !r.same_program_as.empty();
          lanes += r.lane_instructions;
          seconds += r.run_seconds;
        }
    if (!picked) continue;
    out << picked << " section run(s) " << (canonical ? "interpreted (canonical)" : "executed (flavors)") << ", "
        << from_cache << " from the cache";
    if (shared) out << ", " << shared << " taken from an earlier flavor's run of the same program";
    out << ": " << lanes << " lane instructions run in " << fixed(seconds, 1) << " s ("
        << fixed(seconds > 0 ? lanes / seconds / 1e6 : 0, 1) << " M/s)\n";
  }
  out << "wall " << fixed(wall, 1) << " s, " << cache.summary();
  if (cache.enabled()) {
    auto stats = plans.stats();
    out << " (plans and digests: " << stats.hits << " hits, " << stats.misses << " misses)";
  }
  out << "\n";
  for (const auto& problem : cache.stats().problems) out << "cache: " << problem << "\n";
  for (const auto& problem : plans.stats().problems) out << "cache: " << problem << "\n";
  out << "RESULT: " << (summary.green() ? "GREEN" : "RED") << "\n";
}

}  // namespace kemit::numerics

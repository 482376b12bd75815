// run_diff --check-golden: parity first, then every green family against its shard.
#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "golden_check.h"
#include "process.h"
#include "kemit/driver/reports.h"
#include "kemit/golden/shard_io.h"
#include "kemit/report/render.h"
#include "kemit/report/run_info.h"
#include "kemit/report/shard.h"

namespace kemit::run_diff {

using golden::Category;

const std::vector<std::string>& category_order() {
  static const std::vector<std::string> order = {"CHANGED", "NEW",     "MISSING",           "MOVED",
                                                 "REASON_CHANGED", "STALE_FLAVOR", "COUNTERS",
                                                 "RESOURCES_CHANGED", "CODE_CHANGED", "PARITY", "SPILL", "LANE"};
  return order;
}

bool GoldenCheck::ok() const {
  for (const auto& [name, count] : counts)
    if (count) return false;
  return !families.empty();
}

std::string join_strings(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string engines_label(const Options& options) {
  switch (options.engines) {
    case EngineChoice::python_only: return "py only (no parity check: the engine is judged against itself)";
    case EngineChoice::cpp_only: return "cpp only (no parity check: the engine is judged against itself)";
    case EngineChoice::both: break;
  }
  return "py vs cpp (parity first: a family is compared with its shard only when its parity is GREEN)";
}

namespace {


// Under --shard K/N the blessed entries are those of shard K: the run is complete for them, so
// MISSING still works, and the counters are theirs (docs/run_diff.md, "Shards").
void keep_shard_entries(const std::optional<report::Shard>& shard, golden::Shard& stored) {
  if (!shard) return;
  stored.entries.erase(std::remove_if(stored.entries.begin(), stored.entries.end(),
                                      [&](const golden::Entry& e) {
                                        return !report::in_shard(shard, stored.family, static_cast<std::int64_t>(e.id));
                                      }),
                       stored.entries.end());
  stored.counters = golden::compute_counters(stored.entries, stored.flavors);
}

FamilyCheck compare_family(const std::filesystem::path& dir, const golden::FreshResults& fresh,
                           const std::optional<report::Shard>& run_shard) {
  FamilyCheck check;
  check.family = fresh.family;
  check.parity_green = true;
  check.compared = true;
  std::filesystem::path path = golden::shard_path(dir, fresh.family);
  if (std::filesystem::exists(path)) {
    golden::Shard shard = golden::load_shard(path);
    keep_shard_entries(run_shard, shard);
    check.comparison = golden::compare_with_golden(&shard, fresh);
  } else {
    check.comparison = golden::compare_with_golden(nullptr, fresh);
  }
  for (const auto& e : fresh.entries) check.config_ids.push_back(e.id);
  return check;
}

// The command that blesses what failed: --only the failing families, with the flags the findings
// need. MISSING and retired flavors need --prune, which needs a run without filters.
std::string bless_command_for(const Options& options, const GoldenCheck& check) {
  std::vector<std::string> families;
  bool changes = false, moves = false, prune = false;
  for (const auto& f : check.families) {
    if (!f.compared || f.comparison.clean()) continue;
    families.push_back(f.family);
    for (const auto& finding : f.comparison.findings) {
      switch (finding.category) {
        case Category::changed:
        case Category::reason_changed:
        case Category::resources_changed:
        case Category::code_changed: changes = true; break;
        case Category::moved: moves = true; break;
        case Category::missing: prune = true; break;
        case Category::stale_flavor: prune = prune || !finding.flavor_missing_from_shard; break;
        default: break;
      }
    }
  }
  if (families.empty()) return "";
  std::string command = self_command(options) + " --record-golden";
  if (!prune) command += " --only " + join_strings(families, ",");
  if (changes) command += " --allow-changes";
  if (moves) command += " --renumber";
  if (prune) command += " --prune";
  if (!options.resources) command += " --no-resources";
  for (const auto& word : driver::selection_words(options.check.selection)) command += " " + shell_quoted({word});
  return command;
}

}  // namespace

GoldenCheck compute_check(const Options& options, const FreshRun& run) {
  GoldenCheck check;
  for (const auto& name : category_order()) check.counts[name] = 0;
  std::filesystem::path dir = shard_dir(options);
  std::set<std::string> with_configs;
  std::vector<std::string> red;
  for (const auto& family : run.families) {
    with_configs.insert(family.family);
    if (!family.parity_green) {
      FamilyCheck f;
      f.family = family.family;
      f.parity_note = family.parity_note;
      check.families.push_back(std::move(f));
      ++check.counts["PARITY"];
      red.push_back(family.family);
      continue;
    }
    check.families.push_back(compare_family(dir, fresh_results(run, family), options.check.shard));
  }
  // A shard whose family lost its config file: every blessed config is MISSING.
  for (const auto& path : golden::list_shard_files(dir)) {
    std::string family = path.stem().string();
    if (with_configs.count(family) || !family_selected(options.check.only, family) || !options.check.selection.empty())
      continue;  // a selection of configs says nothing about families it left out
    FamilyCheck f = compare_family(dir, vanished_family_results(run, family), options.check.shard);
    f.has_configs = false;
    check.families.push_back(std::move(f));
  }
  std::sort(check.families.begin(), check.families.end(),
            [](const FamilyCheck& a, const FamilyCheck& b) { return a.family < b.family; });
  for (const auto& f : check.families)
    for (const auto& finding : f.comparison.findings) ++check.counts[std::string(golden::category_name(finding.category))];
  for (const auto& p : run.lane_problems) ++check.counts[p.spill() ? "SPILL" : "LANE"];
  check.bless_command = bless_command_for(options, check);
  if (!red.empty()) {
    check.parity_command = sibling_command(options, "parity/check_byte_identity") + " --only " + join_strings(red, ",");
  }
  return check;
}

// What the OK line may claim about resources: compared only where the shard holds figures too (a
// bless with --no-resources stores none, and a figure on one side only is not compared).
std::string resources_claim(const Options& options, const FreshRun& run, const GoldenCheck& check) {
  if (!run.resources_measured) return ", resources not compared (" + std::string(options.resources ? "lane unavailable" : "--no-resources") + ")";
  size_t compared = 0, unstored = 0;
  std::vector<std::string> families;
  for (const auto& f : check.families) {
    compared += f.comparison.resources_compared;
    unstored += f.comparison.resources_unstored;
    if (f.comparison.resources_unstored) families.push_back(f.family);
  }
  if (!unstored) return fmt::format(", resources compared ({} modules)", compared);
  return fmt::format(", resources compared for {} of {} modules: {} blessed without resources (fill them in: {} "
                     "--record-golden --only {})",
                     compared, compared + unstored, unstored, self_command(options), join_strings(families, ","));
}

void write_check_text(const Options& options, const FreshRun& run, const GoldenCheck& check, std::ostream& out) {
  size_t diffs = options.inline_diffs;
  out << "== engines: " << engines_label(options) << "\n";
  write_engine_answers(run, out);
  driver::write_text_report(run.outcome, out);
  out << "== golden: " << shard_dir(options) << "\n";
  for (const auto& f : check.families) {
    if (!f.parity_green && f.has_configs) {
      out << fmt::format("PARITY {}: not compared with its shard: {}\n", f.family, f.parity_note);
      continue;
    }
    if (!f.has_configs) out << fmt::format("{}: no config file any more (every blessed config is MISSING)\n", f.family);
    out << describe_with_diffs(options, f, diffs);
  }
  if (options.resources || !run.resource_notes.empty()) {
    size_t measured = 0;
    for (const auto& f : run.families)
      for (const auto& e : f.entries)
        for (const auto& [flavor, section] : e.flavors) measured += !section.resources.empty();
    out << "== resources: " << (run.resources_measured ? fmt::format("{} modules measured by the LLVM lane ({})", measured,
                                                                     run.resource_cost)
                                                        : std::string("not measured"))
        << "\n";
    for (const auto& note : run.resource_notes) out << note << "\n";
    for (const auto& p : run.lane_problems)
      out << fmt::format("{} {} #{} [{}] {}: {}{}\n", p.spill() ? "SPILL" : "LANE", p.family, p.config, p.arch, p.flavor,
                         p.spill() ? "the config says expect_no_spill, but " : p.verdict + ": ", p.detail);
    if (!run.lane_problems.empty())
      out << "  (each module again: " << sibling_command(options, "llvm_lane/check_llvm") << " --only "
          << run.lane_problems.front().family << " --flavor " << run.lane_problems.front().flavor << ")\n";
  }
  if (check.ok()) {
    size_t configs = 0;
    for (const auto& f : check.families) configs += f.comparison.configs_compared;
    out << fmt::format("GOLDEN OK: {} families, {} configs, sections canonical,{}{}\n", check.families.size(), configs,
                       join_strings(run.flavors, ","), resources_claim(options, run, check));
    return;
  }
  std::vector<std::string> counts;  // only the categories that occurred
  for (const auto& name : category_order())
    if (check.counts.at(name)) counts.push_back(fmt::format("{} {}", name, check.counts.at(name)));
  out << "GOLDEN MISMATCH: " << join_strings(counts, ", ") << "\n";
  if (!check.parity_command.empty())
    out << "parity first (nothing is compared or blessed from engines that disagree): " << check.parity_command << "\n";
  if (check.counts.at("SPILL") || check.counts.at("LANE"))
    out << "fix the kernels the LLVM lane refuses (resources cannot be blessed from them), or pass --no-resources\n";
  if (!check.bless_command.empty()) out << "bless what failed: " << check.bless_command << "\n";
}

int check_golden(const Options& options, std::ostream& out, std::ostream& err) {
  report::RunClock clock("run_diff", options.check.locations.root, options.argv, options.check.shard);
  FreshRun run = run_engines(options, err);
  measure_resources(options, run, err);
  GoldenCheck check = compute_check(options, run);
  // Reports first: a failure to write one is an infrastructure error (exit 2).
  report::Report summary = golden_report(run, check, clock.finish());
  try {
    if (!options.json_path.empty())
      report::write_json_report(options.json_path, check_json(options, run, check), summary);
    if (!options.junit_path.empty()) report::write_report_file(options.junit_path, report::junit_xml(summary));
  } catch (const std::runtime_error& error) {
    throw driver::InfrastructureError(error.what());
  }
  driver::keep_last_report(options.check.locations.build, "run_diff", summary, err);
  if (options.check.shard)
    out << "shard " << options.check.shard->text() << ": blessed configs of other shards are not compared here; "
        << "merge the shards' --json reports with kemit_report merge\n";
  write_check_text(options, run, check, out);
  return check.ok() ? 0 : 1;
}

bool family_selected(const std::vector<std::string>& only, const std::string& family) {
  if (only.empty()) return true;
  return std::any_of(only.begin(), only.end(), [&](const std::string& s) { return family.find(s) != std::string::npos; });
}

}  // namespace kemit::run_diff

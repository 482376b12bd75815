// run_diff --record-golden: blesses a clean run into the shards through the golden store's
// bless() (add-new-only unless --allow-changes / --renumber / --prune; all or nothing; atomic).
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "golden_check.h"
#include "kemit/driver/reports.h"
#include "kemit/golden/bless.h"
#include "kemit/golden/shard_io.h"

namespace kemit::run_diff {

namespace {


int refuse(std::ostream& out, const std::string& why) {
  out << "REFUSED " << why << "\nnothing was written\n";
  return 1;
}

}  // namespace

int record_golden(const Options& options, std::ostream& out, std::ostream& err) {
  if (options.engines != EngineChoice::both)
    throw driver::UsageError(
        "--record-golden blesses only what both engines agree on; drop --python-only / --cpp-only");
  // Refusals that need no run come first, so a refused bless costs nothing.
  if (golden::ci_environment() && !options.force && !options.dry_run)
    return refuse(out, "CI is set: golden shards are only checked in CI, never written; bless locally (or pass --force)");
  if (options.prune &&
      (!options.check.only.empty() || !options.check.flavors.empty() || !options.check.selection.empty()))
    return refuse(out, "--prune needs a complete run: no --only, no --flavor, no FAMILY:ID, --filter or --last-failed");

  // An explicit --golden-dir must exist: a typo would otherwise start a fresh golden there.
  if (!options.golden_dir.empty() && !std::filesystem::is_directory(options.golden_dir))
    throw driver::UsageError("--golden-dir " + options.golden_dir +
                             ": no such folder; check the path, or create the folder first to start a new golden");

  FreshRun run = run_engines(options, err);
  measure_resources(options, run, err);
  out << "== engines: " << engines_label(options) << "\n";
  write_engine_answers(run, out);
  driver::write_text_report(run.outcome, out);
  if (!run.parity_green()) {
    std::vector<std::string> red;
    for (const auto& f : run.families)
      if (!f.parity_green) red.push_back(f.family + " (" + f.parity_note + ")");
    return refuse(out, "parity is not GREEN for " + join_strings(red, "; ") +
                           ": a golden is never blessed from engines that disagree; fix parity, or bless the green "
                           "families with --only");
  }
  if (!run.lane_problems.empty()) {
    std::string list;
    for (const auto& p : run.lane_problems)
      list += fmt::format("\n  {} {} #{} [{}] {}: {}", p.spill() ? "SPILL" : "LANE", p.family, p.config, p.arch,
                          p.flavor, p.verdict + " " + p.detail);
    return refuse(out, "the LLVM lane refuses modules of this run (resources cannot be blessed from them); fix them, "
                       "or pass --no-resources:" + list);
  }
  for (const auto& note : run.resource_notes) out << note << "\n";

  std::vector<golden::FreshResults> runs;
  std::set<std::string> with_configs;
  for (const auto& family : run.families) {
    runs.push_back(fresh_results(run, family));
    with_configs.insert(family.family);
  }
  // A shard whose family lost its config file: an empty complete run, so its configs are MISSING
  // (refused without --prune, removed with it).
  std::filesystem::path dir = shard_dir(options);
  if (!options.dry_run) std::filesystem::create_directories(dir);  // the default folder of a fresh checkout
  for (const auto& path : golden::list_shard_files(dir)) {
    std::string family = path.stem().string();
    if (with_configs.count(family) || !family_selected(options.check.only, family) || !options.check.selection.empty())
      continue;  // a selection of configs says nothing about families it left out
    runs.push_back(vanished_family_results(run, family));
  }
  golden::BlessOptions bless_options;
  bless_options.allow_changes = options.allow_changes;
  bless_options.renumber = options.renumber;
  bless_options.prune = options.prune;
  bless_options.force = options.force;
  bless_options.dry_run = options.dry_run;
  golden::BlessReport report = golden::bless(dir, runs, bless_options);
  out << "== golden: " << dir.string() << (options.dry_run ? " (dry run: nothing is written)" : "") << "\n";
  out << golden::describe_bless(report);
  if (report.refused()) {
    out << "BLESS REFUSED\n";
    return 1;
  }
  size_t written = 0;
  for (const auto& f : report.families) written += f.written;
  out << fmt::format("BLESSED: {} shard(s) written, {} unchanged{}\n", written, report.families.size() - written,
                     options.dry_run ? " (dry run)" : "");
  return 0;
}

}  // namespace kemit::run_diff

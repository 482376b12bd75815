// The fuzz run's views: terminal text, JSON (--json, with the shared envelope) and JUnit XML
// (--junit, the shared writer), both written atomically by kemit_reports.
#include "kemit/fuzz/report.h"

#include <fmt/format.h>

#include "kemit/driver/reports.h"
#include "kemit/report/render.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;

std::string indented(const std::string& text, const std::string& prefix, size_t max_lines) {
  std::string out;
  size_t lines = 0, start = 0;
  while (start < text.size() && lines < max_lines) {
    size_t end = text.find('\n', start);
    out += prefix + text.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
    ++lines;
    if (end == std::string::npos) return out;
    start = end + 1;
  }
  if (start < text.size()) out += prefix + "... (the JSON report keeps the whole detail)\n";
  return out;
}

std::string failure_headline(const FoundFailure& found) {
  const Failure& failure = found.failure;
  return found.spec.family + " spec " + std::to_string(found.spec.index) + " [" + failure.lane + " " +
         failure.verdict + (failure.section.empty() ? "" : " at " + failure.section) + "]";
}

const DrawnSpec& final_spec(const FoundFailure& found) { return found.shrunk_done ? found.shrunk.spec : found.spec; }

constexpr size_t kSkipLines = 20;  // skipped specs listed in the text; the JSON and JUnit list all

std::string skip_headline(const SkippedSpec& skip) {
  return skip.spec.family + " spec " + std::to_string(skip.spec.index) + " [" + skip.lane + "] arch " +
         skip.spec.arch + " " + skip.spec.spec.dump();
}

void write_skips(const RunTally& tally, std::ostream& out) {
  if (tally.skipped.empty()) return;
  out << tally.skipped.size() << " spec(s) skipped, not passed:\n";
  for (size_t i = 0; i < tally.skipped.size() && i < kSkipLines; ++i)
    out << "SKIP " << skip_headline(tally.skipped[i]) << "\n    " << tally.skipped[i].reason << "\n";
  if (tally.skipped.size() > kSkipLines)
    out << "  ... " << tally.skipped.size() - kSkipLines << " more, each with its reason, in the JSON and JUnit reports\n";
}

}  // namespace

void write_text(const RunSettings& settings, const RunTally& tally, std::ostream& out) {
  out << fmt::format("kemit_fuzz: seed {}, {} specs in {:.1f} s wall ({:.0f} specs/s), {:.1f} s CPU with the workers\n",
                     tally.seed, tally.specs, tally.seconds, tally.specs / std::max(tally.seconds, 1e-9),
                     tally.cpu_seconds);
  out << fmt::format("{:<30} {:>7} {:>9} {:>8} {:>12} {:>7}\n", "family", "specs", "accepted", "modules",
                     "numerics ok", "failed");
  for (const auto& [family, row] : tally.families)
    out << fmt::format("{:<30} {:>7} {:>9} {:>8} {:>12} {:>7}\n", family, row.specs, row.accepted, row.modules,
                       settings.lanes.numerics ? fmt::format("{} ({} skip)", row.numerics_ok, row.numerics_skipped) : "-",
                       row.failed);
  std::string kinds;
  for (const auto& [kind, count] : tally.kinds) kinds += (kinds.empty() ? "" : ", ") + kind + " " + std::to_string(count);
  out << "draws: " << kinds << "\n";
  out << fmt::format("domain: predicted the reference engine's decision for {} of {} specs\n", tally.domain_agrees,
                     tally.specs);
  for (const auto& miss : tally.domain_misses) out << "  differs: " << miss << "\n";
  write_skips(tally, out);
  for (const auto& found : tally.failures) {
    out << "FAIL " << failure_headline(found) << "\n" << indented(found.failure.detail, "    ", 12);
    out << "    drawn: arch " << found.spec.arch << " spec " << found.spec.spec.dump() << " ("
        << draw_kind_name(found.spec.kind) << ")\n";
    if (!found.shrunk_done) {
      out << "    not shrunk (--max-shrinks " << settings.max_shrinks << " reached)\n";
      continue;
    }
    out << fmt::format("    shrunk in {} step(s), {} run(s): arch {} spec {}\n", found.shrunk.passes,
                       found.shrunk.evaluations, found.shrunk.spec.arch, found.shrunk.spec.spec.dump());
    out << (found.promoted_id ? "    promoted as config " + std::to_string(found.promoted_id) + ":\n"
                              : "    config entry (kemit_fuzz --promote appends it):\n")
        << "      " << found.config_line << "\n";
    out << "    reproduce (from the source root):\n"
        << indented(reproduce_commands(settings, final_spec(found), found.shrunk.failure), "      ", 4);
  }
  out << (tally.failing_specs ? fmt::format("{} spec(s) failed\n", tally.failing_specs) : "")
      << (tally.green() ? "RESULT: GREEN\n" : "RESULT: RED\n");
}

json json_report(const RunSettings& settings, const RunTally& tally) {
  json families = json::object(), failures = json::array(), skipped = json::array();
  for (const auto& [family, row] : tally.families)
    families[family] = {{"specs", row.specs}, {"accepted", row.accepted}, {"modules", row.modules},
                        {"numerics_ok", row.numerics_ok}, {"numerics_skipped", row.numerics_skipped},
                        {"failed", row.failed}};
  for (const auto& found : tally.failures) {
    json entry = {{"family", found.spec.family}, {"index", found.spec.index}, {"arch", found.spec.arch},
                  {"spec", found.spec.spec}, {"kind", draw_kind_name(found.spec.kind)},
                  {"lane", found.failure.lane}, {"verdict", found.failure.verdict},
                  {"section", found.failure.section}, {"detail", found.failure.detail}};
    if (found.shrunk_done)
      entry["shrunk"] = {{"arch", found.shrunk.spec.arch}, {"spec", found.shrunk.spec.spec},
                         {"steps", found.shrunk.passes}, {"runs", found.shrunk.evaluations},
                         {"config_line", found.config_line}, {"promoted_id", found.promoted_id},
                         {"reproduce", reproduce_commands(settings, found.shrunk.spec, found.shrunk.failure)}};
    failures.push_back(entry);
  }
  for (const auto& skip : tally.skipped)
    skipped.push_back({{"family", skip.spec.family}, {"index", skip.spec.index}, {"arch", skip.spec.arch},
                       {"spec", skip.spec.spec}, {"kind", draw_kind_name(skip.spec.kind)}, {"lane", skip.lane},
                       {"reason", skip.reason}});
  return {{"tool", "kemit_fuzz"}, {"result", tally.green() ? "GREEN" : "RED"}, {"seed", tally.seed},
          {"specs", tally.specs}, {"failing_specs", tally.failing_specs}, {"wall_seconds", tally.seconds},
          {"cpu_seconds", tally.cpu_seconds}, {"lanes", {{"parity", true}, {"llvm", settings.lanes.llvm},
          {"codegen", settings.lanes.codegen}, {"numerics", settings.lanes.numerics}}},
          {"draws", tally.kinds}, {"domain_agrees", tally.domain_agrees}, {"families", families},
          {"failures", failures}, {"skipped", skipped}};
}

report::Report lane_report(const RunSettings& settings, const RunTally& tally, report::RunInfo run) {
  report::Report out;
  out.lane = "fuzz";
  out.run = std::move(run);
  for (const auto& [family, row] : tally.families) {
    auto add = [&](const char* lane, long passed, long failed) {
      report::Evidence evidence;
      evidence.passed = passed;
      evidence.failed = failed;
      evidence.not_applicable = row.specs - passed - failed;  // refused specs, skipped numerics
      // The notes count specs (the shared default counts configs).
      std::string note = failed ? fmt::format("{} spec(s) failed", failed)
                                : passed ? "" : fmt::format("none of the {} spec(s) reached the {} lane", row.specs, lane);
      out.rows.push_back({family, lane, evidence, report::Status::red, note});
    };
    add("parity", row.specs - row.parity_failed, row.parity_failed);
    if (settings.lanes.llvm) add("llvm", row.llvm_passed, row.llvm_failed);
    if (settings.lanes.numerics) add("numerics", row.numerics_ok, row.numerics_failed);
  }
  for (const auto& found : tally.failures) {
    const Failure& failure = found.failure;
    std::string verdict = failure.verdict + (failure.section.empty() ? "" : " at " + failure.section);
    std::string detail = failure.detail + "\ndrawn: arch " + found.spec.arch + " spec " + found.spec.spec.dump();
    if (found.shrunk_done)
      detail += "\nshrunk: arch " + found.shrunk.spec.arch + " spec " + found.shrunk.spec.spec.dump() +
                "\nconfig entry: " + found.config_line + "\nreproduce:\n" +
                reproduce_commands(settings, final_spec(found), found.shrunk.failure);
    out.cases.push_back({found.spec.family, found.spec.index, failure.lane, failure.verdict, report::Outcome::failed,
                         report::failure_message(verdict, failure.detail), detail, 0});
  }
  for (const auto& skip : tally.skipped)
    out.cases.push_back({skip.spec.family, skip.spec.index, skip.lane, "SKIPPED", report::Outcome::skipped,
                         "SKIPPED: " + skip.reason, "arch " + skip.spec.arch + " spec " + skip.spec.spec.dump(), 0});
  report::judge_rows(out);
  return out;
}

void write_reports(const RunSettings& settings, const RunTally& tally, const report::RunInfo& run) {
  report::Report summary = lane_report(settings, tally, run);
  try {
    if (!settings.json_path.empty())
      report::write_json_report(settings.json_path, json_report(settings, tally), summary);
    if (!settings.junit_path.empty()) report::write_report_file(settings.junit_path, report::junit_xml(summary));
  } catch (const std::runtime_error& error) {
    throw driver::InfrastructureError(error.what());
  }
}

}  // namespace kemit::fuzz

// The fuzz run's views: terminal text, JSON (--json) and JUnit XML (--junit), written through the
// driver's atomic writer.
#include "kemit/fuzz/report.h"

#include <fmt/format.h>

#include "kemit/driver/reports.h"

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

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (byte < 0x20 && c != '\n' && c != '\t') out += '?';
    else out += c;
  }
  return out;
}

std::string failure_headline(const FoundFailure& found) {
  const Failure& failure = found.failure;
  return found.spec.family + " spec " + std::to_string(found.spec.index) + " [" + failure.lane + " " +
         failure.verdict + (failure.section.empty() ? "" : " at " + failure.section) + "]";
}

const DrawnSpec& final_spec(const FoundFailure& found) { return found.shrunk_done ? found.shrunk.spec : found.spec; }

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
  json families = json::object(), failures = json::array();
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
  return {{"tool", "kemit_fuzz"}, {"result", tally.green() ? "GREEN" : "RED"}, {"seed", tally.seed},
          {"specs", tally.specs}, {"failing_specs", tally.failing_specs}, {"wall_seconds", tally.seconds},
          {"cpu_seconds", tally.cpu_seconds}, {"lanes", {{"parity", true}, {"llvm", settings.lanes.llvm},
          {"codegen", settings.lanes.codegen}, {"numerics", settings.lanes.numerics}}},
          {"draws", tally.kinds}, {"domain_agrees", tally.domain_agrees}, {"families", families},
          {"failures", failures}};
}

std::string junit_report(const RunTally& tally) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (const auto& [family, row] : tally.families) {
    std::vector<const FoundFailure*> mine;
    for (const auto& found : tally.failures)
      if (found.spec.family == family) mine.push_back(&found);
    out += fmt::format("  <testsuite name=\"fuzz.{}\" tests=\"{}\" failures=\"{}\">\n", family, mine.size() + 1,
                       mine.size() + (row.failed && mine.empty()));
    out += fmt::format("    <testcase classname=\"fuzz.{}\" name=\"{} specs\"/>\n", family, row.specs);
    for (const auto* found : mine)
      out += fmt::format("    <testcase classname=\"fuzz.{}\" name=\"{}\"><failure message=\"{}\">{}</failure></testcase>\n",
                         family, xml_escaped(failure_headline(*found)), xml_escaped(found->failure.verdict),
                         xml_escaped(found->failure.detail + "\nshrunk: " + found->config_line));
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

void write_reports(const RunSettings& settings, const RunTally& tally) {
  if (!settings.json_path.empty())
    driver::write_file_atomically(settings.json_path, json_report(settings, tally).dump(2) + "\n");
  if (!settings.junit_path.empty()) driver::write_file_atomically(settings.junit_path, junit_report(tally));
}

}  // namespace kemit::fuzz

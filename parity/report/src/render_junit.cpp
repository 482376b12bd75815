// The one JUnit writer (pugixml). Shape and names: render.h; schema: tests/report/junit.xsd.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include <pugixml.hpp>

#include "kemit/input_limits.h"
#include "kemit/report/render.h"

namespace kemit::report {
namespace {

// Every text of the document: safe UTF-8 (limits::cut_text, uncut: an ill-formed byte would
// make the file no XML at all), and XML 1.0 cannot carry most control characters, even escaped,
// nor U+FFFE and U+FFFF: they become '?'.
std::string xml_safe(const std::string& text) {
  std::string out = limits::cut_text(text, limits::kNoCut);
  for (size_t i = 0; i < out.size(); ++i) {
    auto byte = static_cast<unsigned char>(out[i]);
    if (byte < 0x20 && out[i] != '\n' && out[i] != '\t' && out[i] != '\r') out[i] = '?';
    if (byte == 0xEF && i + 2 < out.size() && out[i + 1] == '\xBF' && (out[i + 2] == '\xBE' || out[i + 2] == '\xBF'))
      out.replace(i, 3, "?");
  }
  return out;
}

std::string seconds_text(double seconds) { return fmt::format("{:.3f}", seconds < 0 ? 0.0 : seconds); }

void add_property(pugi::xml_node properties, const std::string& name, const std::string& value) {
  pugi::xml_node property = properties.append_child("property");
  property.append_attribute("name") = xml_safe(name).c_str();
  property.append_attribute("value") = xml_safe(value).c_str();
}

std::string evidence_text(const Evidence& e) {
  return fmt::format("passed {}, failed {}, not_applicable {}, unexplained {}, blocking {}", e.passed, e.failed,
                     e.not_applicable, e.unexplained, e.blocking);
}

void add_case(pugi::xml_node suite, const std::string& classname, const Case& c) {
  pugi::xml_node testcase = suite.append_child("testcase");
  testcase.append_attribute("name") = xml_safe(case_name(c)).c_str();
  testcase.append_attribute("classname") = xml_safe(classname).c_str();
  testcase.append_attribute("time") = seconds_text(c.seconds).c_str();
  if (c.outcome == Outcome::passed) return;
  pugi::xml_node child = testcase.append_child(c.outcome == Outcome::failed ? "failure" : "skipped");
  child.append_attribute("message") = xml_safe(c.message.empty() ? c.verdict : c.message).c_str();
  if (c.outcome == Outcome::failed) {
    child.append_attribute("type") = xml_safe(c.verdict).c_str();
    if (!c.detail.empty()) child.text().set(xml_safe(c.detail).c_str());
  }
}

// A RED row whose failures no failing case of the report shows (nothing was checked, an engine
// lacks the family) becomes one case of the family itself, so the CI system shows it.
std::vector<Case> unexplained_red_rows(const Report& report) {
  std::map<std::pair<std::string, std::string>, int> failing;
  for (const auto& c : report.cases)
    if (c.outcome == Outcome::failed) ++failing[{c.family, c.section}];
  std::vector<Case> out;
  for (const auto& row : report.rows)
    if (row.status == Status::red && failing[{row.family, row.section}] == 0)
      out.push_back({row.family, std::nullopt, row.section, "RED", Outcome::failed, "RED: " + row.note, row.note, 0});
  return out;
}

struct SuiteTotals {
  int tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
};

void add_run_properties(pugi::xml_node properties, const Report& report) {
  const RunInfo& run = report.run;
  add_property(properties, "format", kFormat);
  add_property(properties, "tool", run.tool + " " + run.tool_version);
  add_property(properties, "commit", run.commit);
  add_property(properties, "result", report.green() ? "GREEN" : "RED");
  if (run.shard) add_property(properties, "shard", run.shard->text());
}

}  // namespace

std::string junit_xml(const Report& report) {
  pugi::xml_document document;
  pugi::xml_node declaration = document.append_child(pugi::node_declaration);
  declaration.append_attribute("version") = "1.0";
  declaration.append_attribute("encoding") = "UTF-8";
  pugi::xml_node root = document.append_child("testsuites");
  root.append_attribute("name") = xml_safe(report.run.tool).c_str();

  std::vector<Case> cases = report.cases;
  for (auto& c : unexplained_red_rows(report)) cases.push_back(std::move(c));
  for (const auto& failure : report.run_failures)
    cases.push_back({"run", std::nullopt, "run", "RUN_FAILURE", Outcome::failed, "RUN_FAILURE: " + failure, failure, 0});
  std::vector<std::string> families;  // in the order of the rows, then of any further cases
  for (const auto& row : report.rows)
    if (std::find(families.begin(), families.end(), row.family) == families.end()) families.push_back(row.family);
  for (const auto& c : cases)
    if (std::find(families.begin(), families.end(), c.family) == families.end()) families.push_back(c.family);

  SuiteTotals all;
  for (const auto& family : families) {
    std::string name = report.lane + "." + family;
    pugi::xml_node suite = root.append_child("testsuite");
    suite.append_attribute("name") = xml_safe(name).c_str();
    pugi::xml_node properties = suite.append_child("properties");
    add_run_properties(properties, report);
    for (const auto& row : report.rows) {
      if (row.family != family) continue;
      add_property(properties, "status." + row.section, status_name(row.status) + (row.note.empty() ? "" : ": " + row.note));
      add_property(properties, "evidence." + row.section, evidence_text(row.evidence));
    }
    SuiteTotals totals;
    for (const auto& c : cases) {
      if (c.family != family) continue;
      add_case(suite, name, c);
      ++totals.tests;
      totals.failures += c.outcome == Outcome::failed;
      totals.skipped += c.outcome == Outcome::skipped;
      totals.seconds += c.seconds;
    }
    suite.append_attribute("tests") = totals.tests;
    suite.append_attribute("failures") = totals.failures;
    suite.append_attribute("errors") = 0;
    suite.append_attribute("skipped") = totals.skipped;
    suite.append_attribute("time") = seconds_text(totals.seconds).c_str();
    suite.append_attribute("timestamp") = xml_safe(report.run.started.substr(0, 19)).c_str();
    all.tests += totals.tests;
    all.failures += totals.failures;
  }
  root.append_attribute("tests") = all.tests;
  root.append_attribute("failures") = all.failures;
  root.append_attribute("errors") = 0;
  root.append_attribute("time") = seconds_text(report.run.duration_seconds).c_str();
  std::ostringstream out;
  document.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
  return out.str();
}

}  // namespace kemit::report

// The two files of a report: the JSON envelope (merged into a lane's own JSON report) and the
// JUnit XML that GitLab and Jenkins read (tests/report/junit.xsd), written with pugixml. Naming:
// a <testsuite> "<lane>.<family>" per family, a <testcase> "<family>:<id>@<section>" per config
// and section (classname = the suite's name), row statuses as suite <properties>, never as
// failures; a RED row no failing case explains gets one case "<family>@<section>".
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "kemit/report/report.h"

namespace kemit::report {

// {"format", "tool", "tool_version", "commit", "started", "duration_seconds", "repro",
//  "run_key", "shard", "lane", "summary": {"result", "rows", "cases", "run_failures"}}.
nlohmann::json envelope_json(const Report& report);

// The inverse of envelope_json; throws std::invalid_argument naming what is missing or wrong.
Report report_from_json(const nlohmann::json& document);

std::string junit_xml(const Report& report);

// Writes through a temporary file and a rename (no reader sees half a report); throws
// std::runtime_error naming the file.
void write_text_file(const std::string& path, const std::string& content);

// The lane's own JSON (may be an empty object) with the envelope added, written to `path`.
void write_json_report(const std::string& path, nlohmann::json lane_json, const Report& report);

}  // namespace kemit::report

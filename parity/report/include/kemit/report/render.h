// The two files of a report: the JSON envelope (merged into a lane's own JSON report) and the
// JUnit XML that GitLab and Jenkins read (tests/report/junit.xsd), written with pugixml. Naming:
// a <testsuite> "<lane>.<family>" per family, a <testcase> "<family>:<id>@<section>" per config
// and section (classname = the suite's name), row statuses as suite <properties>, never as
// failures; a RED row no failing case explains gets one case "<family>@<section>".
#pragma once
#include <string>
#include <utility>
#include <vector>

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

// Why `path` may not be a report file, or "" when it may: a report never names a file under a
// golden shard folder or a parity config folder (any `golden/shards/` or `parity/configs/`, and
// each folder of `stores`: a run's --golden-dir and --configs), nor a symlink or a non-regular
// file. `flag` names the option in the message ("--json").
std::string report_target_problem(const std::string& flag, const std::string& path,
                                  const std::vector<std::string>& stores = {});

// report_target_problem for each (flag, path) given (an empty path is no report): the first problem.
std::string report_targets_problem(const std::vector<std::pair<std::string, std::string>>& flag_paths,
                                   const std::vector<std::string>& stores);

// write_text_file for a report: refused (std::runtime_error) where report_target_problem says so.
void write_report_file(const std::string& path, const std::string& content);

// Every string of `document` (keys too) as limits::cut_text makes it: valid UTF-8, uncut. The
// JSON writer throws on invalid UTF-8; a report must be written whatever bytes a worker sent.
void make_text_safe(nlohmann::json& document);

// The lane's own JSON (may be an empty object) with the envelope added, written to `path`
// (a report file: write_report_file), every string made safe first.
void write_json_report(const std::string& path, nlohmann::json lane_json, const Report& report);

}  // namespace kemit::report

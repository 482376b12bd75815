// The views of a fuzz run: the terminal text (one line per family, the failures with their shrunk
// spec, config entry and reproduce commands, then RESULT), the JSON and the JUnit XML reports.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kemit/fuzz/fuzz.h"

namespace kemit::fuzz {

void write_text(const RunSettings& settings, const RunTally& tally, std::ostream& out);
nlohmann::json json_report(const RunSettings& settings, const RunTally& tally);
std::string junit_report(const RunTally& tally);
// --json / --junit, atomically. Throws driver::InfrastructureError naming the file.
void write_reports(const RunSettings& settings, const RunTally& tally);

}  // namespace kemit::fuzz

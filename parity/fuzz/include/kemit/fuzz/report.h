// The views of a fuzz run: the terminal text (one line per family, the failures with their shrunk
// spec, config entry and reproduce commands, then RESULT), the JSON and the JUnit XML reports.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kemit/fuzz/fuzz.h"
#include "kemit/report/report.h"

namespace kemit::fuzz {

void write_text(const RunSettings& settings, const RunTally& tally, std::ostream& out);
nlohmann::json json_report(const RunSettings& settings, const RunTally& tally);
// The run as every lane reports it (docs/reports.md, lane "fuzz"): a row per family and lane
// (parity, llvm, numerics: specs passed, failed, not applicable) and a failing case per distinct
// failure (id = the spec's index in the run, detail = drawn and shrunk spec, config line, repro).
report::Report lane_report(const RunSettings& settings, const RunTally& tally, report::RunInfo run);
// --json (the fuzzer's own JSON with the shared envelope) and --junit (the one JUnit writer),
// atomically. Throws driver::InfrastructureError naming the file.
void write_reports(const RunSettings& settings, const RunTally& tally, const report::RunInfo& run);

}  // namespace kemit::fuzz

// The views of a RunOutcome: the terminal text and the JSON report (--json). Both are pure
// functions of the outcome, so run_diff can reuse them; the JUnit report and the JSON envelope
// come from parity_report.h and the one writer of kemit/report/render.h.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "kemit/driver/outcome.h"

namespace kemit::driver {

// One line per family and section with its counts by verdict, then every failure (family,
// config id, sections, verdict, detail, repro commands), then `RESULT: GREEN` or `RESULT: RED`.
void write_text_report(const RunOutcome& outcome, std::ostream& out);

// {"result", "engines", "flavors", "families": [{"family", "file", "rows": [...],
//  "configs": [{"id", "expect", "spec_digest", "sections": {"canonical": {"verdict", "sha256":
//  {"py": hex|null, "cpp": hex|null}, "refusal": {...}, "detail", "repro"}, ...}}]}]}
nlohmann::json json_report(const RunOutcome& outcome);

// Writes through a temporary file and a rename, so a reader never sees half a report.
// Throws InfrastructureError naming the file.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace kemit::driver

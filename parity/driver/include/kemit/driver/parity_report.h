// A parity run as a kemit report (kemit/report/report.h): its rows and cases, for the JSON
// envelope, the one JUnit writer and `kemit_report merge`. run_diff reuses the pieces.
#pragma once
#include <string>
#include <vector>

#include "kemit/driver/outcome.h"
#include "kemit/report/report.h"

namespace kemit::driver {

// One row per family and section (canonical, then each flavor), with the driver's notes.
std::vector<report::Row> parity_rows(const RunOutcome& outcome);

// One case per config and section ("<family>:<id>@<section>"); only the failing ones when
// `failing_only` (run_diff's golden report shows parity's failures, not its passes).
std::vector<report::Case> parity_cases(const RunOutcome& outcome, bool failing_only);

report::Report parity_report(const RunOutcome& outcome, const report::RunInfo& run);

}  // namespace kemit::driver

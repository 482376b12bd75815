// The closed set of per-section verdicts of docs/protocol.md.
#pragma once
#include <string>
#include <vector>

namespace kemit::driver {

enum class Verdict {
  identical,
  both_rejected,
  reason_differs,
  asymmetric,
  mismatch,
  crash,
  timeout,
  expectation_failed,
};

// "IDENTICAL", "BOTH_REJECTED", ... as printed and written to reports.
const char* verdict_name(Verdict verdict);
// True for every verdict except IDENTICAL and BOTH_REJECTED.
bool verdict_fails(Verdict verdict);
// All verdicts in report order.
const std::vector<Verdict>& all_verdicts();

}  // namespace kemit::driver

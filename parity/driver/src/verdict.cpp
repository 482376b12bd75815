#include "kemit/driver/verdict.h"

namespace kemit::driver {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::identical: return "IDENTICAL";
    case Verdict::both_rejected: return "BOTH_REJECTED";
    case Verdict::reason_differs: return "REASON_DIFFERS";
    case Verdict::asymmetric: return "ASYMMETRIC";
    case Verdict::mismatch: return "MISMATCH";
    case Verdict::crash: return "CRASH";
    case Verdict::timeout: return "TIMEOUT";
    case Verdict::expectation_failed: return "EXPECTATION_FAILED";
  }
  return "CRASH";  // unreachable: the switch is exhaustive, and failing closed is the safe default
}

bool verdict_fails(Verdict verdict) { return verdict != Verdict::identical && verdict != Verdict::both_rejected; }

const std::vector<Verdict>& all_verdicts() {
  static const std::vector<Verdict> order = {
      Verdict::identical, Verdict::both_rejected, Verdict::reason_differs, Verdict::asymmetric,
      Verdict::mismatch,  Verdict::crash,         Verdict::timeout,        Verdict::expectation_failed};
  return order;
}

}  // namespace kemit::driver

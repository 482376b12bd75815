// Reading the prover's findings in tests: the one finding of a kind on an op, and its witness.
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kemit/proof/plan.h"
#include "kemit/proof/prover.h"

namespace kemit::proof::test {

inline std::vector<Finding> prove(const std::string& canonical, const std::string& plan, ProofStats* stats = nullptr) {
  return prove_module(canonical, plan, ArchLimits{}, ProverOptions{}, stats);
}

// The finding of `kind` whose op line starts with `op` (e.g. "%6 = mul"); fails the test when
// there is not exactly one.
inline Finding only(const std::vector<Finding>& findings, const std::string& kind, const std::string& op) {
  std::vector<Finding> matches;
  for (const auto& f : findings)
    if (f.kind == kind && f.op.rfind(op, 0) == 0) matches.push_back(f);
  EXPECT_EQ(matches.size(), 1u) << "findings of " << kind << " on '" << op << "'";
  return matches.empty() ? Finding{} : matches[0];
}

// Every finding that is not PROVEN, one per line (the message of a failed expectation).
inline std::string failures(const std::vector<Finding>& findings, bool with_lowering = false) {
  std::string text;
  for (const auto& f : findings)
    if (f.verdict != ProofVerdict::PROVEN && (with_lowering || !f.lowering_only)) text += finding_text(f) + "\n";
  return text;
}

}  // namespace kemit::proof::test

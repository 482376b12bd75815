// The witness run that follows a REFUTED verdict in kemit_prove (docs/contracts.md, "Witness
// runs"): the witness becomes a launch (kemit/proof/witness_launch.h) and the reference
// interpreter runs its workgroup at real size, so the verdict shows the poison or the
// out-of-bounds access the broken promise causes. The launch goes into the answer too, for the
// lane to run in each flavor's executor.
#pragma once
#include <map>
#include <string>

namespace kemit::proof {

struct WitnessRun {
  std::string launch;   // the launch description as JSON; "" when none could be made
  std::string outcome;  // "witness run (interpreter): ..." (what the run showed, or why there is none)
};

class WitnessRunner {
 public:
  WitnessRunner(std::string canonical, std::string plan) : canonical_(std::move(canonical)), plan_(std::move(plan)) {}
  // The run of `witness` (a finding's JSON), made once per witness.
  const WitnessRun& run(const std::string& witness);

 private:
  std::string canonical_, plan_;
  std::map<std::string, WitnessRun> runs_;
};

}  // namespace kemit::proof

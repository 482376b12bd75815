// The proof phase of check_llvm (docs/contracts.md, "The lane"): per config, the prover worker
// (proof/, kemit_prove) proves every promise of the canonical module and of each flavor's LLVM
// module at every launch the config's plan allows. A REFUTED or UNPROVEN promise fails the
// config's modules: PROOF_REFUTED / PROOF_UNPROVEN naming the op, its section, the contract and
// the witness. Answers are kept in the shared result cache, keyed by the texts, the processor's
// limits and the prover's own binary.
#pragma once
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "kemit/driver/arch_facts.h"
#include "kemit/lane/lane.h"

namespace kemit::lane {

struct ProofRequest {
  std::string family;
  int config = 0;
  std::string arch;
  std::string canonical;
  std::string plan;
  std::map<std::string, std::string> llvm;  // flavor -> module text
};

struct SectionProof {
  std::string verdict;  // PROVEN, REFUTED, UNPROVEN
  std::string detail;   // the first failure line ("" when PROVEN); a REFUTED one ends with its witness runs
  long long obligations = 0;
  std::string witness_launch;  // REFUTED: the launch description of its first witness (JSON), "" when none
  std::string executor_run;    // a flavor's: the config's first witness run in that flavor's executor
};

struct ProofAnswer {
  std::map<std::string, SectionProof> sections;  // "canonical" and each flavor
};

struct ProofOptions {
  std::string prover;     // kemit_prove; "" = the one this build made
  std::string cache_dir;  // "" = no cache
  int jobs = 0;           // 0 = number of CPUs
  std::chrono::milliseconds timeout{600000};
  // flavor -> its kemit_llcheckN: a REFUTED flavor section's witness runs in that flavor's executor.
  std::map<std::string, std::string> checkers;
  std::chrono::milliseconds witness_timeout{30000};
};

struct ProofRunStats {
  double cpu_seconds = 0;  // the prover's own CPU over the misses (children's user + system)
  std::string cache_summary;
};

std::string default_prover_path();
// The result cache's key of a proof answer: the prover's digest and all it is asked (the texts,
// the plan and the processor's limits; a config's name is no part of its proof).
std::string proof_cache_key(const std::string& prover_digest, const ProofRequest& request,
                            const driver::ArchFacts& arch);
std::vector<ProofAnswer> run_proofs(const std::vector<ProofRequest>& requests,
                                    const std::vector<driver::ArchFacts>& archs, const ProofOptions& options,
                                    ProofRunStats* stats = nullptr);
// A module that passed the lane's own steps fails when its config's canonical section or its own
// flavor's section is not PROVEN (canonical first: it names the kernel's op).
void apply_proof(const ProofAnswer& answer, const std::string& flavor, LaneResult& result);

}  // namespace kemit::lane

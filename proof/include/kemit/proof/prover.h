// The prover of launch contracts (docs/contracts.md): every promise of a module's canonical IR
// at every launch its plan's contract allows, each PROVEN, REFUTED (with a witness) or UNPROVEN.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kemit::proof {

// The processor's limits (tables/archs.json; the engine's hello `arch_facts` carries them).
struct ArchLimits {
  int64_t max_block_lanes = 1024;
  int64_t max_grid_lanes = 4294967295;  // work-items per grid dimension (the packet's 32-bit size)
  int64_t lds_bytes = 65536;
  int64_t wave_size = 64;
};

enum class ProofVerdict { PROVEN, REFUTED, UNPROVEN };
const char* proof_verdict_name(ProofVerdict verdict);

// One obligation's verdict.
struct Finding {
  int launch = -1;           // index in the plan; -1: the module as a whole
  std::string kernel;
  std::string section = "canonical";  // or the flavor whose LLVM module carries the promise
  std::string kind;          // what is promised: nsw, nuw, disjoint, nneg, divisor, shift, index, bounds, align, ...
  std::string op;            // the canonical line of the op (or the plan's launch line)
  std::string llvm_name;     // the LLVM value that carries the promise (`%v12.next`), "" when none
  std::vector<std::string> llvm_flags;  // the LLVM flags of that value this obligation stands for
  bool lowering_only = false;  // a promise the canonical IR does not make, only its lowering may
  ProofVerdict verdict = ProofVerdict::PROVEN;
  std::string how;           // PROVEN: "intervals", "relations" or "z3"; otherwise why (what is broken, or what was not decided)
  std::string contract;      // the launch's contract: `launch 0 ew_add (sizes n in 1..2147483647)`
  std::string witness;       // REFUTED: JSON (docs/contracts.md "Witness")
};

// z3's limits per query. The resource limit (z3's `rlimit`: a count of its own steps) decides a
// verdict: a query past it is UNPROVEN whatever the machine's load, so verdicts repeat. The wall
// timeout is only a guard against a hang, far past what the resource limit allows on any machine.
struct ProverOptions {
  unsigned z3_rlimit = 20000000;
  unsigned z3_timeout_ms = 120000;
};

struct ProofStats {
  size_t obligations = 0, by_intervals = 0, by_relations = 0, by_z3 = 0, refuted = 0, unproven = 0;
};

// Every obligation of the module `canonical` (canonical IR text) under the plan `plan_text` (a
// version 2 plan). A version 1 plan gives one UNPROVEN finding: it states no contract. A text that
// is not canonical IR or not a plan throws std::invalid_argument naming the line.
std::vector<Finding> prove_module(const std::string& canonical, const std::string& plan_text, const ArchLimits& arch,
                                  const ProverOptions& options = {}, ProofStats* stats = nullptr);

// A question about one compare of a module, asked by kemit_mutate (docs/mutation.md "Verdicts"):
// can its left side minus its right side be `differ` (as bit-vectors of the operands' width) where
// it runs? `name` is the compare as the LLVM modules name it: `%v20` (the canonical icmp %20),
// `%v18.guard` (does loop %18 run: lo against hi), `%v18.again` (another trip: iv + step against hi).
// A compare mutated from `<` to `<=`, or its constant moved by one, changes nothing where the
// answer is PROVEN: the two sides never meet at the one point where the two compares disagree.
struct CompareQuestion {
  std::string name;
  int64_t differ = 0;
};

struct CompareAnswer {
  CompareQuestion question;
  Finding finding;  // kind `differ D`, llvm_name the question's name: PROVEN, REFUTED with a witness, or UNPROVEN
};

// One answer per question and launch whose walk reaches the compare; a question no launch reaches
// has none. Throws like prove_module on a text that does not read.
std::vector<CompareAnswer> answer_compare_questions(const std::string& canonical, const std::string& plan_text,
                                              const ArchLimits& arch, const std::vector<CompareQuestion>& questions,
                                              const ProverOptions& options = {});

// A promise an LLVM module makes: an instruction's flag, named by its value (docs/ir.md "Lowering").
struct LlvmPromise {
  std::string name;         // `%v12.next`
  std::string flag;         // nsw nuw exact nneg disjoint inbounds
  std::string instruction;  // the opcode: add, getelementptr ...
};
// Every promise of an LLVM module's text, in order (docs/contracts.md "The LLVM modules").
std::vector<LlvmPromise> read_llvm_promises(const std::string& text);
// Each promise of a flavor's module mapped to the canonical findings that stand for it (one per
// launch), as findings of `section` (the flavor); a promise no obligation stands for is UNPROVEN.
std::vector<Finding> map_llvm_promises(const std::vector<Finding>& canonical, const std::vector<LlvmPromise>& promises,
                                       const std::string& section);

// One line for a failed finding: the verdict, the promise, its op, section, contract and witness.
std::string finding_text(const Finding& finding);

}  // namespace kemit::proof

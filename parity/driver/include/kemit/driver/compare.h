// Judging one config: two engines' answers -> one verdict per section (canonical, then each
// flavor), fail closed: anything the contract does not describe is CRASH, never a pass.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/verdict.h"
#include "kemit/driver/worker_pool.h"

namespace kemit::driver {

struct SectionResult {
  std::string section;  // "canonical" or a flavor name
  Verdict verdict = Verdict::crash;
  std::string detail;   // why it failed; empty when it passed
  std::string repro;    // when it failed: the commands that print each side, one per line
  std::vector<ReproCommand> repro_commands;  // the same commands as argv (JSON `repro_argv`)
  std::vector<std::optional<std::string>> sha256;  // per engine: sha256 of its emitted text, if any (and digests)
  std::vector<std::string> refusal;                // per engine: its refusal reason, "" if none
  bool gate_refused = false;  // both engines refused this flavor by its gate, after validation passed
};

struct ConfigResult {
  int id = 0;
  Expect expect = Expect::emit;
  std::string spec_digest;
  bool validated = false;  // both engines accepted the spec (top-level status "ok")
  std::vector<SectionResult> sections;  // canonical first, then the flavors in order
  double seconds = 0;  // both engines' time on it (reports give each section an even share)
};

// What judging needs to know beyond the answers: who the engines are and how to reproduce.
struct CompareContext {
  std::vector<std::string> engine_names;  // exactly two, e.g. {"py", "cpp"}
  std::vector<std::string> flavors;       // canonical names, in order
  EngineLocations locations;              // for the repro commands
  std::string config_path;                // as printed in repro commands, e.g. parity/configs/x.json
  bool digests = true;  // sha256 of every emitted text (reports, golden); the fuzzer keeps none
};

// The emit request of one config (without the "id" the pool adds).
nlohmann::json emit_request(const std::string& family, const ParityConfig& config,
                            const std::vector<std::string>& flavors);

// Judges one config from both engines' answers (answers[i] belongs to context.engine_names[i]).
ConfigResult compare_config(const ParityConfig& config, const std::vector<Answer>& answers,
                            const CompareContext& context);
// The same, the two answers apart (no copy of them: an answer holds every emitted text).
ConfigResult compare_config(const ParityConfig& config, const Answer& left, const Answer& right,
                            const CompareContext& context);

}  // namespace kemit::driver

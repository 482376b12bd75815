// kemit_fuzz as a library: the run (draw -> lanes -> shrink -> report -> promote), the domain
// check, and the command line on top.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "kemit/fuzz/draw.h"
#include "kemit/fuzz/lanes.h"
#include "kemit/fuzz/shrink.h"

namespace kemit::fuzz {

struct RunSettings {
  FuzzOptions lanes;
  uint64_t seed = 1;
  long budget_specs = 0;       // stop after this many specs (0: no limit in specs)
  double budget_seconds = 0;   // stop once this much wall time has passed (0: no limit in time)
  std::vector<std::string> only;   // substrings of family names
  std::vector<std::string> archs;  // empty: every processor of the arch table
  std::string domains_dir;         // default <root>/parity/domains
  int batch = 512;                 // specs per round trip through the lanes
  int max_shrinks = 8;             // distinct failures (family, lane, verdict) shrunk
  bool promote = false;            // append each shrunk failure to parity/configs/<family>.json
  std::string json_path, junit_path;
  std::vector<std::string> argv;   // the command line, for the reports' repro and run key
};

struct FamilyTally {
  long specs = 0, accepted = 0, modules = 0, numerics_ok = 0, numerics_skipped = 0, failed = 0;
  // Specs by lane, for the report's rows: failed in the lane; passed the LLVM lane (every module).
  long parity_failed = 0, llvm_passed = 0, llvm_failed = 0, numerics_failed = 0;
};

struct FoundFailure {
  DrawnSpec spec;
  Failure failure;
  Shrunk shrunk;
  bool shrunk_done = false;
  std::string config_line;  // the ready-to-add parity config entry (id 0 until promoted)
  int promoted_id = 0;
};

// A spec a lane did not run, and why (the report lists every one: a skip is never a silent pass).
struct SkippedSpec {
  DrawnSpec spec;
  std::string lane;  // numerics
  std::string reason;
};

struct RunTally {
  uint64_t seed = 0;
  long specs = 0;
  double seconds = 0, cpu_seconds = 0;
  std::map<std::string, FamilyTally> families;
  std::map<std::string, long> kinds;  // draws per kind
  long domain_agrees = 0;             // the domain predicted the reference engine's decision
  std::vector<std::string> domain_misses;  // a few examples where it did not
  std::vector<FoundFailure> failures;      // one per distinct (family, lane, verdict), in draw order
  std::vector<SkippedSpec> skipped;        // every skipped spec, in draw order
  long failing_specs = 0;
  bool green() const { return specs > 0 && failing_specs == 0; }
};

RunTally run_fuzz(const RunSettings& settings, std::ostream& notes);

// The commands that reproduce one spec: kemit_fuzz on it, and each engine's single-shot CLI.
std::string reproduce_commands(const RunSettings& settings, const DrawnSpec& spec, const Failure& failure);

// A family --only chooses (substrings of family names; none given: every family).
bool family_selected(const std::string& family, const std::vector<std::string>& only);

// Every numbered config of the selected families lies inside its family's domain: `expect: emit`
// configs valid, `expect: reject` configs invalid or malformed; every family the engines serve has
// a domain, whose fields are the engines' (names, types, defaults: each engine's parse_spec of {}).
// Prints one line per problem and the verdict; returns 0 (inside), 1 (a problem), 2 (input error).
int check_domains(const RunSettings& settings, const std::string& configs_dir, std::ostream& out);

int kemit_fuzz_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace kemit::fuzz

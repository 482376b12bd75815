// What decides one module's verdict (VerdictInputs), and what only decides how fast the lane
// gets there (RunSettings). The lane's steps take these two and nothing else, and the result
// cache's key is the hash of VerdictInputs (lane_cache.h), so no input of a verdict can be
// missing from its key.
#pragma once
#include <chrono>
#include <string>

#include "kemit/lane/lane.h"

namespace kemit::lane {

// Everything that decides one module's LaneResult. The lane's steps (compute_results and the
// phases it calls) read a module's facts from here only; what they read besides is how fast
// and how long to wait (jobs, checkers, timeouts: a timeout is a CRASH, never stored), never
// what. lane_cache_inputs() names every field, so a field added here is in the key, or the
// build fails until someone decides how it is named.
struct VerdictInputs {
  LaneModule module;              // text, its file name (family, config), flavor, arch, expect_no_spill
  driver::FlavorFacts flavor;     // the engine's hello: major, datalayout, processor allow-list
  bool run_codegen = true;
  Codegen codegen = Codegen::INPROCESS;
  Toolchain toolchain;            // the checker (and llc) of flavor.major: named by their bytes
  std::string llvm_version;       // the version the checker announces (READY line); "" uncached
};

// How many processes, and how long to wait for one. A checker past its timeout is CRASH and
// llc past its timeout is `timed_out`: neither is ever stored.
struct RunSettings {
  int jobs = 0;
  int checkers_per_flavor = 1;
  std::chrono::milliseconds checker_timeout{30'000};
  std::chrono::milliseconds llc_timeout{120'000};
  std::string progress_label;
};

}  // namespace kemit::lane

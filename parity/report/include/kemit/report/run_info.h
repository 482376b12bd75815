// The facts of a run that every report carries: when it started, how long it took, the commit
// of the tree, the version, the argv that repeats it, and the key that ties its shards together.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "kemit/report/report.h"

namespace kemit::report {

// kemit's version (the CMake project version).
std::string tool_version();

// `git -C root rev-parse HEAD`, or "unknown".
std::string tree_commit(const std::string& root);

// Now, UTC, ISO 8601 with seconds ("2026-12-02T15:04:05Z").
std::string utc_now_iso8601();

// argv with the flags that only name outputs or pick a shard removed (--shard, --json, --junit,
// with their values) and argv[0] reduced to its file name: the same for every shard of one run.
std::string run_key_of(const std::vector<std::string>& argv);

// Starts the clock: RunInfo with tool, version, commit, start time, repro, run key and shard.
class RunClock {
 public:
  RunClock(std::string tool, const std::string& root, std::vector<std::string> argv, std::optional<Shard> shard);
  // The RunInfo with the duration so far.
  RunInfo finish() const;

 private:
  RunInfo info_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kemit::report

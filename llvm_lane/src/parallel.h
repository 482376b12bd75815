// A bounded worker pool for the lane's independent jobs (checker sessions, llc runs).
#pragma once
#include <cstddef>
#include <functional>

namespace kemit::lane {

int default_jobs();  // number of CPUs, at least 1

// Calls job(0..count-1) on at most `workers` threads; returns when all are done.
// `job` must not throw (the lane turns every failure into a verdict).
void parallel_for(size_t count, int workers, const std::function<void(size_t)>& job);

}  // namespace kemit::lane

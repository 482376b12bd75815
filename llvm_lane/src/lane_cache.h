// What decides one module's verdict, and the LLVM lane's entries in the shared result cache
// (kemit/lane_support/result_cache.h): the key is the hash of that same structure, and a
// stored LaneResult (JSON) is believed only when it fits the lane's schema for those inputs.
#pragma once
#include <optional>
#include <string>

#include "verdict_inputs.h"
#include "kemit/lane_support/result_cache.h"

namespace kemit::lane {

// Bump when the lane's logic changes a verdict, a detail, a resource figure or an ISA profile
// count (isa_profile.cpp): every entry written before then stops matching. Occupancy and intents
// are computed after the cache and need no bump.
inline constexpr const char* kLaneCacheVersion = "llvm-lane 5";  // 5: the ISA profile per kernel

// The named fields the key hashes (lane version first); the checker's and, when step 5 runs
// llc, llc's sha256 stand for their paths (lane_support::file_sha256, once per process).
lane_support::CacheInputs lane_cache_inputs(const VerdictInputs& inputs);
std::string lane_cache_key(const VerdictInputs& inputs);

std::string encode_lane_result(const LaneResult& result);
// The stored value as a LaneResult, or nullopt with `why` set when it breaks the input limits
// (nesting, numbers) or the lane's schema for these inputs: a verdict the lane stores, figures
// from 0 to the shard limit of counts, at least one kernel and a code digest where codegen
// succeeded, none where it did not run.
std::optional<LaneResult> decode_lane_result(const std::string& value, const VerdictInputs& inputs, std::string& why);

// A crash (it may be a timeout on a busy machine) or a missing toolchain is never stored.
bool worth_caching(const LaneResult& result);

}  // namespace kemit::lane

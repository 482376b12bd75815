// The LLVM lane's entries in the shared result cache (kemit/lane_support/result_cache.h):
// what goes into a key, and a LaneResult as the stored value (JSON).
#pragma once
#include <optional>
#include <string>

#include "kemit/lane/lane.h"

namespace kemit::lane {

// Bump when the lane's logic changes a verdict, a detail or a resource figure:
// every entry written before then stops matching.
inline constexpr const char* kLaneCacheVersion = "llvm-lane 3";  // 3: the code digest (TWIN)

// sha256 of the lane version, the module's text and name (parse diagnostics name
// it), flavor, arch, expect_no_spill, codegen on/off and where, and the LLVM version.
std::string lane_cache_key(const LaneModule& module, const LaneOptions& options, const std::string& llvm_version);

std::string encode_lane_result(const LaneResult& result);
std::optional<LaneResult> decode_lane_result(const std::string& value);

// A crash (it may be a timeout on a busy machine) or a missing toolchain is never stored.
bool worth_caching(const LaneResult& result);

}  // namespace kemit::lane

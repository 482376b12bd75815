// Internal to run_diff: the roofline of one blessed config across the shard's git history, for
// --explain (docs/run_diff.md). Derived as `golden summary` derives it (kemit/golden/roofline.h):
// each commit's spec and stored waves/SIMD, today's intents expressions and peaks.
#pragma once
#include <cstdint>
#include <string>

#include "blessed_history.h"

namespace kemit::run_diff {

// The lines "== roofline of FAMILY #ID across the shard's history ...", then one line per commit of
// the shard (the newest 40) where the roofline or the stored waves changed, then the working tree's
// when it differs from the last commit's. An intents file that cannot be read is named in one line.
std::string roofline_history(const Options& options, BlessedHistory& history, std::uint64_t id);

}  // namespace kemit::run_diff

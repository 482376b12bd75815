// Internal: the pieces of the canonical shard text, for writers that assemble a file
// themselves (the conflict-marker writer of the merge driver).
#pragma once

#include <string>
#include <string_view>

#include "kemit/golden/shard.h"

namespace kemit::golden::detail {

// Everything up to and including the line `  "entries": [`.
void append_header(std::string& out, const Shard& shard, const Counters& counters);
// One entry line, indented, without the separating comma or newline.
void append_entry(std::string& out, const Entry& entry);
inline constexpr std::string_view kShardTail = "  ]\n}\n";

}  // namespace kemit::golden::detail

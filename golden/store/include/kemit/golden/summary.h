// `golden summary`: the counters of every shard and their totals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/golden/shard.h"

namespace kemit::golden {

struct FamilySummary {
  std::string family;
  std::vector<std::string> flavors;
  Counters counters;
};

// Configs of one family whose stored compiled code (a flavor section's `code`) is identical at one
// flavor and processor: all but one are redundant. Information, not a failure.
struct Twin {
  std::string family;
  std::string flavor;
  std::string arch;
  std::vector<std::uint64_t> ids;  // increasing
  std::string code;
};

struct Summary {
  std::vector<FamilySummary> families;  // by family name
  Counters totals;
  std::vector<std::string> flavors;     // every flavor of any shard, natural order
  std::vector<Twin> twins;              // by family, flavor, arch, first id
};

// The twins of one shard: every group of two or more entries with one code at a flavor and arch.
std::vector<Twin> shard_twins(const Shard& shard);

// Loads every shard of `shard_dir` strictly (the first bad shard throws GoldenError).
Summary summarize(const std::filesystem::path& shard_dir);

std::string summary_text(const Summary& summary);
nlohmann::json summary_json(const Summary& summary);

}  // namespace kemit::golden

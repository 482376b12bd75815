// `golden summary`: the counters of every shard and their totals.
#pragma once

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

struct Summary {
  std::vector<FamilySummary> families;  // by family name
  Counters totals;
  std::vector<std::string> flavors;     // every flavor of any shard, natural order
};

// Loads every shard of `shard_dir` strictly (the first bad shard throws GoldenError).
Summary summarize(const std::filesystem::path& shard_dir);

std::string summary_text(const Summary& summary);
nlohmann::json summary_json(const Summary& summary);

}  // namespace kemit::golden

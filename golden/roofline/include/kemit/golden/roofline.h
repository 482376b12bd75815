// The static roofline of the blessed configs (docs/isa_profile.md "Roofline", docs/golden.md
// "golden summary"), derived at READ time: a config's roofline is a function of its spec (today's
// parity/configs), its family's expressions (parity/intents) and its processor's peaks
// (tables/arch_peaks.json); only the occupancy comes from the shard (each flavor section's stored
// waves/SIMD). So the shards hold no roofline, and a new peak or expression needs no re-bless.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/golden/shard.h"
#include "kemit/lane/family_intents.h"
#include "kemit/lane/roofline.h"

namespace kemit::golden {

// A config as today's config file states it.
struct ConfigSpec {
  std::string arch;
  nlohmann::json spec;
  std::string spec_digest;  // of {"arch", "spec"}: differs from the entry's when the config changed since the bless
};

struct ConfigRoofline {
  std::uint64_t id = 0;
  std::string arch;
  std::string kernel;
  lane::Roofline roofline;  // waves_per_simd: the lowest stored waves of its flavors (0: none stored)
  std::map<std::string, std::uint64_t, FlavorLess> waves;  // per flavor section that stores waves
  bool spec_changed = false;  // today's spec digest is not the blessed one: the roofline is today's
};

struct FamilyRoofline {
  std::string family;
  std::string missing;  // why the family has none ("" when it states one)
  std::string unit;     // what the figures count
  std::vector<ConfigRoofline> configs;      // the blessed configs that emitted at some flavor, by id
  std::vector<std::uint64_t> without_config;  // blessed emitting ids today's config file lacks
};

// The rooflines of `shard`'s emitting entries (a flavor section that is not refused), from today's
// `configs` by id and the family's `intents` (null: the family has no intents file). An expression
// that cannot be evaluated makes that config's bound "unknown: <why>", naming the intents file.
FamilyRoofline family_roofline(const Shard& shard, const std::map<std::uint64_t, ConfigSpec>& configs,
                               const lane::FamilyIntents* intents);

// The same, reading today's configs from <configs_dir>/<family>.json (a family without one: every
// emitting entry in without_config). Throws std::runtime_error naming a bad file.
FamilyRoofline tree_family_roofline(const std::filesystem::path& configs_dir, const Shard& shard,
                                    const std::map<std::string, lane::FamilyIntents>& intents);

// <root>/parity/intents, as the lane reads it (kemit_roofline). Throws std::runtime_error naming
// the file and the expression for a malformed intents file.
std::map<std::string, lane::FamilyIntents> tree_intents(const std::filesystem::path& root);

struct RooflineTotals {
  std::size_t configs = 0, memory = 0, compute = 0, unknown = 0;
  double min_intensity = 0, max_intensity = 0;  // over the configs with figures
  std::optional<std::uint64_t> lowest_waves;    // the lowest stored waves/SIMD of any config and flavor
  std::uint64_t lowest_id = 0;                  // where it is (the first such config, its first flavor)
  std::string lowest_flavor;
};
RooflineTotals roofline_totals(const FamilyRoofline& family);

// "gemm_mma  12 configs: 10 memory-bound, 2 compute-bound, 0 unknown; intensity 5.3 .. 64 FLOP/B;
// lowest waves/SIMD 2 (#7 llvm22)", then with `per_config` one line per config.
std::string roofline_text(const FamilyRoofline& family, bool per_config);
// One config's line: lane::roofline_text, its stored waves per flavor, whether its spec changed.
std::string config_roofline_text(const ConfigRoofline& config);
// {"unit", "configs", "memory_bound", "compute_bound", "unknown", "intensity": {"min", "max"},
//  "lowest_waves_per_simd": {"waves", "id", "flavor"} | null, "missing"?, "without_config",
//  "per_config"?: [{"id", "arch", "kernel", "spec_changed", "waves": {flavor: n}, roofline_json...}]}
nlohmann::json roofline_json(const FamilyRoofline& family, bool per_config);
nlohmann::json config_roofline_json(const ConfigRoofline& config);

}  // namespace kemit::golden

// The rooflines of blessed configs, derived at read time (kemit/golden/roofline.h).
#include "kemit/golden/roofline.h"

#include <algorithm>
#include <stdexcept>

#include "kemit/driver/config.h"

namespace kemit::golden {
namespace {

// The stored waves/SIMD of each flavor section that emitted, and whether any emitted at all.
bool stored_waves(const Entry& entry, std::map<std::string, std::uint64_t, FlavorLess>& waves) {
  bool emitted = false;
  for (const auto& [flavor, section] : entry.flavors) {
    if (section.is_rejected()) continue;
    emitted = true;
    if (section.isa.waves) waves[flavor] = *section.isa.waves;
  }
  return emitted;
}

}  // namespace

FamilyRoofline family_roofline(const Shard& shard, const std::map<std::uint64_t, ConfigSpec>& configs,
                               const lane::FamilyIntents* intents) {
  FamilyRoofline out;
  out.family = shard.family;
  if (!intents)
    out.missing = "no parity/intents/" + shard.family + ".json";
  else if (!intents->roofline)
    out.missing = intents->file + " states no \"roofline\"";
  else
    out.unit = intents->roofline->unit;
  for (const Entry& entry : shard.entries) {
    ConfigRoofline config;
    if (entry.is_rejected() || !stored_waves(entry, config.waves)) continue;
    auto today = configs.find(entry.id);
    if (today == configs.end()) {
      out.without_config.push_back(entry.id);
      continue;
    }
    if (!out.missing.empty()) continue;
    config.id = entry.id;
    config.arch = today->second.arch;
    config.kernel = entry.kernel_name;
    config.spec_changed = today->second.spec_digest != entry.spec_digest;
    config.roofline = lane::roofline_or_why(*intents, today->second.spec, today->second.arch);
    if (!config.waves.empty())
      config.roofline.waves_per_simd = static_cast<int>(
          std::min_element(config.waves.begin(), config.waves.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; })->second);
    out.configs.push_back(std::move(config));
  }
  return out;
}

FamilyRoofline tree_family_roofline(const std::filesystem::path& configs_dir, const Shard& shard,
                                    const std::map<std::string, lane::FamilyIntents>& intents) {
  std::map<std::uint64_t, ConfigSpec> configs;
  const std::filesystem::path file = configs_dir / (shard.family + ".json");
  if (std::filesystem::exists(file)) {
    driver::FamilyConfigs family = driver::load_family_file(file, "parity/configs/" + shard.family + ".json");
    for (const auto& c : family.configs)
      configs[static_cast<std::uint64_t>(c.id)] = {c.arch, c.spec, driver::spec_digest(c.arch, c.spec)};
  }
  auto found = intents.find(shard.family);
  return family_roofline(shard, configs, found == intents.end() ? nullptr : &found->second);
}

std::map<std::string, lane::FamilyIntents> tree_intents(const std::filesystem::path& root) {
  return lane::load_intents((root / "parity" / "intents").string());
}

RooflineTotals roofline_totals(const FamilyRoofline& family) {
  RooflineTotals t;
  bool first_figure = true;
  for (const auto& c : family.configs) {
    ++t.configs;
    const std::string& bound = c.roofline.bound;
    (bound == "memory" ? t.memory : bound == "compute" ? t.compute : t.unknown) += 1;
    if (c.roofline.bytes > 0) {
      t.min_intensity = first_figure ? c.roofline.intensity : std::min(t.min_intensity, c.roofline.intensity);
      t.max_intensity = first_figure ? c.roofline.intensity : std::max(t.max_intensity, c.roofline.intensity);
      first_figure = false;
    }
    for (const auto& [flavor, waves] : c.waves)
      if (!t.lowest_waves || waves < *t.lowest_waves) t.lowest_waves = waves, t.lowest_id = c.id, t.lowest_flavor = flavor;
  }
  return t;
}

}  // namespace kemit::golden

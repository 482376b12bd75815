// The text and JSON of the rooflines of blessed configs (kemit/golden/roofline.h).
#include <fmt/format.h>

#include "kemit/golden/roofline.h"

namespace kemit::golden {
namespace {

std::string waves_text(const std::map<std::string, std::uint64_t, FlavorLess>& waves) {
  if (waves.empty()) return "the shard stores no waves";
  std::string text;
  for (const auto& [flavor, n] : waves) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", flavor, n);
  return text;
}

std::string ids_text(const std::vector<std::uint64_t>& ids) {
  std::string text;
  for (auto id : ids) text += fmt::format("{}{}", text.empty() ? "" : ", ", id);
  return text;
}

}  // namespace

std::string roofline_text(const FamilyRoofline& family, bool per_config) {
  std::string out;
  if (!family.missing.empty()) {
    out = fmt::format("  {}: no roofline: {}\n", family.family, family.missing);
  } else {
    RooflineTotals t = roofline_totals(family);
    out = fmt::format("  {} ({}): {} configs: {} memory-bound, {} compute-bound, {} unknown", family.family, family.unit,
                      t.configs, t.memory, t.compute, t.unknown);
    if (t.configs > t.unknown || t.max_intensity > 0)
      out += fmt::format("; intensity {:.4g} .. {:.4g} FLOP/B", t.min_intensity, t.max_intensity);
    out += t.lowest_waves ? fmt::format("; lowest waves/SIMD {} (#{} {})", *t.lowest_waves, t.lowest_id, t.lowest_flavor)
                          : std::string("; no waves stored");
    out += "\n";
  }
  if (!family.without_config.empty())
    out += fmt::format("    blessed ids without a config today (no roofline): {}\n", ids_text(family.without_config));
  if (!per_config) return out;
  for (const auto& c : family.configs)
    out += fmt::format("    #{} {} {}: {}\n", c.id, c.arch, c.kernel, config_roofline_text(c));
  return out;
}

std::string config_roofline_text(const ConfigRoofline& c) {
  return fmt::format("{} ({}){}", lane::roofline_text(c.roofline), waves_text(c.waves),
                     c.spec_changed ? " [the config's spec is not the blessed one]" : "");
}

nlohmann::json config_roofline_json(const ConfigRoofline& c) {
  nlohmann::json out = lane::roofline_json(c.roofline);
  nlohmann::json waves = nlohmann::json::object();
  for (const auto& [flavor, n] : c.waves) waves[flavor] = n;
  out.update({{"id", c.id}, {"arch", c.arch}, {"kernel", c.kernel}, {"spec_changed", c.spec_changed}, {"waves", waves}});
  return out;
}

nlohmann::json roofline_json(const FamilyRoofline& family, bool per_config) {
  RooflineTotals t = roofline_totals(family);
  nlohmann::json lowest = nullptr;
  if (t.lowest_waves) lowest = {{"waves", *t.lowest_waves}, {"id", t.lowest_id}, {"flavor", t.lowest_flavor}};
  nlohmann::json out = {{"unit", family.unit},
                        {"configs", t.configs},
                        {"memory_bound", t.memory},
                        {"compute_bound", t.compute},
                        {"unknown", t.unknown},
                        {"intensity", {{"min", t.min_intensity}, {"max", t.max_intensity}}},
                        {"lowest_waves_per_simd", lowest},
                        {"without_config", family.without_config}};
  if (!family.missing.empty()) out["missing"] = family.missing;
  if (per_config) {
    nlohmann::json configs = nlohmann::json::array();
    for (const auto& c : family.configs) configs.push_back(config_roofline_json(c));
    out["per_config"] = configs;
  }
  return out;
}

}  // namespace kemit::golden

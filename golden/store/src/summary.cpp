#include "kemit/golden/summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "kemit/golden/shard_io.h"

namespace kemit::golden {

namespace {

nlohmann::json counters_json(const Counters& c) {
  nlohmann::json sections = nlohmann::json::object(), arch = nlohmann::json::object();
  for (const auto& [name, s] : c.sections) sections[name] = {{"emitted", s.emitted}, {"refused", s.refused}};
  for (const auto& [name, n] : c.arch) arch[name] = n;
  return {{"configs", c.configs}, {"validation_refused", c.validation_refused}, {"sections", sections}, {"arch", arch}};
}

// "emitted/refused" for one section, or "-" when the shard does not hold it.
std::string section_cell(const Counters& c, const std::string& section) {
  auto it = c.sections.find(section);
  return it == c.sections.end() ? "-" : fmt::format("{}/{}", it->second.emitted, it->second.refused);
}

std::string table_row(const std::string& name, const Counters& c, const std::vector<std::string>& sections,
                      std::size_t name_width) {
  std::string row = fmt::format("{:<{}} {:>8} {:>8}", name, name_width, c.configs, c.validation_refused);
  for (const auto& s : sections) row += fmt::format(" {:>12}", section_cell(c, s));
  return row + "\n";
}

}  // namespace

Summary summarize(const std::filesystem::path& shard_dir) {
  Summary summary;
  for (const auto& path : list_shard_files(shard_dir)) {
    Shard shard = load_shard(path);
    summary.totals.add(shard.counters);
    summary.flavors.insert(summary.flavors.end(), shard.flavors.begin(), shard.flavors.end());
    summary.families.push_back({shard.family, shard.flavors, shard.counters});
  }
  sort_flavors(summary.flavors);
  return summary;
}

std::string summary_text(const Summary& summary) {
  std::vector<std::string> sections{std::string(kCanonicalSection)};
  sections.insert(sections.end(), summary.flavors.begin(), summary.flavors.end());
  std::size_t width = 6;
  for (const auto& f : summary.families) width = std::max(width, f.family.size());
  std::string out = fmt::format("{:<{}} {:>8} {:>8}", "family", width, "configs", "refused");
  for (const auto& s : sections) out += fmt::format(" {:>12}", s);
  out += "\n";
  for (const auto& f : summary.families) out += table_row(f.family, f.counters, sections, width);
  out += table_row("TOTAL", summary.totals, sections, width);
  out += "(refused: validation refusals; sections: emitted/refused, refused counts flavor gates and validation)\n";
  std::string arches;
  for (const auto& [arch, n] : summary.totals.arch) arches += fmt::format("{}{} {}", arches.empty() ? "" : ", ", arch, n);
  if (!arches.empty()) out += "configs per arch: " + arches + "\n";
  return out;
}

nlohmann::json summary_json(const Summary& summary) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& f : summary.families) {
    families[f.family] = counters_json(f.counters);
    families[f.family]["flavors"] = f.flavors;
  }
  return {{"format", kFormatVersion}, {"families", families}, {"totals", counters_json(summary.totals)},
          {"flavors", summary.flavors}};
}

}  // namespace kemit::golden

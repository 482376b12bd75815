#include "kemit/golden/summary.h"

#include <algorithm>
#include <map>
#include <tuple>

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

std::vector<Twin> shard_twins(const Shard& shard) {
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::uint64_t>> groups;
  for (const Entry& e : shard.entries)
    for (const auto& [flavor, section] : e.flavors)
      if (!section.code.empty()) groups[{flavor, e.arch, section.code}].push_back(e.id);
  std::vector<Twin> out;
  for (const auto& [key, ids] : groups)
    if (ids.size() > 1) out.push_back({shard.family, std::get<0>(key), std::get<1>(key), ids, std::get<2>(key)});
  std::sort(out.begin(), out.end(), [](const Twin& a, const Twin& b) {
    return std::tie(a.flavor, a.arch, a.ids) < std::tie(b.flavor, b.arch, b.ids);
  });
  return out;
}

Summary summarize(const std::filesystem::path& shard_dir) {
  Summary summary;
  for (const auto& path : list_shard_files(shard_dir)) {
    Shard shard = load_shard(path);
    summary.totals.add(shard.counters);
    summary.flavors.insert(summary.flavors.end(), shard.flavors.begin(), shard.flavors.end());
    summary.families.push_back({shard.family, shard.flavors, shard.counters});
    for (auto& twin : shard_twins(shard)) summary.twins.push_back(std::move(twin));
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
  for (const auto& twin : summary.twins) {
    std::string ids;
    for (auto id : twin.ids) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", id);
    out += fmt::format("TWIN {} configs {} at {}/{}: the same compiled code ({}); all but one are redundant\n",
                       twin.family, ids, twin.flavor, twin.arch, twin.code.substr(0, 12));
  }
  return out;
}

nlohmann::json summary_json(const Summary& summary) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& f : summary.families) {
    families[f.family] = counters_json(f.counters);
    families[f.family]["flavors"] = f.flavors;
  }
  nlohmann::json twins = nlohmann::json::array();
  for (const auto& t : summary.twins)
    twins.push_back({{"family", t.family}, {"flavor", t.flavor}, {"arch", t.arch}, {"ids", t.ids}, {"code", t.code}});
  return {{"format", kFormatVersion}, {"families", families}, {"totals", counters_json(summary.totals)},
          {"flavors", summary.flavors}, {"twins", twins}};
}

}  // namespace kemit::golden

// Canonical shard text: one fixed layout, so the same data always gives the same bytes and a
// git diff of two blessings shows one line per changed config (layout: docs/golden.md).
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "shard_text.h"

namespace kemit::golden {

namespace {

void append_quoted(std::string& out, std::string_view text) {
  bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  // Strict UTF-8: a reason text that is not UTF-8 is an engine bug, not something to store.
  out += nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
}

void append_resources(std::string& out, const Resources& resources) {
  out += "\"resources\": {";
  bool first = true;
  for (std::size_t i = 0; i < kResourceKinds; ++i) {
    if (!resources.figures[i]) continue;
    fmt::format_to(std::back_inserter(out), "{}\"{}\": {}", first ? "" : ", ",
                   resource_name(static_cast<ResourceKind>(i)), *resources.figures[i]);
    first = false;
  }
  out += '}';
}

void append_counts(std::string& out, const char* name, const std::map<std::string, std::uint64_t>& counts) {
  fmt::format_to(std::back_inserter(out), "\"{}\": {{", name);
  bool first = true;
  for (const auto& [key, count] : counts) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\": {}", first ? "" : ", ", key, count);
    first = false;
  }
  out += '}';
}

void append_isa(std::string& out, const IsaFigures& isa) {
  out += "\"isa\": {";
  if (isa.waves) fmt::format_to(std::back_inserter(out), "\"waves\": {}, ", *isa.waves);
  append_counts(out, "counts", isa.counts);
  out += ", ";
  append_counts(out, "loop", isa.loop);
  out += '}';
}

void append_section(std::string& out, const Section& section) {
  if (section.is_rejected()) {
    out += "{\"rejected\": ";
    append_quoted(out, section.rejected);
    out += '}';
    return;
  }
  fmt::format_to(std::back_inserter(out), "{{\"sha256\": \"{}\", \"bytes\": {}", section.sha256, section.bytes);
  if (!section.resources.empty()) {
    out += ", ";
    append_resources(out, section.resources);
  }
  if (!section.isa.empty()) {
    out += ", ";
    append_isa(out, section.isa);
  }
  if (!section.code.empty()) fmt::format_to(std::back_inserter(out), ", \"code\": \"{}\"", section.code);
  out += '}';
}

}  // namespace

namespace detail {

void append_entry(std::string& out, const Entry& e) {
  fmt::format_to(std::back_inserter(out), "    {{\"id\": {}, \"spec_digest\": \"{}\", ", e.id, e.spec_digest);
  if (e.is_rejected()) {
    out += "\"arch\": ";
    append_quoted(out, e.arch);
    out += ", \"rejected\": ";
    append_quoted(out, e.rejected);
    out += '}';
    return;
  }
  out += "\"kernel\": ";
  append_quoted(out, e.kernel_name);
  out += ", \"arch\": ";
  append_quoted(out, e.arch);
  out += ", \"canonical\": ";
  append_section(out, e.canonical);
  out += ", \"ll\": {";
  // The entry's own flavors (natural order): equal to the shard's once validated, and the
  // conflict writer may hold an entry from a side with other flavors.
  bool first = true;
  for (const auto& [flavor, section] : e.flavors) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\": ", first ? "" : ", ", flavor);
    append_section(out, section);
    first = false;
  }
  out += "}}";
}

}  // namespace detail

namespace {

// One line per section and per arch, so a counters conflict shows which figure moved.
void append_counters(std::string& out, const Counters& c, const std::vector<std::string>& flavors) {
  fmt::format_to(std::back_inserter(out), "  \"counters\": {{\n    \"configs\": {},\n    \"validation_refused\": {},\n",
                 c.configs, c.validation_refused);
  out += "    \"sections\": {\n";
  std::vector<std::string> sections{std::string(kCanonicalSection)};
  sections.insert(sections.end(), flavors.begin(), flavors.end());
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const SectionCounts& s = c.sections.at(sections[i]);
    fmt::format_to(std::back_inserter(out), "      \"{}\": {{\"emitted\": {}, \"refused\": {}}}{}\n", sections[i],
                   s.emitted, s.refused, i + 1 < sections.size() ? "," : "");
  }
  out += "    },\n    \"arch\": {\n";
  std::size_t i = 0;
  for (const auto& [arch, n] : c.arch) {
    out += "      ";
    append_quoted(out, arch);
    fmt::format_to(std::back_inserter(out), ": {}{}\n", n, ++i < c.arch.size() ? "," : "");
  }
  out += "    }\n  },\n";
}

}  // namespace

namespace detail {

void append_header(std::string& out, const Shard& shard, const Counters& counters) {
  fmt::format_to(std::back_inserter(out), "{{\n  \"format\": {},\n  \"family\": \"{}\",\n  \"written_by\": \"{}\",\n",
                 kFormatVersion, shard.family, kWrittenBy);
  out += "  \"flavors\": [";
  for (std::size_t i = 0; i < shard.flavors.size(); ++i)
    fmt::format_to(std::back_inserter(out), "{}\"{}\"", i ? ", " : "", shard.flavors[i]);
  out += "],\n";
  append_counters(out, counters, shard.flavors);
  out += "  \"entries\": [\n";
}

}  // namespace detail

std::string serialize_shard(const Shard& shard) {
  validate_shard(shard, shard.family + ".json");
  std::string out;
  out.reserve(512 + shard.entries.size() * (160 + 120 * shard.flavors.size()));
  detail::append_header(out, shard, compute_counters(shard.entries, shard.flavors));
  for (std::size_t i = 0; i < shard.entries.size(); ++i) {
    detail::append_entry(out, shard.entries[i]);
    out += i + 1 < shard.entries.size() ? ",\n" : "\n";
  }
  out += detail::kShardTail;
  // The loader's own rules (its limits included) on the exact bytes, before anyone renames them
  // into place: the store never writes a shard it would then refuse to load.
  try {
    LoadOptions options;
    options.expected_family = shard.family;
    parse_shard(out, shard.family + ".json", options);
  } catch (const GoldenError& error) {
    throw GoldenError(shard.family + ".json", 0,
                      "the shard as it would be written breaks a rule of the shard loader: " + error.problem(),
                      "nothing was written; a value of this run is outside what a shard may hold (docs/limits.md): "
                      "check the engines' answers and the LLVM lane's figures (run again with --no-cache)");
  }
  return out;
}

std::filesystem::path shard_path(const std::filesystem::path& shard_dir, const std::string& family) {
  return shard_dir / (family + ".json");
}

std::vector<std::filesystem::path> list_shard_files(const std::filesystem::path& shard_dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(shard_dir, ec)) return files;
  for (const auto& item : std::filesystem::directory_iterator(shard_dir))
    if (item.is_regular_file() && item.path().extension() == ".json" && item.path().filename().string()[0] != '.')
      files.push_back(item.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kemit::golden

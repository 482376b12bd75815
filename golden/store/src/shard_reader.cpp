// Strict loading: JSON -> Shard, with a clear error for every way a shard can be wrong.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "conflict_markers.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "strict_json.h"

namespace kemit::golden {

namespace {

using nlohmann::json;

// Where we are while reading, so every error can say file, line and remedy.
struct ReadContext {
  std::string label;
  std::string family;  // the expected family, for remedies
  const detail::StrictJson& parsed;
  const detail::LineIndex& lines;

  std::size_t line_of_key(const std::string& key) const {
    auto it = parsed.top_key_lines.find(key);
    return it == parsed.top_key_lines.end() ? 0 : it->second;
  }
  std::string hand_edit_remedy() const {
    return fmt::format("shards are written only by `{}`: restore the file with `git checkout -- {}` or "
                       "re-record with `{}`",
                       kWrittenBy, label, record_command(family));
  }
  [[noreturn]] void fail(std::size_t line, const std::string& problem) const {
    throw GoldenError(label, line, problem, hand_edit_remedy());
  }
};

void require_known_fields(const json& object, std::initializer_list<std::string_view> allowed,
                          const ReadContext& ctx, std::size_t line, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string names;
    for (auto a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    ctx.fail(line, fmt::format("unknown field \"{}\" in {} (allowed: {})", key, where, names));
  }
}

const json& require_field(const json& object, const std::string& key, const ReadContext& ctx, std::size_t line,
                          const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) ctx.fail(line, fmt::format("{} has no \"{}\" field", where, key));
  return *it;
}

std::uint64_t read_count(const json& value, const ReadContext& ctx, std::size_t line, const std::string& what) {
  if (!value.is_number_unsigned())
    ctx.fail(line, fmt::format("{} must be a non-negative integer (found {})", what, value.dump()));
  return value.get<std::uint64_t>();
}

std::string read_text(const json& value, const ReadContext& ctx, std::size_t line, const std::string& what) {
  if (!value.is_string() || value.get_ref<const std::string&>().empty())
    ctx.fail(line, fmt::format("{} must be a non-empty string (found {})", what, value.dump()));
  return value.get<std::string>();
}

std::string read_sha256(const json& value, const ReadContext& ctx, std::size_t line, const std::string& what) {
  if (!value.is_string() || !is_sha256_hex(value.get_ref<const std::string&>()))
    ctx.fail(line, fmt::format("{} must be a sha256: 64 lowercase hex digits (found {})", what, value.dump()));
  return value.get<std::string>();
}

void check_format_version(const json& root, const ReadContext& ctx) {
  if (!root.is_object()) ctx.fail(1, "a shard is a JSON object; this file holds " + std::string(root.type_name()));
  auto it = root.find("format");
  if (it == root.end()) ctx.fail(1, "no \"format\" field: this is not a golden shard");
  std::size_t line = ctx.line_of_key("format");
  if (!it->is_number_integer() || it->get<long long>() != kFormatVersion) {
    bool newer = it->is_number_integer() && it->get<long long>() > kFormatVersion;
    throw GoldenError(ctx.label, line,
                      fmt::format("format version {} is not supported (this build reads version {})", it->dump(),
                                  kFormatVersion),
                      newer ? "the shard was written by a newer kemit: update your checkout and rebuild"
                            : ctx.hand_edit_remedy());
  }
}

std::string read_family(const json& root, const ReadContext& ctx) {
  std::size_t line = ctx.line_of_key("family");
  std::string family = read_text(require_field(root, "family", ctx, 1, "the header"), ctx, line, "\"family\"");
  if (!is_family_name(family))
    ctx.fail(line, fmt::format("family \"{}\" is not a family name ([a-z0-9_]+)", family));
  if (family != ctx.family)
    ctx.fail(line, fmt::format("family \"{}\" does not match the file, which must hold family \"{}\"", family,
                               ctx.family));
  return family;
}

std::vector<std::string> read_flavors(const json& root, const ReadContext& ctx) {
  std::size_t line = ctx.line_of_key("flavors");
  const json& list = require_field(root, "flavors", ctx, 1, "the header");
  if (!list.is_array()) ctx.fail(line, "\"flavors\" must be an array of flavor names");
  std::vector<std::string> flavors;
  for (const json& f : list) {
    std::string name = read_text(f, ctx, line, "a flavor name");
    if (!is_family_name(name) || name == kCanonicalSection)
      ctx.fail(line, fmt::format("\"{}\" is not a flavor name ([a-z0-9_]+, not \"canonical\")", name));
    if (!flavors.empty() && !flavor_less(flavors.back(), name))
      ctx.fail(line, fmt::format("flavors must be unique and in natural order; \"{}\" follows \"{}\"", name,
                                 flavors.back()));
    flavors.push_back(name);
  }
  return flavors;
}

void read_written_by(const json& root, const ReadContext& ctx) {
  std::size_t line = ctx.line_of_key("written_by");
  const json& value = require_field(root, "written_by", ctx, 1, "the header");
  if (value != kWrittenBy)
    ctx.fail(line, fmt::format("\"written_by\" must be \"{}\" (found {})", kWrittenBy, value.dump()));
}

Counters read_counters(const json& value, const ReadContext& ctx) {
  std::size_t line = ctx.line_of_key("counters");
  if (!value.is_object()) ctx.fail(line, "\"counters\" must be an object");
  require_known_fields(value, {"configs", "validation_refused", "sections", "arch"}, ctx, line, "counters");
  Counters c;
  c.configs = read_count(require_field(value, "configs", ctx, line, "counters"), ctx, line, "counters.configs");
  c.validation_refused = read_count(require_field(value, "validation_refused", ctx, line, "counters"), ctx, line,
                                    "counters.validation_refused");
  const json& sections = require_field(value, "sections", ctx, line, "counters");
  const json& arch = require_field(value, "arch", ctx, line, "counters");
  if (!sections.is_object() || !arch.is_object()) ctx.fail(line, "counters.sections and counters.arch are objects");
  for (const auto& [name, counts] : sections.items()) {
    std::string where = "counters.sections." + name;
    if (!counts.is_object()) ctx.fail(line, where + " must be an object");
    require_known_fields(counts, {"emitted", "refused"}, ctx, line, where);
    c.sections[name] = {read_count(require_field(counts, "emitted", ctx, line, where), ctx, line, where),
                        read_count(require_field(counts, "refused", ctx, line, where), ctx, line, where)};
  }
  for (const auto& [name, n] : arch.items()) c.arch[name] = read_count(n, ctx, line, "counters.arch." + name);
  return c;
}

Resources read_resources(const json& value, const ReadContext& ctx, std::size_t line, const std::string& where) {
  if (!value.is_object()) ctx.fail(line, where + " must be an object");
  Resources r;
  for (const auto& [key, figure] : value.items()) {
    auto kind = resource_from_name(key);
    if (!kind)
      ctx.fail(line, fmt::format("unknown field \"{}\" in {} (allowed: vgpr, agpr, sgpr, vgpr_spill, "
                                 "sgpr_spill, scratch, lds)",
                                 key, where));
    r[*kind] = read_count(figure, ctx, line, where + "." + key);
  }
  return r;
}

Section read_section(const json& value, const ReadContext& ctx, std::size_t line, const std::string& where,
                     bool may_refuse) {
  if (!value.is_object()) ctx.fail(line, where + " must be an object");
  if (may_refuse && value.contains("rejected")) {
    require_known_fields(value, {"rejected"}, ctx, line, where + " (a refusal)");
    return Section::refused(read_text(value["rejected"], ctx, line, where + ".rejected"));
  }
  if (may_refuse)
    require_known_fields(value, {"sha256", "bytes", "resources", "rejected"}, ctx, line, where);
  else
    require_known_fields(value, {"sha256", "bytes"}, ctx, line, where);
  Section s;
  s.sha256 = read_sha256(require_field(value, "sha256", ctx, line, where), ctx, line, where + ".sha256");
  s.bytes = read_count(require_field(value, "bytes", ctx, line, where), ctx, line, where + ".bytes");
  if (auto it = value.find("resources"); it != value.end())
    s.resources = read_resources(*it, ctx, line, where + ".resources");
  return s;
}

Entry read_entry(const json& value, std::size_t index, const std::vector<std::string>& flavors,
                 const ReadContext& ctx) {
  std::size_t line = index < ctx.parsed.entry_lines.size() ? ctx.parsed.entry_lines[index] : 0;
  std::string where = fmt::format("entries[{}]", index);
  if (!value.is_object()) ctx.fail(line, where + " must be an object");
  Entry e;
  e.id = read_count(require_field(value, "id", ctx, line, where), ctx, line, where + ".id");
  if (e.id == 0) ctx.fail(line, where + ".id must be 1 or more");
  where = fmt::format("entry id {}", e.id);
  require_known_fields(value, {"id", "spec_digest", "kernel", "arch", "canonical", "ll", "rejected"}, ctx, line,
                       where);
  e.spec_digest = read_sha256(require_field(value, "spec_digest", ctx, line, where), ctx, line,
                              where + " spec_digest");
  e.arch = read_text(require_field(value, "arch", ctx, line, where), ctx, line, where + " arch");
  if (value.contains("rejected")) {
    for (const char* key : {"kernel", "canonical", "ll"})
      if (value.contains(key))
        ctx.fail(line, fmt::format("{} is a validation refusal and cannot also hold \"{}\"", where, key));
    e.rejected = read_text(value["rejected"], ctx, line, where + " rejected");
    return e;
  }
  e.kernel_name = read_text(require_field(value, "kernel", ctx, line, where), ctx, line, where + " kernel");
  e.canonical = read_section(require_field(value, "canonical", ctx, line, where), ctx, line,
                             where + " canonical", false);
  const json& ll = require_field(value, "ll", ctx, line, where);
  if (!ll.is_object()) ctx.fail(line, where + ": \"ll\" must be an object");
  for (const auto& [flavor, section] : ll.items()) {
    if (std::find(flavors.begin(), flavors.end(), flavor) == flavors.end())
      ctx.fail(line, fmt::format("{} holds flavor \"{}\", which the header's \"flavors\" lacks", where, flavor));
    e.flavors[flavor] = read_section(section, ctx, line, where + " ll." + flavor, true);
  }
  for (const auto& f : flavors)
    if (!e.flavors.count(f)) ctx.fail(line, fmt::format("{} lacks flavor \"{}\" listed in the header", where, f));
  return e;
}

std::vector<Entry> read_entries(const json& root, const std::vector<std::string>& flavors, const ReadContext& ctx) {
  const json& list = require_field(root, "entries", ctx, 1, "the header");
  if (!list.is_array()) ctx.fail(ctx.line_of_key("entries"), "\"entries\" must be an array");
  std::vector<Entry> entries;
  entries.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    Entry e = read_entry(list[i], i, flavors, ctx);
    std::size_t line = i < ctx.parsed.entry_lines.size() ? ctx.parsed.entry_lines[i] : 0;
    if (!entries.empty() && entries.back().id == e.id)
      ctx.fail(line, fmt::format("duplicate entry id {} (ids are unique, one entry per config)", e.id));
    if (!entries.empty() && entries.back().id > e.id)
      ctx.fail(line, fmt::format("entry id {} follows id {}: entries must be in increasing id order", e.id,
                                 entries.back().id));
    entries.push_back(std::move(e));
  }
  return entries;
}

void check_counters(const Shard& shard, const ReadContext& ctx) {
  Counters derived = compute_counters(shard.entries, shard.flavors);
  auto differences = counter_differences(shard.counters, derived);
  if (differences.empty()) return;
  std::string list;
  for (const auto& d : differences)
    list += fmt::format("{}{}: stored {}, entries give {}", list.empty() ? "" : "; ", d.name, d.before, d.after);
  throw GoldenError(ctx.label, ctx.line_of_key("counters"),
                    "counters disagree with the entries (" + list + ")",
                    fmt::format("counters are derived, never edited: after a textual git merge run `golden resolve "
                                "{}`; otherwise re-record with `{}`",
                                ctx.label, record_command(ctx.family)));
}

std::string expected_family_for(const std::string& label, const LoadOptions& options) {
  if (!options.expected_family.empty()) return options.expected_family;
  std::filesystem::path p(label);
  std::string stem = p.stem().string();
  if (p.extension() != ".json" || !is_family_name(stem))
    throw GoldenError(label, 0, "a shard file is named <family>.json with a family name of [a-z0-9_]+",
                      "rename the file to its family's name");
  return stem;
}

}  // namespace

Shard parse_shard(std::string_view text, const std::string& label, const LoadOptions& options) {
  std::string family = expected_family_for(label, options);
  detail::LineIndex lines(text, options.line_map);
  if (auto marker = detail::first_conflict_marker(text))
    throw GoldenError(label, lines.original_line(marker->line),
                      fmt::format("git conflict marker \"{}\": the shard was merged as text, not by the kemit-golden "
                                  "merge driver",
                                  marker->text),
                      fmt::format("run `golden resolve {}`, and register the driver once with `{}`", label,
                                  "git config merge.kemit-golden.driver \"build/golden/golden merge-driver %O %A %B "
                                  "%P\""));
  detail::StrictJson parsed = detail::parse_strict_json(text, label, lines);
  ReadContext ctx{label, family, parsed, lines};
  check_format_version(parsed.root, ctx);
  require_known_fields(parsed.root, {"format", "family", "flavors", "written_by", "counters", "entries"}, ctx, 1,
                       "the header");
  Shard shard;
  shard.family = read_family(parsed.root, ctx);
  read_written_by(parsed.root, ctx);
  shard.flavors = read_flavors(parsed.root, ctx);
  shard.counters = read_counters(require_field(parsed.root, "counters", ctx, 1, "the header"), ctx);
  shard.entries = read_entries(parsed.root, shard.flavors, ctx);
  if (options.check_counters)
    check_counters(shard, ctx);
  else
    shard.counters = compute_counters(shard.entries, shard.flavors);
  return shard;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw GoldenError(path.string(), 0, "cannot open the file for reading",
                      "check the path (shards live in golden/shards/<family>.json)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Shard load_shard(const std::filesystem::path& path, const LoadOptions& options) {
  return parse_shard(read_file(path), path.string(), options);
}

}  // namespace kemit::golden

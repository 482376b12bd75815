// Strict loading, values: every scalar is checked where it lands (type, range, format), and
// parse_shard / load_shard drive the streaming reader.

#include <fmt/format.h>

#include "conflict_markers.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "kemit/input_limits.h"
#include "shard_reader.h"

namespace kemit::golden::detail {

std::string Scalar::describe() const {
  switch (kind) {
    case null: return "null";
    case boolean: return number ? "true" : "false";
    case unsigned_int: return std::to_string(number);
    case negative:
    case floating: return *text;
    case string: return nlohmann::json(*text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return "?";
}

bool ShardSaxReader::null() { return on_scalar({Scalar::null}), true; }
bool ShardSaxReader::boolean(bool v) { return on_scalar({Scalar::boolean, v ? 1u : 0u}), true; }
bool ShardSaxReader::number_unsigned(number_unsigned_t v) { return on_scalar({Scalar::unsigned_int, v}), true; }
bool ShardSaxReader::number_integer(number_integer_t v) {
  number_text_ = std::to_string(v);
  return on_scalar({Scalar::negative, 0, &number_text_}), true;
}
bool ShardSaxReader::number_float(number_float_t, const string_t& text) {
  number_text_ = text;
  return on_scalar({Scalar::floating, 0, &number_text_}), true;
}
bool ShardSaxReader::string(string_t& v) { return on_scalar({Scalar::string, 0, &v}), true; }
bool ShardSaxReader::binary(binary_t&) { fail(current_line(), "binary values are not JSON"); }

bool ShardSaxReader::parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
  failed_ = true;
  error_offset_ = position > 0 ? position - 1 : 0;
  error_text_ = e.what();
  return false;
}

std::uint64_t ShardSaxReader::count_value(const Scalar& v, const std::string& key) const {
  if (v.kind != Scalar::unsigned_int)
    fail(current_line(), fmt::format("{} must be a non-negative integer (found {})", field(key), v.describe()));
  if (v.number > limits::kMaxCount)
    fail(current_line(), fmt::format("{} is {}, above the input limit of {} for counts and sizes (docs/limits.md)",
                                     field(key), v.number, limits::kMaxCount));
  return v.number;
}

std::string ShardSaxReader::text_value(const Scalar& v, const std::string& key) const {
  if (v.kind != Scalar::string || v.text->empty())
    fail(current_line(), fmt::format("{} must be a non-empty string (found {})", field(key), v.describe()));
  return std::move(*v.text);
}

std::string ShardSaxReader::sha_value(const Scalar& v, const std::string& key) const {
  if (v.kind != Scalar::string || !is_sha256_hex(*v.text))
    fail(current_line(),
         fmt::format("{} must be a sha256: 64 lowercase hex digits (found {})", field(key), v.describe()));
  return std::move(*v.text);
}

void ShardSaxReader::on_scalar(const Scalar& value) {
  if (frames_.empty()) fail(1, "a shard is a JSON object; this file holds " + value.describe());
  Frame& frame = frames_.back();
  switch (frame.scope) {
    case Scope::top: return set_top_field(frame.keys.back(), value);
    case Scope::flavor_list: {
      std::string name = text_value(value, "flavors");
      if (!is_family_name(name) || name == kCanonicalSection)
        fail(current_line(), fmt::format("\"{}\" is not a flavor name ([a-z0-9_]+, not \"canonical\")", name));
      if (!shard_.flavors.empty() && !flavor_less(shard_.flavors.back(), name))
        fail(current_line(), fmt::format("flavors must be unique and in natural order; \"{}\" follows \"{}\"", name,
                                         shard_.flavors.back()));
      shard_.flavors.push_back(name);
      return;
    }
    case Scope::counters: {
      const std::string& key = frame.keys.back();
      if (key == "sections" || key == "arch")
        fail(current_line(), fmt::format("{} must be an object (found {})", field(key), value.describe()));
      (key == "configs" ? stored_counters_.configs : stored_counters_.validation_refused) = count_value(value, key);
      return;
    }
    case Scope::counter_section: {
      std::uint64_t n = count_value(value, frame.keys.back());
      SectionCounts& counts = stored_counters_.sections[frame.name];
      (frame.keys.back() == "emitted" ? counts.emitted : counts.refused) = n;
      return;
    }
    case Scope::counter_arch: stored_counters_.arch[frame.keys.back()] = count_value(value, frame.keys.back()); return;
    case Scope::entry: return set_entry_field(frame.keys.back(), value);
    case Scope::canonical:
    case Scope::flavor_section: return set_section_field(*section_, frame.keys.back(), value);
    case Scope::resources:
      section_->resources[*resource_from_name(frame.keys.back())] = count_value(value, frame.keys.back());
      return;
    case Scope::isa: {
      if (frame.keys.back() != "waves")
        fail(current_line(), fmt::format("{} must be an object (found {})", field(frame.keys.back()), value.describe()));
      section_->isa.waves = count_value(value, "waves");
      return;
    }
    case Scope::isa_counts: {
      const std::string& name = frame.keys.back();
      std::uint64_t count = count_value(value, name);
      if (!is_family_name(name) || count == 0)
        fail(current_line(), fmt::format("{}: an instruction class is [a-z0-9_]+ with a count above 0 (found \"{}\": {})",
                                         container_label(), name, count));
      (frame.name == "counts" ? section_->isa.counts : section_->isa.loop)[name] = count;
      return;
    }
    case Scope::entries: fail(current_line(), fmt::format("entries[{}] must be an object", entry_index_));
    default:  // a scalar where a flavor section or a section's counts belong
      fail(current_line(), fmt::format("{} must be an object (found {})", field(frame.keys.back()), value.describe()));
  }
}

void ShardSaxReader::set_top_field(const std::string& key, const Scalar& value) {
  if (key == "format") {
    if (value.kind == Scalar::unsigned_int && value.number == static_cast<std::uint64_t>(kFormatVersion)) return;
    bool newer = value.kind == Scalar::unsigned_int && value.number > static_cast<std::uint64_t>(kFormatVersion);
    std::string problem = fmt::format("format version {} is not supported (this build reads version {})",
                                      value.describe(), kFormatVersion);
    if (newer) fail_with(current_line(), problem, "the shard was written by a newer kemit: update your checkout and rebuild");
    fail(current_line(), problem);
  }
  if (key == "family") {
    std::string family = text_value(value, key);
    if (!is_family_name(family))
      fail(current_line(), fmt::format("family \"{}\" is not a family name ([a-z0-9_]+)", family));
    if (family != family_)
      fail(current_line(), fmt::format("family \"{}\" does not match the file, which must hold family \"{}\"", family,
                                       family_));
    shard_.family = family;
  } else if (key == "written_by") {
    if (value.kind != Scalar::string || *value.text != kWrittenBy)
      fail(current_line(), fmt::format("\"written_by\" must be \"{}\" (found {})", kWrittenBy, value.describe()));
  } else {
    fail(current_line(), fmt::format("\"{}\" must be {} (found {})", key,
                                     key == "counters" ? "an object" : "an array", value.describe()));
  }
}

void ShardSaxReader::set_entry_field(const std::string& key, const Scalar& value) {
  if (key == "id") {
    entry_.id = count_value(value, key);
    if (entry_.id == 0) fail(current_line(), fmt::format("entries[{}] id must be 1 or more", entry_index_));
  } else if (key == "spec_digest") {
    entry_.spec_digest = sha_value(value, key);
  } else if (key == "kernel") {
    entry_.kernel_name = text_value(value, key);
  } else if (key == "arch") {
    entry_.arch = text_value(value, key);
  } else if (key == "rejected") {
    entry_.rejected = text_value(value, key);
  } else {
    fail(current_line(), fmt::format("{} must be an object (found {})", field(key), value.describe()));
  }
}

void ShardSaxReader::set_section_field(Section& section, const std::string& key, const Scalar& value) {
  if (key == "sha256")
    section.sha256 = sha_value(value, key);
  else if (key == "bytes")
    section.bytes = count_value(value, key);
  else if (key == "rejected")
    section.rejected = text_value(value, key);
  else if (key == "code")
    section.code = sha_value(value, key);
  else
    fail(current_line(), fmt::format("{} must be an object (found {})", field(key), value.describe()));
}

Shard ShardSaxReader::finish(bool check_counters) {
  if (failed_)
    fail_with(lines_.line_of_offset(error_offset_), fmt::format("invalid JSON: {}", [&] {
                auto column = error_text_.find("column ");
                auto colon = column == std::string::npos ? std::string::npos : error_text_.find(": ", column);
                return colon == std::string::npos ? error_text_ : error_text_.substr(colon + 2);
              }()),
              fmt::format("restore the file with `git checkout -- {}` or re-record the family with `{}`", label_,
                          record_command(family_)));
  shard_.counters = compute_counters(shard_.entries, shard_.flavors);
  if (!check_counters) return std::move(shard_);
  auto differences = counter_differences(stored_counters_, shard_.counters);
  if (differences.empty()) return std::move(shard_);
  std::string list;
  for (const auto& d : differences)
    list += fmt::format("{}{}: stored {}, entries give {}", list.empty() ? "" : "; ", d.name, d.before, d.after);
  // The counters block starts on the line after "counters" opens; report the line of its key.
  fail_with(counters_line_, "counters disagree with the entries (" + list + ")",
            fmt::format("counters are derived, never edited: after a textual git merge run `golden resolve {}`; "
                        "otherwise re-record with `{}`",
                        label_, record_command(family_)));
}

}  // namespace kemit::golden::detail

namespace kemit::golden {

namespace {

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
                      fmt::format("run `golden resolve {}`, and register the driver once with `git config "
                                  "merge.kemit-golden.driver \"build/golden/golden merge-driver %O %A %B %P\"`",
                                  label));
  if (auto breach = limits::find_json_limit_breach(text))
    throw GoldenError(label, lines.original_line(breach->line), breach->problem,
                      fmt::format("shards are written only by `{}` (limits in docs/limits.md): restore the file with "
                                  "`git checkout -- {}` or re-record with `{}`",
                                  kWrittenBy, label, record_command(family)));
  const char* cursor = text.data();
  detail::ShardSaxReader reader(label, family, lines, text.data(), &cursor);
  detail::TrackingIterator first(text.data(), &cursor), last(text.data() + text.size(), &cursor);
  nlohmann::json::sax_parse(first, last, &reader);
  return reader.finish(options.check_counters);
}

std::string read_file(const std::filesystem::path& path) {
  try {
    return limits::read_regular_file(path, path.string());
  } catch (const limits::InputLimitError& error) {
    throw GoldenError(path.string(), 0, error.problem(),
                      "check the path (shards live in golden/shards/<family>.json; limits in docs/limits.md)");
  }
}

Shard load_shard(const std::filesystem::path& path, const LoadOptions& options) {
  return parse_shard(read_file(path), path.string(), options);
}

}  // namespace kemit::golden

// Strict loading, structure: which containers may appear where, duplicate keys, required
// fields, entry order, and the counters check at the end.
#include "shard_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "conflict_markers.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"

namespace kemit::golden::detail {

namespace {

const std::vector<std::string>& allowed_keys(Scope scope) {
  static const std::vector<std::string> top = {"format", "family", "written_by", "flavors", "counters", "entries"};
  static const std::vector<std::string> counters = {"configs", "validation_refused", "sections", "arch"};
  static const std::vector<std::string> counter_section = {"emitted", "refused"};
  static const std::vector<std::string> entry = {"id", "spec_digest", "kernel", "arch", "canonical", "ll", "rejected"};
  static const std::vector<std::string> canonical = {"sha256", "bytes"};
  static const std::vector<std::string> flavor = {"sha256", "bytes", "resources", "isa", "code", "rejected"};
  static const std::vector<std::string> isa = {"waves", "counts", "loop"};
  static const std::vector<std::string> resources = {"vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "scratch", "lds"};
  static const std::vector<std::string> any;
  switch (scope) {
    case Scope::top: return top;
    case Scope::counters: return counters;
    case Scope::counter_section: return counter_section;
    case Scope::entry: return entry;
    case Scope::canonical: return canonical;
    case Scope::flavor_section: return flavor;
    case Scope::resources: return resources;
    case Scope::isa: return isa;
    default: return any;  // isa_counts: any instruction class, checked as a name where it is read
  }
}

bool has_key(const Frame& frame, const char* key) {
  return std::find(frame.keys.begin(), frame.keys.end(), key) != frame.keys.end();
}

}  // namespace

ShardSaxReader::ShardSaxReader(const std::string& label, const std::string& family, const LineIndex& lines,
                               const char* begin, const char** cursor)
    : label_(label), family_(family), lines_(lines), begin_(begin), cursor_(cursor) {}

std::size_t ShardSaxReader::current_offset() const {
  std::size_t consumed = static_cast<std::size_t>(*cursor_ - begin_);
  return consumed ? consumed - 1 : 0;  // the last character the parser read
}

std::size_t ShardSaxReader::current_line() const { return lines_.line_of_offset(current_offset()); }

void ShardSaxReader::fail(std::size_t line, const std::string& problem) const {
  fail_with(line, problem,
            fmt::format("shards are written only by `{}`: restore the file with `git checkout -- {}` or re-record "
                        "with `{}`",
                        kWrittenBy, label_, record_command(family_)));
}

void ShardSaxReader::fail_with(std::size_t line, const std::string& problem, const std::string& remedy) const {
  throw GoldenError(label_, line, problem, remedy);
}

std::string ShardSaxReader::entry_label() const {
  return entry_.id ? fmt::format("entry id {}", entry_.id) : fmt::format("entries[{}]", entry_index_);
}

std::string ShardSaxReader::json_path() const {
  std::string path;
  for (const Frame& f : frames_) {
    if (f.scope == Scope::entry) path += fmt::format("[{}]", entry_index_);
    if (f.name.empty()) continue;
    path += path.empty() ? f.name : "." + f.name;
  }
  return path.empty() ? "the top-level object" : path;
}

std::string ShardSaxReader::container_label() const {
  const Frame& f = frames_.back();
  switch (f.scope) {
    case Scope::top: return "the header";
    case Scope::flavor_list: return "\"flavors\"";
    case Scope::counters: return "counters";
    case Scope::counter_sections: return "counters.sections";
    case Scope::counter_section: return "counters.sections." + f.name;
    case Scope::counter_arch: return "counters.arch";
    case Scope::entries: return "\"entries\"";
    case Scope::entry: return entry_label();
    case Scope::canonical: return entry_label() + " canonical";
    case Scope::ll: return entry_label() + " ll";
    case Scope::flavor_section: return entry_label() + " ll." + f.name;
    case Scope::resources: return entry_label() + " ll." + frames_[frames_.size() - 2].name + ".resources";
    case Scope::isa: return entry_label() + " ll." + frames_[frames_.size() - 2].name + ".isa";
    case Scope::isa_counts:
      return entry_label() + " ll." + frames_[frames_.size() - 3].name + ".isa." + f.name;
  }
  return "the shard";
}

std::string ShardSaxReader::field(const std::string& key) const {
  switch (frames_.back().scope) {
    case Scope::top: return "\"" + key + "\"";
    case Scope::entry: return entry_label() + " " + key;
    default: return container_label() + "." + key;
  }
}

bool ShardSaxReader::is_known_key(const Frame& frame, const std::string& key) const {
  const auto& allowed = allowed_keys(frame.scope);
  return std::find(allowed.begin(), allowed.end(), key) != allowed.end();
}

bool ShardSaxReader::key(string_t& key) {
  Frame& frame = frames_.back();
  if (std::find(frame.keys.begin(), frame.keys.end(), key) != frame.keys.end())
    fail_with(current_line(),
              fmt::format("duplicate key \"{}\" in {} (JSON readers keep only the last copy, hiding the other)", key,
                          json_path()),
              fmt::format("delete the stale copy, or re-record the family with `{}`", record_command(family_)));
  if (frame.scope == Scope::top && frame.keys.empty() && key != "format")
    fail(current_line(), "a shard starts with its \"format\" field; this is not a golden shard");
  if (frame.scope == Scope::ll &&
      std::find(shard_.flavors.begin(), shard_.flavors.end(), key) == shard_.flavors.end())
    fail(current_line(), fmt::format("{} holds flavor \"{}\", which the header's \"flavors\" lacks", entry_label(), key));
  if (!allowed_keys(frame.scope).empty() && !is_known_key(frame, key)) {
    std::string names;
    for (const auto& a : allowed_keys(frame.scope)) names += (names.empty() ? "" : ", ") + a;
    fail(current_line(), fmt::format("unknown field \"{}\" in {} (allowed: {})", key, container_label(), names));
  }
  frame.keys.push_back(key);
  return true;
}

Scope ShardSaxReader::child_scope(bool is_object) const {
  const char* kind = is_object ? "an object" : "an array";
  if (frames_.empty()) {
    if (is_object) return Scope::top;
    fail(1, "a shard is a JSON object; this file holds an array");
  }
  const Frame& parent = frames_.back();
  const std::string key = parent.scope == Scope::entries || parent.scope == Scope::flavor_list ? "" : parent.keys.back();
  switch (parent.scope) {
    case Scope::top:
      if (key == "flavors" && !is_object) return Scope::flavor_list;
      if (key == "counters" && is_object) return Scope::counters;
      if (key == "entries" && !is_object) return Scope::entries;
      break;
    case Scope::counters:
      if (key == "sections" && is_object) return Scope::counter_sections;
      if (key == "arch" && is_object) return Scope::counter_arch;
      break;
    case Scope::counter_sections: if (is_object) return Scope::counter_section; break;
    case Scope::entries: if (is_object) return Scope::entry; break;
    case Scope::entry:
      if (key == "canonical" && is_object) return Scope::canonical;
      if (key == "ll" && is_object) return Scope::ll;
      break;
    case Scope::ll: if (is_object) return Scope::flavor_section; break;
    case Scope::flavor_section:
      if (key == "resources" && is_object) return Scope::resources;
      if (key == "isa" && is_object) return Scope::isa;
      break;
    case Scope::isa: if ((key == "counts" || key == "loop") && is_object) return Scope::isa_counts; break;
    default: break;
  }
  if (parent.scope == Scope::entries) fail(current_line(), fmt::format("entries[{}] must be an object", entry_index_));
  fail(current_line(), fmt::format("{} cannot be {}", field(key), kind));
}

void ShardSaxReader::open(Scope scope, const std::string& name) {
  Frame frame{scope, name, current_offset(), {}};
  frame.keys.reserve(8);
  if (scope == Scope::entry) {
    entry_ = Entry{};
  } else if (scope == Scope::entries &&
             !(has_key(frames_[0], "family") && has_key(frames_[0], "written_by") && has_key(frames_[0], "flavors"))) {
    fail(current_line(), "\"family\", \"written_by\" and \"flavors\" must come before \"entries\"");
  } else if (scope == Scope::counters) {
    counters_line_ = line_of(frame);
  } else if (scope == Scope::canonical) {
    section_ = &entry_.canonical;
  } else if (scope == Scope::flavor_section) {
    section_ = &entry_.flavors[name];
  }
  frames_.push_back(std::move(frame));
}

bool ShardSaxReader::start_object(std::size_t) {
  Scope scope = child_scope(true);
  open(scope, frames_.empty() || frames_.back().scope == Scope::entries ? "" : frames_.back().keys.back());
  return true;
}

bool ShardSaxReader::start_array(std::size_t) {
  Scope scope = child_scope(false);
  open(scope, frames_.back().keys.back());
  return true;
}

bool ShardSaxReader::end_array() {
  frames_.pop_back();
  return true;
}

bool ShardSaxReader::end_object() {
  close_object();
  frames_.pop_back();
  return true;
}

void ShardSaxReader::check_required(const Frame& frame, std::initializer_list<const char*> required) const {
  for (const char* key : required)
    if (!has_key(frame, key)) fail(line_of(frame), fmt::format("{} has no \"{}\" field", container_label(), key));
}

void ShardSaxReader::close_object() {
  const Frame& frame = frames_.back();
  switch (frame.scope) {
    case Scope::top: check_required(frame, {"format", "family", "written_by", "flavors", "counters", "entries"}); break;
    case Scope::counters: check_required(frame, {"configs", "validation_refused", "sections", "arch"}); break;
    case Scope::counter_section: check_required(frame, {"emitted", "refused"}); break;
    case Scope::isa: check_required(frame, {"counts", "loop"}); break;
    case Scope::canonical: check_required(frame, {"sha256", "bytes"}); break;
    case Scope::flavor_section: close_flavor_section(); break;
    case Scope::ll:
      for (const auto& f : shard_.flavors)
        if (!entry_.flavors.count(f))
          fail(line_of(frame), fmt::format("{} lacks flavor \"{}\" listed in the header", entry_label(), f));
      break;
    case Scope::entry: close_entry(); break;
    default: break;
  }
}

void ShardSaxReader::close_flavor_section() {
  const Frame& frame = frames_.back();
  if (has_key(frame, "rejected")) {
    for (const char* other : {"sha256", "bytes", "resources", "isa", "code"})
      if (has_key(frame, other))
        fail(line_of(frame), fmt::format("{} is a refusal and cannot also hold \"{}\"", container_label(), other));
    return;
  }
  check_required(frame, {"sha256", "bytes"});
}

void ShardSaxReader::close_entry() {
  const Frame& frame = frames_.back();
  check_required(frame, {"id", "spec_digest", "arch"});
  if (has_key(frame, "rejected")) {
    for (const char* key : {"kernel", "canonical", "ll"})
      if (has_key(frame, key))
        fail(line_of(frame), fmt::format("{} is a validation refusal and cannot also hold \"{}\"", entry_label(), key));
  } else {
    check_required(frame, {"kernel", "canonical", "ll"});
  }
  if (!shard_.entries.empty() && shard_.entries.back().id == entry_.id)
    fail(line_of(frame), fmt::format("duplicate entry id {} (ids are unique, one entry per config)", entry_.id));
  if (!shard_.entries.empty() && shard_.entries.back().id > entry_.id)
    fail(line_of(frame), fmt::format("entry id {} follows id {}: entries must be in increasing id order", entry_.id,
                                 shard_.entries.back().id));
  shard_.entries.push_back(std::move(entry_));
  entry_ = Entry{};
  ++entry_index_;
}

}  // namespace kemit::golden::detail

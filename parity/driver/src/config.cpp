// Strict loading of parity config files (docs/protocol.md, "Parity config files").
#include "kemit/driver/config.h"
#include "kemit/driver/join.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "kemit/driver/sha256.h"
#include "kemit/input_limits.h"
#include "kemit/driver/strict_json.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

const std::vector<std::string> kConfigFields = {"id", "arch", "expect", "why", "spec", "expect_no_spill"};
// Ids are ints in both engines' protocol; a billion leaves room for any family.
constexpr long long kMaxConfigId = 1000000000;
const std::vector<std::string> kTopFields = {"family", "configs", "comment"};

// A short rendering of a found value: "number 7", "string \"x\"".
std::string describe(const json& value) {
  std::string text = value.dump();
  if (text.size() > 40) {
    size_t keep = 37;
    while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // a whole character
    text = text.substr(0, keep) + "...";
  }
  return std::string(value.type_name()) + " " + text;
}

bool is_integer(const json& value) { return value.is_number_integer() || value.is_number_unsigned(); }

// "config id 4" when the id is usable, else "configs[3]" (the index), as the contract asks.
std::string config_label(const json& config, size_t index) {
  if (config.is_object() && config.contains("id") && is_integer(config["id"]) && config["id"].get<long long>() >= 1)
    return "config id " + std::to_string(config["id"].get<long long>());
  return "configs[" + std::to_string(index) + "]";
}

[[noreturn]] void fail(const std::string& file, const std::string& where, const std::string& message) {
  throw ConfigError(file + ": " + (where.empty() ? "" : where + ": ") + message);
}

void report_duplicate_keys(const StrictParse& parsed, const std::string& file) {
  if (parsed.duplicates.empty()) return;
  const DuplicateKey& dup = parsed.duplicates.front();
  const std::string fix = " (JSON parsers silently keep only one of them); remove or rename one";
  if (dup.path.empty()) fail(file, "", "duplicate top-level key '" + dup.key + "'" + fix);
  size_t index = 0;
  if (std::sscanf(dup.path.c_str(), "configs[%zu]", &index) == 1 && parsed.value.contains("configs") &&
      parsed.value["configs"].is_array() && index < parsed.value["configs"].size()) {
    std::string inner = dup.path.substr(dup.path.find(']') + 1);
    std::string where = inner.empty() ? "" : " in " + inner.substr(1);
    fail(file, config_label(parsed.value["configs"][index], index), "duplicate key '" + dup.key + "'" + where + fix);
  }
  fail(file, "", "duplicate key '" + dup.key + "' in " + dup.path + fix);
}

void require_type(bool ok, const std::string& file, const std::string& where, const std::string& field,
                  const std::string& expected, const json& found) {
  if (!ok) fail(file, where, "field '" + field + "' must be " + expected + " (found " + describe(found) + ")");
}

void check_config_fields(const json& config, const std::string& file, const std::string& where) {
  for (const auto& item : config.items())
    if (std::find(kConfigFields.begin(), kConfigFields.end(), item.key()) == kConfigFields.end())
      fail(file, where, "unknown field '" + item.key() + "' (allowed: " + join(kConfigFields) + "); fix or remove it");
  for (const char* field : {"id", "arch", "expect", "why", "spec"})
    if (!config.contains(field)) fail(file, where, std::string("missing field '") + field + "'");
}

ParityConfig parse_one_config(const json& config, size_t index, const std::string& file) {
  std::string where = config_label(config, index);
  if (!config.is_object()) fail(file, where, "a config must be an object (found " + describe(config) + ")");
  check_config_fields(config, file, where);
  const json& id = config["id"];
  require_type(is_integer(id) && id.get<long long>() >= 1 && id.get<long long>() <= kMaxConfigId, file, where, "id",
               "an integer from 1 to " + std::to_string(kMaxConfigId), id);
  const json& arch = config["arch"];
  require_type(arch.is_string() && !arch.get<std::string>().empty(), file, where, "arch", "a non-empty string", arch);
  const json& expect = config["expect"];
  require_type(expect == "emit" || expect == "reject", file, where, "expect", "\"emit\" or \"reject\"", expect);
  const json& why = config["why"];
  require_type(why.is_string() && !why.get<std::string>().empty() && why.get<std::string>().find('\n') == std::string::npos,
               file, where, "why", "a non-empty one-line string", why);
  if (why.get_ref<const std::string&>().size() > limits::kMaxWhyBytes)
    fail(file, where,
         "field 'why' is " + std::to_string(why.get_ref<const std::string&>().size()) +
             " bytes, above the input limit of " + std::to_string(limits::kMaxWhyBytes) +
             " (one line that says what the config pins; details belong in the family's tests or a comment)");
  require_type(config["spec"].is_object(), file, where, "spec", "an object", config["spec"]);
  ParityConfig parsed;
  if (config.contains("expect_no_spill")) {
    require_type(config["expect_no_spill"].is_boolean(), file, where, "expect_no_spill", "a boolean",
                 config["expect_no_spill"]);
    parsed.expect_no_spill = config["expect_no_spill"].get<bool>();
  }
  parsed.id = id.get<int>();
  parsed.arch = arch.get<std::string>();
  parsed.expect = expect == "emit" ? Expect::emit : Expect::reject;
  parsed.why = why.get<std::string>();
  parsed.spec = config["spec"];
  parsed.spec_digest = spec_digest(parsed.arch, parsed.spec);
  return parsed;
}

// Ids are unique, never reused, and kept in increasing order so that git merges stay local.
void check_ids(const std::vector<ParityConfig>& configs, const std::string& file) {
  std::map<int, size_t> first_index;
  int highest = 0;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto [it, inserted] = first_index.emplace(configs[i].id, i);
    highest = std::max(highest, configs[i].id);
    if (!inserted)
      fail(file, "config id " + std::to_string(configs[i].id),
           "duplicate id (configs[" + std::to_string(it->second) + "] and configs[" + std::to_string(i) +
               "]); ids are unique and never reused: give the newer config the next free id, " +
               std::to_string(highest + 1));
  }
  for (size_t i = 1; i < configs.size(); ++i)
    if (configs[i].id < configs[i - 1].id)
      fail(file, "config id " + std::to_string(configs[i].id),
           "comes after id " + std::to_string(configs[i - 1].id) + " (configs[" + std::to_string(i) +
               "]); keep configs in increasing id order, one per line");
}

void check_top_level(const json& top, const std::string& file, const std::string& stem) {
  if (!top.is_object()) fail(file, "", "the top level must be an object (found " + describe(top) + ")");
  for (const auto& item : top.items())
    if (std::find(kTopFields.begin(), kTopFields.end(), item.key()) == kTopFields.end())
      fail(file, "", "unknown top-level field '" + item.key() + "' (allowed: " + join(kTopFields) + "); fix or remove it");
  if (!top.contains("family")) fail(file, "", "missing field 'family'");
  if (!top.contains("configs")) fail(file, "", "missing field 'configs'");
  require_type(top["family"].is_string(), file, "", "family", "a string", top["family"]);
  require_type(top["configs"].is_array(), file, "", "configs", "an array", top["configs"]);
  if (top.contains("comment")) require_type(top["comment"].is_string(), file, "", "comment", "a string", top["comment"]);
  std::string family = top["family"].get<std::string>();
  if (!is_valid_family_name(family))
    fail(file, "", "field 'family': '" + family + "' must match [a-z0-9_]+");
  if (family != stem)
    fail(file, "", "field 'family' is '" + family + "' but the file is named '" + stem +
                       ".json'; the file name must be the family name");
}

}  // namespace

std::string spec_digest(const std::string& arch, const nlohmann::json& spec) {
  // nlohmann's default object is a std::map: dump() sorts keys bytewise (= by code point for
  // UTF-8), writes no spaces and keeps non-ASCII as UTF-8, as the contract asks.
  return sha256_hex(json{{"arch", arch}, {"spec", spec}}.dump());
}

bool is_valid_family_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

FamilyConfigs parse_family_configs(const std::string& text, const std::string& display_path) {
  std::string stem = std::filesystem::path(display_path).stem().string();
  StrictParse parsed;
  try {
    limits::check_json_limits(text, display_path);
    parsed = parse_json_detecting_duplicates(text);
  } catch (const limits::InputLimitError& error) {
    throw ConfigError(std::string(error.what()) + "; see docs/limits.md");
  } catch (const json::exception& error) {  // syntax errors, and numbers nlohmann cannot hold
    fail(display_path, "", std::string("not valid JSON: ") + error.what());
  }
  report_duplicate_keys(parsed, display_path);
  check_top_level(parsed.value, display_path, stem);
  FamilyConfigs family;
  family.family = stem;
  family.display_path = display_path;
  const json& configs = parsed.value["configs"];
  for (size_t i = 0; i < configs.size(); ++i) family.configs.push_back(parse_one_config(configs[i], i, display_path));
  check_ids(family.configs, display_path);
  return family;
}

FamilyConfigs load_family_file(const std::filesystem::path& file, std::string display_path) {
  if (display_path.empty()) display_path = file.string();
  std::string text;
  try {
    text = limits::read_regular_file(file, display_path);
  } catch (const limits::InputLimitError& error) {
    throw ConfigError(error.what());
  }
  FamilyConfigs family = parse_family_configs(text, display_path);
  family.file = file;
  return family;
}

std::vector<FamilyConfigs> load_config_dir(const std::filesystem::path& dir, const std::string& display_dir,
                                           const std::vector<std::string>& only) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error))
    throw ConfigError(display_dir + ": not a directory (pass --configs DIR or --root DIR)");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<FamilyConfigs> families;
  for (const auto& file : files) {
    std::string stem = file.stem().string();
    bool selected = only.empty() || std::any_of(only.begin(), only.end(), [&](const std::string& part) {
                      return stem.find(part) != std::string::npos;
                    });
    if (selected) families.push_back(load_family_file(file, display_dir + "/" + file.filename().string()));
  }
  return families;
}

}  // namespace kemit::driver

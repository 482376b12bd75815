// Parity configs: parity/configs/<family>.json, loaded strictly per docs/protocol.md.
// A load error names the file, the config (id, or index when the id itself is bad), the field,
// what was found and what to do; the driver exits 2 on it.
#pragma once
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::driver {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Expect { emit, reject };

struct ParityConfig {
  int id = 0;
  std::string arch;
  Expect expect = Expect::emit;
  std::string why;
  nlohmann::json spec;                   // handed to the engines verbatim
  std::optional<bool> expect_no_spill;   // read by the LLVM lane only
  std::string spec_digest;               // see spec_digest()
};

struct FamilyConfigs {
  std::string family;
  std::filesystem::path file;   // as opened
  std::string display_path;     // as printed in messages and repro commands, e.g. parity/configs/x.json
  std::vector<ParityConfig> configs;  // increasing id order
  bool subset = false;  // some configs were left out by a selection (selection.h): not a complete run
};

// sha256 (hex) of the canonical JSON of {"arch": arch, "spec": spec}: keys sorted, no spaces,
// UTF-8. It identifies a config across renumbering (the golden store keys moves on it).
std::string spec_digest(const std::string& arch, const nlohmann::json& spec);

// True for names matching [a-z0-9_]+.
bool is_valid_family_name(const std::string& name);

// Parses one family file's text. `display_path` is used in messages; its stem must be the family.
FamilyConfigs parse_family_configs(const std::string& text, const std::string& display_path);

// Reads and parses one file; `display_path` defaults to the path itself.
FamilyConfigs load_family_file(const std::filesystem::path& file, std::string display_path = "");

// Every *.json in `dir` whose family name contains one of `only` (all when empty), sorted by
// family. `display_dir` prefixes file names in messages (e.g. "parity/configs").
std::vector<FamilyConfigs> load_config_dir(const std::filesystem::path& dir, const std::string& display_dir,
                                           const std::vector<std::string>& only);

}  // namespace kemit::driver

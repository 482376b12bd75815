// JSON parsing that refuses what nlohmann's default parser silently accepts: duplicate keys.
// nlohmann keeps the last of two equal keys, which once hid newer golden entries in rocKE's
// harness; every file kemit reads as data goes through here.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::driver {

struct DuplicateKey {
  std::string path;  // where the object sits, e.g. "configs[3].spec" ("" for the top level)
  std::string key;
};

struct StrictParse {
  nlohmann::json value;
  std::vector<DuplicateKey> duplicates;  // in document order; the value keeps the last copy
};

// Parses `text`; throws nlohmann::json::parse_error on a syntax error (its message carries the
// line and column). Duplicate keys do not throw: the caller names them with its own context.
StrictParse parse_json_detecting_duplicates(const std::string& text);

}  // namespace kemit::driver

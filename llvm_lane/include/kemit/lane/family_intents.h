// Performance intents and the roofline of a family, as data (docs/isa_profile.md, "Intents" and
// "Roofline"): parity/intents/<family>.json, read without the lane (library kemit_roofline), so
// golden/ and run_diff can derive a config's roofline from its spec at read time.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/lane/roofline.h"

namespace kemit::lane {

struct Intent {
  std::string name;                          // what the family promises, in words
  std::map<std::string, std::string> match;  // spec fields that must equal these strings
  std::string when;                          // expression: the intent applies when non-zero ("" = always)
  std::string require;                       // expression that must be non-zero
  std::vector<std::string> archs;            // the processors it applies to (empty: every one)
  // "ID" or "ID@FLAVOR" -> why that config (at that flavor) may break this intent today
  std::map<std::string, std::string> known_breaks;
};

struct FamilyIntents {
  std::string family;
  std::string file;          // where they were read, for messages
  nlohmann::json defaults;   // spec fields the family defaults, for configs that leave them out
  std::vector<Intent> intents;
  std::optional<RooflineSpec> roofline;  // what a config's spec moves and computes (docs/isa_profile.md)
};

// Every <family>.json under `folder` (none: an empty map). Throws std::runtime_error naming the
// file and the field for a malformed file, and for an expression muparser cannot parse.
std::map<std::string, FamilyIntents> load_intents(const std::string& folder);

}  // namespace kemit::lane

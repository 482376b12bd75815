// Performance intents (docs/isa_profile.md, "Intents"): per family, properties every emitting
// config must show in its compiled code, written as muparser expressions over the config's spec
// and its kernels' ISA profiles, in parity/intents/<family>.json. Checked after the result cache,
// so an edited intent needs no recompile.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/lane/lane.h"
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

// The module's result against its family's intents, kernel by kernel: the first intent a kernel
// breaks turns an LLVM_OK result into INTENT_BROKEN, naming the intent, its expression and the
// values it saw. Other verdicts are left alone.
void apply_intents(const FamilyIntents& intents, const nlohmann::json& spec, const LaneModule& module,
                   LaneResult& result);

// The module's static roofline (roofline_of) with the lowest occupancy of its kernels, into
// result.roofline when its family states one and llc ran. Information: the verdict is left alone.
void attach_roofline(const FamilyIntents& intents, const nlohmann::json& spec, const LaneModule& module,
                     LaneResult& result);

}  // namespace kemit::lane

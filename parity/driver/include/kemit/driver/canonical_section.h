// The canonical section of an emit answer: the canonical IR, then the launch plan (docs/protocol.md).
// check_byte_identity compares it byte for byte, run_diff hashes it into the golden shards and
// --explain shows it, so a plan that differs between the engines, or changes, is caught like an
// IR change. An engine without plans (the blessing commit's worker of an older tree) sends no
// `plan`: its section is the canonical text alone.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kemit::driver {

inline std::string canonical_section(const nlohmann::json& response) {
  std::string text = response.value("canonical", "");
  if (response.contains("plan") && response["plan"].is_string()) text += response["plan"].get<std::string>();
  return text;
}

}  // namespace kemit::driver

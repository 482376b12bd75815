// Promotion: a shrunk failing spec becomes a numbered parity config, one line in
// parity/configs/<family>.json with the next free id, checked by the driver's strict loader.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kemit::fuzz {

struct PromotedConfig {
  std::string family;
  std::string arch;
  bool expect_emit = true;  // the reference engine's decision
  std::string why;          // one line
  nlohmann::json spec;
};

// `{"id": 7, "arch": "gfx942", "expect": "emit", "why": "...", "spec": {...}}`: the files' own
// one-line layout (", " and ": " separators, spec keys sorted).
std::string config_line(int id, const PromotedConfig& config);

// Appends the config with the next free id (one more than the largest) to `file` and returns
// the id. The new text must load with the driver's loader before it replaces the file
// (atomically); otherwise nothing is written and driver::ConfigError says why.
int append_config(const std::string& file, const std::string& display_path, const PromotedConfig& config);

}  // namespace kemit::fuzz

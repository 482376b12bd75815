// The parity configs as the lane needs them (parity/configs/<family>.json; the
// format is docs/protocol.md). The parity driver owns the strict loader; this
// reader checks only what the lane relies on and names the file when it fails.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::lane {

struct ParityConfig {
  std::string family;
  int id = 0;
  std::string arch;
  std::string expect;  // "emit" or "reject"
  std::string why;     // what --filter searches besides "family:id", as in every lane
  nlohmann::json spec;
  bool expect_no_spill = false;
};

// Every config of every `<family>.json` under `folder` whose family name contains
// one of `only` (all when empty), by family then id. Throws std::runtime_error.
std::vector<ParityConfig> load_parity_configs(const std::string& folder, const std::vector<std::string>& only);

}  // namespace kemit::lane

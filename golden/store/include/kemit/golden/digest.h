// SHA-256 helpers shared by the store and its callers (run_diff hashes emitted texts with these).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kemit::golden {

// Lowercase hex SHA-256 of the bytes of `data` (OpenSSL EVP).
std::string sha256_hex(std::string_view data);

// The canonical JSON of {"arch": arch, "spec": spec}: keys sorted, no spaces, UTF-8
// (docs/protocol.md). Identifies a config across renumbering.
std::string canonical_spec_json(const std::string& arch, const nlohmann::json& spec);
std::string spec_digest(const std::string& arch, const nlohmann::json& spec);

}  // namespace kemit::golden

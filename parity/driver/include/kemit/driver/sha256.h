// SHA-256 through OpenSSL's EVP interface: the digest of emitted texts and of config specs.
#pragma once
#include <string>
#include <string_view>

namespace kemit::driver {

// Lowercase hex digest of the bytes of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace kemit::driver

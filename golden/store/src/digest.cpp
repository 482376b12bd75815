// SHA-256 through OpenSSL's EVP interface (the low-level SHA256_* calls are deprecated in 3.0).
#include "kemit/golden/digest.h"

#include <array>
#include <memory>
#include <stdexcept>

#include <openssl/evp.h>

namespace kemit::golden {

std::string sha256_hex(std::string_view data) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1)
    throw std::runtime_error("golden: OpenSSL SHA-256 failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex.push_back(kHex[digest[i] >> 4]);
    hex.push_back(kHex[digest[i] & 0xf]);
  }
  return hex;
}

std::string canonical_spec_json(const std::string& arch, const nlohmann::json& spec) {
  // nlohmann::json keeps object keys in a std::map, so dump() is sorted by key bytes, which is
  // the code-point order Python's json.dumps(sort_keys=True) uses for UTF-8 text.
  nlohmann::json doc = {{"arch", arch}, {"spec", spec}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
}

std::string spec_digest(const std::string& arch, const nlohmann::json& spec) {
  return sha256_hex(canonical_spec_json(arch, spec));
}

}  // namespace kemit::golden

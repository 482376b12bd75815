#include "kemit/report/shard.h"

#include <openssl/evp.h>

#include <cctype>
#include <charconv>

namespace kemit::report {
namespace {

std::uint64_t key_hash(const std::string& key) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(key.data(), key.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length < 8)
    throw std::runtime_error("sha256 failed in OpenSSL");
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | digest[i];
  return value;
}

bool parse_count(const std::string& text, int& value) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

Shard parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  Shard shard;
  bool numbers = slash != std::string::npos && parse_count(text.substr(0, slash), shard.index) &&
                 parse_count(text.substr(slash + 1), shard.count);
  if (!numbers)
    throw ShardError("--shard '" + text + "': expected K/N with whole numbers, e.g. --shard 2/3 (shard 2 of 3)");
  if (shard.count < 1) throw ShardError("--shard '" + text + "': N must be at least 1");
  if (shard.index < 1 || shard.index > shard.count)
    throw ShardError("--shard '" + text + "': K must be between 1 and N=" + std::to_string(shard.count) +
                     " (shards are numbered from 1)");
  return shard;
}

int shard_of(const std::string& family, std::int64_t id, int count) {
  if (count < 1) throw ShardError("shard count must be at least 1");
  return static_cast<int>(key_hash(family + ":" + std::to_string(id)) % static_cast<std::uint64_t>(count)) + 1;
}

bool in_shard(const std::optional<Shard>& shard, const std::string& family, std::int64_t id) {
  return !shard || shard_of(family, id, shard->count) == shard->index;
}

}  // namespace kemit::report

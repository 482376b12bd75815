// Shards for CI machines (docs/driver.md, "Shards"): `--shard K/N` runs the configs whose key
// `<family>:<id>` falls in shard K of N. The assignment depends on the key alone, so it is the
// same in every lane, on every machine and whatever else is in the config folder:
//
//   shard_of(family, id, N) = 1 + (first 8 bytes of sha256("<family>:<id>"), big-endian) mod N
//
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace kemit::report {

struct ShardError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Shard {
  int index = 1;  // 1-based, 1 <= index <= count
  int count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// Parses "K/N" (1 <= K <= N, N >= 1, plain decimal numbers); throws ShardError with a message
// that says what was given and what is expected.
Shard parse_shard(const std::string& text);

// The 1-based shard of config `id` of `family` among `count` shards.
int shard_of(const std::string& family, std::int64_t id, int count);

// True when there is no shard, or the config falls in it.
bool in_shard(const std::optional<Shard>& shard, const std::string& family, std::int64_t id);

}  // namespace kemit::report

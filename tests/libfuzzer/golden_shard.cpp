// libFuzzer target: the golden shard loader (parse_shard), with a round-trip oracle: a shard that
// loads must serialize to a text that loads back to the same shard.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kemit::golden;
  std::string text(reinterpret_cast<const char*>(data), size);
  Shard shard;
  try {
    shard = parse_shard(text, "golden/shards/conv.json");
  } catch (const GoldenError&) {
    return 0;  // refused with a message: what the loader is for
  }
  std::string written = serialize_shard(shard);
  Shard again = parse_shard(written, "golden/shards/conv.json");  // throws (and so fails) if not loadable
  if (!(again.entries == shard.entries) || again.flavors != shard.flavors || serialize_shard(again) != written) std::abort();
  return 0;
}

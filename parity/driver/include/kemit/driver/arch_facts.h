// What a processor is to the harness, as an engine's hello says it (docs/protocol.md,
// `arch_facts`): its wave size (the numerics lane sizes a launch by it), its LDS size and its
// matrix-core kind (the fuzzer's domains judge a spec by them). The harness keeps no arch table.
#pragma once
#include <string>

namespace kemit::driver {

struct ArchFacts {
  std::string name;
  int wave_size = 0;
  int lds_bytes = 0;  // 0: the engine's hello predates the field
  std::string mma;    // "": the engine's hello predates the field
};

}  // namespace kemit::driver

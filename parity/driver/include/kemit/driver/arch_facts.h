// What a processor is to the harness, as an engine's hello says it (docs/protocol.md,
// `arch_facts`): its wave size (the numerics lane sizes a launch by it), its LDS size and its
// matrix-core kind (the fuzzer's domains judge a spec by them), and the variant of the 8-bit floats
// its fp8 mma reads (the numerics lane encodes fp8 inputs in it). The harness keeps no arch table.
#pragma once
#include <string>

namespace kemit::driver {

struct ArchFacts {
  std::string name;
  int wave_size = 0;
  int lds_bytes = 0;  // 0: the engine's hello predates the field
  std::string mma;    // "": the engine's hello predates the field
  std::string fp8_format;  // "fnuz" or "ocp"; "": no fp8 mma (or the engine's hello predates the field)
  // The launch limits the proof lane holds a contract to (0: the engine's hello predates the field).
  long long max_block_lanes = 0;  // work-items per workgroup
  long long max_grid_lanes = 0;   // work-items per grid dimension
};

}  // namespace kemit::driver

// What a flavor is to the harness, as an engine's hello says it (docs/protocol.md, `flavor_facts`):
// the LLVM major whose tools check its modules, the datalayout they must carry, and the processors
// its LLVM knows. The harness keeps no flavor table of its own.
#pragma once
#include <string>
#include <vector>

namespace kemit::driver {

struct FlavorFacts {
  std::string name;
  int major = 0;
  std::string datalayout;
  std::vector<std::string> processors;
};

}  // namespace kemit::driver

// libFuzzer target: the C++ engine's canonical IR parser (the `lower` op's input), with its contract
// as the oracle: a text that parses is exactly the printer's text of what it parsed; a parsed
// module lowers at every flavor. Linked into this target only (the harness never links the engine).
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "kemit/ir/parser.h"
#include "kemit/ir/printer.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kemit;
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<ir::Kernel> kernels;
  try {
    kernels = ir::parse_module(text);
  } catch (const ir::ParseError&) {
    return 0;
  }
  if (ir::print_module(kernels) != text) std::abort();
  std::vector<std::reference_wrapper<const ir::Kernel>> refs(kernels.begin(), kernels.end());
  for (const auto& name : llvm::flavor_names()) {
    try {
      (void)llvm::lower_module(refs, llvm::find_flavor(name));
    } catch (const std::exception&) {  // a refusal of the lowering is an answer, not a crash
    }
  }
  return 0;
}

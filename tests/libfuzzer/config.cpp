// libFuzzer target: the parity config loader (strict JSON, limits, every field check), and the spec
// digest every loaded config gets (it dumps the spec).
#include <cstdint>
#include <string>

#include "kemit/driver/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    kemit::driver::FamilyConfigs family = kemit::driver::parse_family_configs(text, "parity/configs/elementwise.json");
    for (const auto& config : family.configs) (void)config.spec.dump();
  } catch (const kemit::driver::ConfigError&) {
  }
  return 0;
}

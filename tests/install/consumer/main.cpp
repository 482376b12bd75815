// Emits one elementwise kernel through the installed library and prints its llvm19 text.
#include <iostream>

#include "kemit/engine.h"

int main() {
  kemit::EmitResult result = kemit::emit("elementwise", "gfx942", nlohmann::json::object(), {"llvm19"});
  if (result.rejected || result.ll.empty() || result.ll[0].rejected) {
    std::cerr << "refused: " << result.reason << "\n";
    return 1;
  }
  std::cout << "kernel " << result.kernel_name << "\n" << result.ll[0].text;
  return 0;
}

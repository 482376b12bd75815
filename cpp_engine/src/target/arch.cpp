// The arch table: the processors kemit emits for, and the facts the families need.
// Mirrors py_engine/kemit/target/arch.py (a test proves the two tables agree).
#include "kemit/target/arch.h"

namespace kemit::target {

const std::vector<Arch>& archs() {
  static const std::vector<Arch> table = {
      {"gfx90a", 64, 65536, "llvm16", "mfma"},
      {"gfx942", 64, 65536, "llvm19", "mfma"},
      {"gfx950", 64, 163840, "llvm22", "mfma"},
      {"gfx1100", 32, 65536, "llvm16", "wmma_gfx11"},
      {"gfx1151", 32, 65536, "llvm19", "wmma_gfx11"},
      {"gfx1201", 32, 65536, "llvm19", "wmma_gfx12"},
      {"gfx1250", 32, 327680, "llvm22", "wmma_gfx1250"},
  };
  return table;
}

std::vector<std::string> arch_names() {
  std::vector<std::string> names;
  for (const auto& arch : archs()) names.push_back(arch.name);
  return names;
}

const Arch& find_arch(std::string_view name) {
  for (const auto& arch : archs())
    if (arch.name == name) return arch;
  std::string known;
  for (const auto& arch : archs()) known += (known.empty() ? "" : ", ") + arch.name;
  throw UnknownArch("unknown arch '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace kemit::target

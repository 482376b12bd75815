// The arch table: the processors kemit emits for, and the facts the families need.
// Mirrors py_engine/kemit/target/arch.py.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kemit::target {

struct Arch {
  std::string name;
  int wave_size;
  int lds_bytes;
  std::string oldest_flavor;  // the oldest flavor whose LLVM knows the processor
  std::string mma;            // matrix-core kind: mfma, wmma_gfx11, wmma_gfx12, wmma_gfx1250
};

const std::vector<Arch>& archs();

struct UnknownArch : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::vector<std::string> arch_names();
// Throws UnknownArch.
const Arch& find_arch(std::string_view name);

}  // namespace kemit::target

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

// `reason` is the whole refusal text (what() would end it at a NUL byte of the name).
struct UnknownArch : std::invalid_argument {
  explicit UnknownArch(const std::string& text) : std::invalid_argument(text), reason(text) {}
  std::string reason;
};

std::vector<std::string> arch_names();
// Throws UnknownArch.
const Arch& find_arch(std::string_view name);

}  // namespace kemit::target

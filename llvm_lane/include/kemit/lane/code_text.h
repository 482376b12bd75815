// The code of a compiled module, as the TWIN report compares it (docs/llvm_lane.md, "Compiled
// twins"): from the AMDGPU assembly llc (or the in-process codegen) prints, each kernel's body from
// its label to its `.Lfunc_end` marker, without comments, blank lines, directives and the kernel's
// own name, one instruction or local label per line. Two modules whose code text is equal run the
// same instructions: the kernel descriptor and the metadata (register counts, the waves-per-EU
// hint) are not part of it. Header-only and free of LLVM and of the lane, because both the
// checkers (in-process codegen) and the lane (the llc path) compute it.
#pragma once
#include <string>

namespace kemit::lane {

inline std::string trimmed(const std::string& line) {
  size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  size_t last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

inline std::string code_text(const std::string& assembly) {
  std::string code;
  bool in_kernel = false;
  size_t start = 0;
  while (start < assembly.size()) {
    size_t end = assembly.find('\n', start);
    if (end == std::string::npos) end = assembly.size();
    std::string raw = assembly.substr(start, end - start);
    std::string line = trimmed(raw.substr(0, raw.find(';')));  // without its comment
    start = end + 1;
    if (line.empty()) continue;
    bool label = line.back() == ':';
    if (!in_kernel) {
      if (label && line[0] != '.') {  // a kernel's own label: its name stays out
        in_kernel = true;
        code += "kernel:\n";
      }
      continue;
    }
    if (line.rfind(".Lfunc_end", 0) == 0) {
      in_kernel = false;
      continue;
    }
    if (line[0] == '.' && !label) continue;  // a directive
    code += line + "\n";
  }
  return code;
}

// The occupancy LLVM states for each kernel, in assembly order: the `; Occupancy: N` line of each
// `; Kernel info:` comment block (16, 19 and 22 print it; llvm_flavors.md §7), comma-joined
// ("8" or "8,6"); "" when the assembly has none. The lane checks its own occupancy rules
// (tables/occupancy.json) against it (docs/isa_profile.md).
inline std::string reported_occupancies(const std::string& assembly) {
  static const std::string marker = "; Occupancy: ";
  std::string joined;
  for (size_t at = assembly.find(marker); at != std::string::npos; at = assembly.find(marker, at + 1)) {
    size_t start = at + marker.size();
    size_t end = assembly.find_first_not_of("0123456789", start);
    if (end == start) continue;
    if (!joined.empty()) joined += ",";
    joined += assembly.substr(start, end - start);
  }
  return joined;
}

}  // namespace kemit::lane

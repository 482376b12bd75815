// In-process AMDGPU code generation for kemit_llcheckN: what `llc -O3
// -mtriple=amdgcn-amd-amdhsa -mcpu=<arch>` does, done with this LLVM's own
// TargetMachine so that no process is started per module (docs/llvm_lane.md).
#pragma once
#include <string>

namespace kemit_llcheck {

struct CodegenOutcome {
  bool ok = false;
  std::string diagnostic;        // first error (an `error:` diagnostic, an unknown processor), "" when ok
  bool references_amdgcn = false;  // the assembly names an `llvm.amdgcn.*` symbol (an intrinsic this LLVM lacks)
  std::string metadata;          // the `.amdgpu_metadata` ... `.end_amdgpu_metadata` block, "" when none
  std::string code;              // the kernels' code text (kemit/lane/code_text.h), "" when none
  std::string occupancies;       // LLVM's `; Occupancy: N` per kernel, comma-joined (kemit/lane/code_text.h)
};

// Registers the AMDGPU target, its MC layer, asm printer and asm parser, and the
// codegen command-line defaults llc starts from. Once, before any compile.
void initialise_amdgpu_codegen();

// Parses `text` again in a fresh LLVMContext the way llc does (the target's
// datalayout replaces the module's while parsing, -mtriple overrides the triple,
// "target-cpu" is added where missing) and compiles it at -O3 to assembly in
// memory. A report_fatal_error ("Cannot select") ends the process through the
// fatal-error handler, as it ends llc.
CodegenOutcome compile_for_amdgpu(const std::string& text, const std::string& name, const std::string& arch);

}  // namespace kemit_llcheck

// In-process AMDGPU codegen, step for step what llc's compileModule does for
// `llc -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=<arch> - -o -` (LLVM 16, 19, 22).
// The lane proves the two give identical resources on every parity module
// (check_llvm --codegen both, docs/llvm_lane.md).
#include "llcodegen.h"

#include <map>
#include <memory>
#include <optional>

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/CodeGen/CommandFlags.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#if LLVM_VERSION_MAJOR >= 17
#include "llvm/TargetParser/Triple.h"
#else
#include "llvm/ADT/Triple.h"
#endif

#include "kemit/lane/code_text.h"

namespace kemit_llcheck {
namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";  // the lane's -mtriple

// llc's defaults for every codegen and MC flag (-O3 aside), registered as llc registers them:
// InitTargetOptionsFromCodeGenFlags reads them, and reading an unregistered one is undefined.
llvm::codegen::RegisterCodeGenFlags codegen_flags;

#if LLVM_VERSION_MAJOR >= 18
constexpr auto kOptLevel = llvm::CodeGenOptLevel::Aggressive;
constexpr auto kAssembly = llvm::CodeGenFileType::AssemblyFile;
#else
constexpr auto kOptLevel = llvm::CodeGenOpt::Aggressive;
constexpr auto kAssembly = llvm::CGFT_AssemblyFile;
#endif

#if LLVM_VERSION_MAJOR >= 22  // 22 takes llvm::Triple where 16 and 19 take the string
using TripleArg = llvm::Triple;
#else
using TripleArg = llvm::StringRef;
#endif

// Like llc's diagnostic handler: an error diagnostic (an AMDGPU resource limit,
// an unsupported call) fails the compile instead of ending the process; the
// first one is kept in llc's "error: ..." form.
struct FirstErrorHandler : llvm::DiagnosticHandler {
  std::string* first_error;
  explicit FirstErrorHandler(std::string* sink) : first_error(sink) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    if (info.getSeverity() != llvm::DS_Error || !first_error->empty()) return true;
    llvm::raw_string_ostream stream(*first_error);
    llvm::DiagnosticPrinterRawOStream printer(stream);
    stream << "error: ";
    info.print(printer);
    stream.flush();
    return true;
  }
};

std::unique_ptr<llvm::TargetMachine> target_machine(const std::string& arch, std::string& problem) {
#if LLVM_VERSION_MAJOR >= 22
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(llvm::Triple(kTriple), problem);
#else
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(std::string(kTriple), problem);
#endif
  if (!target) return nullptr;
  llvm::TargetOptions options = llvm::codegen::InitTargetOptionsFromCodeGenFlags(llvm::Triple(kTriple));
  options.MCOptions.AsmVerbose = true;  // llc's -asm-verbose default
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      TripleArg(kTriple), arch, "", options, llvm::codegen::getExplicitRelocModel(),
      llvm::codegen::getExplicitCodeModel(), kOptLevel));
}

// llc parses with the target's datalayout in force (allocas land in the right
// address space even when the text has no datalayout) and then overrides the triple.
std::unique_ptr<llvm::Module> parse_for_target(const std::string& text, const std::string& name,
                                               llvm::TargetMachine& machine, llvm::LLVMContext& context,
                                               std::string& problem) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  llvm::SMDiagnostic error;
  std::string layout = machine.createDataLayout().getStringRepresentation();
  auto module = llvm::parseAssembly(buffer->getMemBufferRef(), error, context, nullptr,
                                    [&](llvm::StringRef, llvm::StringRef) -> std::optional<std::string> {
                                      return layout;
                                    });
  if (!module) {
    llvm::raw_string_ostream stream(problem);
    error.print(nullptr, stream, /*ShowColors=*/false);
    return nullptr;
  }
  module->setTargetTriple(TripleArg(llvm::Triple::normalize(kTriple)));
  return module;
}

// The metadata block as llc prints it, from its directive to its end directive.
std::string metadata_block(const std::string& assembly) {
  size_t start = assembly.find("\t.amdgpu_metadata\n");
  if (start == std::string::npos) return "";
  size_t end = assembly.find(".end_amdgpu_metadata", start);
  if (end == std::string::npos) return "";
  return assembly.substr(start, end - start + std::string(".end_amdgpu_metadata").size()) + "\n";
}

}  // namespace

void initialise_amdgpu_codegen() {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  LLVMInitializeAMDGPUAsmParser();  // inline asm, as llc's InitializeAllAsmParsers
}

namespace {

// One TargetMachine per processor for the checker's life, as one llc run keeps one: building it
// and its subtarget (register info, instruction tables, the register alias cache) again for
// every module would be most of a small module's codegen time. Nothing module-specific lives in it.
llvm::TargetMachine* machine_for(const std::string& arch, std::string& problem) {
  static std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  auto found = machines.find(arch);
  if (found != machines.end()) return found->second.get();
  std::unique_ptr<llvm::TargetMachine> machine = target_machine(arch, problem);
  if (!machine) return nullptr;
  // llc-N only warns here and compiles for the generic processor (llvm_flavors.md §2).
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(arch)) {
    problem = "'" + arch + "' is not a recognized processor for this target";
    return nullptr;
  }
  return machines.emplace(arch, std::move(machine)).first->second.get();
}

}  // namespace

CodegenOutcome compile_for_amdgpu(const std::string& text, const std::string& name, const std::string& arch) {
  CodegenOutcome outcome;
  llvm::TargetMachine* machine = machine_for(arch, outcome.diagnostic);
  if (!machine) return outcome;
  llvm::LLVMContext context;  // fresh per module, like the check's
  context.setDiagnosticHandler(std::make_unique<FirstErrorHandler>(&outcome.diagnostic));
  std::unique_ptr<llvm::Module> module = parse_for_target(text, name, *machine, context, outcome.diagnostic);
  if (!module) return outcome;
  llvm::codegen::setFunctionAttributes(arch, "", *module);  // "target-cpu" where missing, as llc
  std::string assembly;
  {
    llvm::raw_string_ostream out(assembly);
    llvm::buffer_ostream buffered(out);
    llvm::legacy::PassManager passes;
    passes.add(new llvm::TargetLibraryInfoWrapperPass(llvm::TargetLibraryInfoImpl(llvm::Triple(kTriple))));
    if (machine->addPassesToEmitFile(passes, buffered, nullptr, kAssembly, /*DisableVerify=*/false)) {
      outcome.diagnostic = "error: this LLVM's AMDGPU target cannot emit assembly";
      return outcome;
    }
    passes.run(*module);
  }
  if (!outcome.diagnostic.empty()) return outcome;  // an error diagnostic: llc exits 1 here
  outcome.ok = true;
  outcome.references_amdgcn = assembly.find("llvm.amdgcn.") != std::string::npos;
  outcome.metadata = metadata_block(assembly);
  outcome.code = kemit::lane::code_text(assembly);
  outcome.occupancies = kemit::lane::reported_occupancies(assembly);
  return outcome;
}

}  // namespace kemit_llcheck

// kemit_llcheckN: a persistent parse + verify + codegen worker linked against one LLVM version.
//
// Built once per installed LLVM of a flavor (tables/flavors.json) with exactly that version's
// `llvm-config --cxxflags` (-fno-exceptions, -std=c++17), apart from the rest of
// the build. The controller (llvm_lane/src/checker_pool.cpp) keeps one or more
// alive per flavor and streams modules through it, because process start-up
// (loading a 120-145 MB libLLVM) costs 50-80 ms while a check costs ~0.2 ms.
//
// Protocol (docs/llvm_lane.md#checker-protocol), all lines end in '\n':
//   out: READY\t<llvm version>                        once, at start-up
//   in:  CHECK\t<byte count>\t<module name>           then exactly <byte count> bytes of IR
//   out: RESULT\t<name>\t<parsed 0|1>\t<verified 0|1>\t<unknown intrinsics, ','-joined>\t<diagnostic>
//   in:  EXEC\t<byte count>\t<module name>            IR, a launch and its buffers: run in the
//                                                     executor (llvm_lane/executor/exec_verb.cpp)
//   in:  WITNESS\t<byte count>\t<module name>         IR and a launch description (JSON line): a
//                                                     witness run at real size (exec_verb.cpp)
//   in:  DIGEST\t<byte count>\t<module name>          IR: the digest of its decoded kernels, equal
//                                                     for texts that run alike (exec_verb.cpp)
//   in:  QUIT (or end of input)                       -> exit 0
//   in:  COMPILE\t<byte count>\t<arch>\t<name>       check, then (when it passes) codegen in-process:
//   out: COMPILED\t<name>\t<ok 0|1>\t<first error>\t<names llvm.amdgcn.* 0|1>\t<.amdgpu_metadata block>\t<code text>\t<occupancies>
//        (or the RESULT line when the check fails)
//   out: FATAL\t<name>\t<reason>\t<stage check|codegen>  from report_fatal_error, then exit 1
// Fields are escaped (\\, \t, \n) so that one answer is always one line.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "../executor/exec_verb.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llcodegen.h"

namespace {

// Long diagnostics (a verifier dump of a big function) are cut: the controller
// keeps only the first lines anyway.
constexpr int kMaxDiagnosticLines = 6;
constexpr size_t kMaxModuleBytes = size_t(1) << 30;

// Name of the module being checked and the stage it is in ("check" or
// "codegen"), for the fatal-error handler.
std::string current_module_name = "-";
const char* current_stage = "check";

std::string escape_field(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out;
}

std::string first_lines(const std::string& text, int max_lines) {
  std::string out;
  int lines = 0;
  for (char c : text) {
    if (c == '\n' && ++lines >= max_lines) break;
    out += c;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// report_fatal_error (for example from the debug-info auto-upgrade of a broken
// module) ends the process after this returns; say which module did it first.
void report_fatal_to_controller(void*, const char* reason, bool) {
  std::string line = "FATAL\t" + escape_field(current_module_name) + "\t" +
                     escape_field(std::string("LLVM ERROR: ") + reason) + "\t" + current_stage + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

struct CheckOutcome {
  bool parsed = false;
  bool verified = false;
  std::string unknown_intrinsics;
  std::string diagnostic;
};

// A declared `llvm.*` function that this LLVM does not know: llvm-as, opt and
// llc all accept it silently and llc emits an external call (llvm_flavors.md §5).
std::string unknown_intrinsic_names(const llvm::Module& module) {
  std::string names;
  for (const llvm::Function& function : module)
    if (function.isIntrinsic() && function.getIntrinsicID() == llvm::Intrinsic::not_intrinsic)
      names += (names.empty() ? "" : ",") + function.getName().str();
  return names;
}

CheckOutcome check_module(const std::string& text, const std::string& name) {
  CheckOutcome outcome;
  llvm::LLVMContext context;  // fresh per module: nothing leaks from one module to the next
  llvm::SMDiagnostic parse_error;
  // The copy is NUL-terminated, which the lexer requires.
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssembly(buffer->getMemBufferRef(), parse_error, context);
  std::string diagnostic;
  llvm::raw_string_ostream stream(diagnostic);
  if (!module) {
    parse_error.print(nullptr, stream, /*ShowColors=*/false);
    outcome.diagnostic = first_lines(stream.str(), kMaxDiagnosticLines);
    return outcome;
  }
  outcome.parsed = true;
  outcome.verified = !llvm::verifyModule(*module, &stream);  // what llvm-as adds after parsing
  outcome.diagnostic = first_lines(stream.str(), kMaxDiagnosticLines);
  outcome.unknown_intrinsics = unknown_intrinsic_names(*module);
  return outcome;
}

std::string answer_line(const std::string& name, const CheckOutcome& outcome) {
  return "RESULT\t" + escape_field(name) + "\t" + (outcome.parsed ? "1" : "0") + "\t" +
         (outcome.verified ? "1" : "0") + "\t" + escape_field(outcome.unknown_intrinsics) + "\t" +
         escape_field(outcome.diagnostic) + "\n";
}

// Parses "<verb>\t<bytes>\t<rest>"; false on anything else.
bool parse_sized_header(const std::string& line, const std::string& verb, size_t& byte_count, std::string& rest) {
  const size_t at = verb.size() + 1;
  if (line.rfind(verb + "\t", 0) != 0) return false;
  size_t tab = line.find('\t', at);
  if (tab == std::string::npos || tab == at) return false;
  char* end = nullptr;
  unsigned long long count = std::strtoull(line.c_str() + at, &end, 10);
  if (end != line.c_str() + tab || count > kMaxModuleBytes) return false;
  byte_count = static_cast<size_t>(count);
  rest = line.substr(tab + 1);
  return true;
}

// Parses "CHECK\t<bytes>\t<name>"; false on anything else.
bool parse_check_header(const std::string& line, size_t& byte_count, std::string& name) {
  return parse_sized_header(line, "CHECK", byte_count, name);
}

// Parses "COMPILE\t<bytes>\t<arch>\t<name>"; false on anything else.
bool parse_compile_header(const std::string& line, size_t& byte_count, std::string& arch, std::string& name) {
  std::string rest;
  if (!parse_sized_header(line, "COMPILE", byte_count, rest)) return false;
  size_t tab = rest.find('\t');
  if (tab == std::string::npos || tab == 0) return false;
  arch = rest.substr(0, tab);
  name = rest.substr(tab + 1);
  return true;
}

// COMPILE: the check's RESULT when the module fails it (codegen would not run),
// else the in-process codegen's answer.
std::string compile_answer(const std::string& text, const std::string& name, const std::string& arch) {
  CheckOutcome checked = check_module(text, name);
  if (!checked.parsed || !checked.verified || !checked.unknown_intrinsics.empty()) return answer_line(name, checked);
  current_stage = "codegen";
  kemit_llcheck::CodegenOutcome compiled = kemit_llcheck::compile_for_amdgpu(text, name, arch);
  current_stage = "check";
  return "COMPILED\t" + escape_field(name) + "\t" + (compiled.ok ? "1" : "0") + "\t" +
         escape_field(compiled.diagnostic) + "\t" + (compiled.references_amdgcn ? "1" : "0") + "\t" +
         escape_field(compiled.metadata) + "\t" + escape_field(compiled.code) + "\t" +
         escape_field(compiled.occupancies) + "\n";
}

void write_line(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

// The executor's verbs (exec_verb.h): each reads the rest of its request itself.
struct ExecutorVerb {
  const char* name;
  bool (*serve)(const std::string& header, std::istream& in);
};
constexpr ExecutorVerb kExecutorVerbs[] = {{"EXEC", kemit::exec::serve_exec_request},
                                           {"WITNESS", kemit::exec::serve_witness_request},
                                           {"DIGEST", kemit::exec::serve_digest_request}};

const ExecutorVerb* executor_verb(const std::string& line) {
  for (const ExecutorVerb& verb : kExecutorVerbs)
    if (line.rfind(std::string(verb.name) + "\t", 0) == 0) return &verb;
  return nullptr;
}

int main() {
  std::ios::sync_with_stdio(false);
  llvm::install_fatal_error_handler(report_fatal_to_controller, nullptr);
  kemit_llcheck::initialise_amdgpu_codegen();
  write_line(std::string("READY\t") + LLVM_VERSION_STRING + "\n");
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "QUIT") return 0;
    if (const ExecutorVerb* verb = executor_verb(line)) {
      current_module_name = line.substr(line.rfind('\t') + 1);
      if (!verb->serve(line, std::cin)) {
        write_line("PROTOCOL\t" + escape_field(current_module_name) + "\tmalformed " + verb->name + " request\n");
        return 2;
      }
      continue;
    }
    size_t byte_count = 0;
    std::string name, arch;
    bool compile = parse_compile_header(line, byte_count, arch, name);
    if (!compile && !parse_check_header(line, byte_count, name)) {
      write_line("PROTOCOL\t" + escape_field(line.substr(0, 80)) + "\n");
      return 2;  // out of sync: the controller respawns rather than guess
    }
    std::string text(byte_count, '\0');
    if (!std::cin.read(&text[0], static_cast<std::streamsize>(byte_count))) {
      write_line("PROTOCOL\t" + escape_field(name) + "\ttruncated module\n");
      return 2;
    }
    current_module_name = name;
    write_line(compile ? compile_answer(text, name, arch) : answer_line(name, check_module(text, name)));
  }
  return 0;
}

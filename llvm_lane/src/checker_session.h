// One persistent kemit_llcheckN process and the line protocol spoken with it
// (llvm_lane/checker/llcheck.cpp). A session that dies on a module reports that
// module as crashed and starts a fresh process for the next one.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "subprocess.h"

namespace kemit::lane {

struct CheckerAnswer {
  enum class Kind { ANSWERED, CRASHED, UNAVAILABLE };
  Kind kind = Kind::ANSWERED;
  bool parsed = false;
  bool verified = false;
  std::vector<std::string> unknown_intrinsics;
  std::string diagnostic;  // parse/verify diagnostic, or why the checker crashed / is unavailable
  // COMPILE only: the in-process codegen ran (the check passed); how it went.
  bool compiled = false;
  bool codegen_ok = false;
  bool crashed_in_codegen = false;  // CRASHED while compiling (a FATAL "Cannot select", a signal)
  bool references_amdgcn = false;
  std::string metadata;  // the `.amdgpu_metadata` block
  std::string code;      // the kernels' code text (kemit/lane/code_text.h)
  std::string occupancies;  // LLVM's `; Occupancy: N` per kernel, comma-joined
};

class CheckerSession {
 public:
  CheckerSession(std::string checker_path, int llvm_major, std::chrono::milliseconds timeout);
  ~CheckerSession();
  CheckerSession(const CheckerSession&) = delete;
  CheckerSession& operator=(const CheckerSession&) = delete;

  CheckerAnswer check(const std::string& name, const std::string& text);
  // Check, then codegen for `arch` in the checker's own LLVM; `codegen_timeout` is
  // added to the check's timeout for this module.
  CheckerAnswer compile(const std::string& name, const std::string& text, const std::string& arch,
                        std::chrono::milliseconds codegen_timeout);
  // The LLVM version the checker reports at start-up ("19.1.7"); "" when it does not start.
  std::string llvm_version();
  // The checker process currently serving (for tests that kill it); -1 when none.
  pid_t pid() const { return child_.pid; }

 private:
  bool ensure_started(std::string& problem);
  bool read_line(std::string& line, std::chrono::milliseconds timeout);
  CheckerAnswer exchange(const std::string& header, const std::string& name, const std::string& text,
                         std::chrono::milliseconds timeout, const char* doing);
  CheckerAnswer crashed(const std::string& why);
  ExitStatus stop();
  std::string checker_name() const;

  std::string checker_path_;
  int llvm_major_;
  std::chrono::milliseconds timeout_;
  ChildProcess child_;
  std::string pending_;  // bytes read past the last line
  std::string version_;  // from the READY line
  bool timed_out_ = false;  // why the last read_line failed: timeout, not EOF
};

// One answer line of a checker for module `name`: a RESULT (its fields decoded, texts cut at the
// echo limit), or `problem` set to why the line is not one (FATAL, out of protocol).
CheckerAnswer decode_checker_line(const std::string& line, const std::string& name, const std::string& checker,
                                  std::string& problem);

// Protocol field escaping, shared with the checker: "\\", "\t", "\n", "\r".
std::string unescape_field(const std::string& field);
std::vector<std::string> split_tabs(const std::string& line);

}  // namespace kemit::lane

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
};

class CheckerSession {
 public:
  CheckerSession(std::string checker_path, int llvm_major, std::chrono::milliseconds timeout);
  ~CheckerSession();
  CheckerSession(const CheckerSession&) = delete;
  CheckerSession& operator=(const CheckerSession&) = delete;

  CheckerAnswer check(const std::string& name, const std::string& text);
  // The checker process currently serving (for tests that kill it); -1 when none.
  pid_t pid() const { return child_.pid; }

 private:
  bool ensure_started(std::string& problem);
  bool read_line(std::string& line);
  CheckerAnswer crashed(const std::string& why);
  ExitStatus stop();
  std::string checker_name() const;

  std::string checker_path_;
  int llvm_major_;
  std::chrono::milliseconds timeout_;
  ChildProcess child_;
  std::string pending_;  // bytes read past the last line
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

#include "checker_session.h"

#include "kemit/input_limits.h"

#include <stdexcept>

namespace kemit::lane {

std::string unescape_field(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    char next = field[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next == 'r' ? '\r' : next;
  }
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == '\t') fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
    } else if (!item.empty()) {
      items.push_back(item);
      item.clear();
    }
  }
  return items;
}

std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return text;
}

}  // namespace

CheckerSession::CheckerSession(std::string checker_path, int llvm_major, std::chrono::milliseconds timeout)
    : checker_path_(std::move(checker_path)), llvm_major_(llvm_major), timeout_(timeout) {}

CheckerSession::~CheckerSession() {
  if (child_.pid > 0) send_all(child_.stdin_fd, "QUIT\n", 5);
  close_fd(child_.stdin_fd);
  close_fd(child_.stdout_fd);
  if (child_.pid > 0) wait_child(child_.pid);  // QUIT/EOF ends it at once
}

// Ends the process (a no-op kill when it already died) and returns how it ended.
ExitStatus CheckerSession::stop() {
  close_fd(child_.stdin_fd);
  close_fd(child_.stdout_fd);
  ExitStatus status;
  if (child_.pid > 0) status = kill_child(child_.pid);
  child_.pid = -1;
  pending_.clear();
  return status;
}

// Reads one '\n'-terminated line within the timeout; false on EOF or timeout.
bool CheckerSession::read_line(std::string& line, std::chrono::milliseconds timeout) {
  LineRead read = read_child_line(child_.stdout_fd, pending_, line, timeout, limits::kMaxLineBytes);
  timed_out_ = read == LineRead::TIMED_OUT;
  return read == LineRead::LINE;
}

bool CheckerSession::ensure_started(std::string& problem) {
  if (child_.pid > 0) return true;
  try {
    child_ = spawn_child({checker_path_}, /*capture_stderr=*/false);
  } catch (const std::exception& error) {
    problem = error.what();
    return false;
  }
  std::string ready;
  std::string expected = "READY\t" + std::to_string(llvm_major_) + ".";
  if (read_line(ready, timeout_) && ready.rfind(expected, 0) == 0) {
    version_ = ready.substr(6);
    return true;
  }
  problem = checker_path_ + " did not start as an LLVM " + std::to_string(llvm_major_) +
            " checker (first line: '" + one_line(ready) + "'); rebuild it: cmake --build <build> --target kemit_llcheck" +
            std::to_string(llvm_major_);
  stop();
  return false;
}

std::string CheckerSession::llvm_version() {
  std::string problem;
  return ensure_started(problem) ? version_ : "";
}

CheckerAnswer CheckerSession::crashed(const std::string& why) {
  CheckerAnswer answer;
  answer.kind = CheckerAnswer::Kind::CRASHED;
  answer.diagnostic = why;
  stop();  // the next module gets a fresh process
  return answer;
}

std::string CheckerSession::checker_name() const { return "kemit_llcheck" + std::to_string(llvm_major_); }

CheckerAnswer CheckerSession::check(const std::string& name, const std::string& text) {
  return exchange("CHECK\t" + std::to_string(text.size()) + "\t" + one_line(name) + "\n", name, text, timeout_,
                  "checking");
}

CheckerAnswer CheckerSession::compile(const std::string& name, const std::string& text, const std::string& arch,
                                      std::chrono::milliseconds codegen_timeout) {
  std::string header = "COMPILE\t" + std::to_string(text.size()) + "\t" + one_line(arch) + "\t" + one_line(name) + "\n";
  CheckerAnswer answer = exchange(header, name, text, timeout_ + codegen_timeout, "compiling");
  // A module that passes the check must come back COMPILED: a bare RESULT would be a pass without resources.
  bool passed_check = answer.parsed && answer.verified && answer.unknown_intrinsics.empty();
  if (answer.kind == CheckerAnswer::Kind::ANSWERED && !answer.compiled && passed_check)
    return crashed(checker_name() + " answered COMPILE with a bare RESULT (rebuild it: it predates in-process codegen)");
  return answer;
}

// One request and its one-line answer: RESULT (the check), COMPILED (the codegen),
// FATAL (report_fatal_error, then the process ends), or anything else: a crash.
CheckerAnswer CheckerSession::exchange(const std::string& header, const std::string& name, const std::string& text,
                                       std::chrono::milliseconds timeout, const char* doing) {
  std::string problem;
  if (!ensure_started(problem)) {
    CheckerAnswer answer;
    answer.kind = CheckerAnswer::Kind::UNAVAILABLE;
    answer.diagnostic = problem;
    return answer;
  }
  bool sent = send_all(child_.stdin_fd, header.data(), header.size()) &&
              send_all(child_.stdin_fd, text.data(), text.size());
  std::string line;
  bool answered = sent && read_line(line, timeout);
  if (!answered) {
    bool hung = sent && timed_out_;
    ExitStatus status = stop();
    std::string how = hung ? "did not answer within " + std::to_string(timeout.count()) + " ms"
                           : "died (" + describe_exit(status) + ")";
    return crashed(checker_name() + " " + how + " while " + doing + " this module");
  }
  std::string out_of_protocol;
  CheckerAnswer answer = decode_checker_line(line, name, checker_name(), out_of_protocol);
  if (out_of_protocol.empty()) return answer;
  CheckerAnswer crash = crashed(out_of_protocol);
  crash.crashed_in_codegen = answer.crashed_in_codegen;
  return crash;
}

CheckerAnswer decode_checker_line(const std::string& line, const std::string& name, const std::string& checker,
                                  std::string& problem) {
  std::vector<std::string> fields = split_tabs(line);
  CheckerAnswer answer;
  bool ours = fields.size() >= 2 && unescape_field(fields[1]) == one_line(name);
  if (fields[0] == "FATAL" && fields.size() >= 3) {
    problem = limits::cut_text(unescape_field(fields[2])) + " (" + checker + " aborted on this module)";
    answer.crashed_in_codegen = fields.size() >= 4 && fields[3] == "codegen";
  } else if (fields[0] == "COMPILED" && fields.size() == 8 && ours) {
    answer.parsed = answer.verified = answer.compiled = true;
    answer.codegen_ok = fields[2] == "1";
    answer.diagnostic = limits::cut_text(unescape_field(fields[3]));
    answer.references_amdgcn = fields[4] == "1";
    answer.metadata = unescape_field(fields[5]);
    answer.code = unescape_field(fields[6]);
    answer.occupancies = unescape_field(fields[7]);
  } else if (fields[0] != "RESULT" || fields.size() != 6 || !ours) {
    problem = checker + " answered out of protocol: '" + one_line(line.substr(0, 120)) + "'";
  } else {
    answer.parsed = fields[2] == "1";
    answer.verified = fields[3] == "1";
    answer.unknown_intrinsics = split_commas(unescape_field(fields[4]));
    answer.diagnostic = limits::cut_text(unescape_field(fields[5]));
  }
  return answer;
}

}  // namespace kemit::lane

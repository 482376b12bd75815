#include "kemit/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kemit::limits {
namespace {

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// One JSON number token: an integer must fit in 64 bits (signed or unsigned), anything must be
// finite as a double. Returns the problem or "".
std::string number_problem(std::string_view token) {
  std::string text(token.substr(0, 64));
  bool integer = token.find_first_of(".eE") == std::string_view::npos;
  if (token.size() > 64) return "the number " + text + "... is out of range";
  errno = 0;
  char* end = nullptr;
  if (integer && token[0] == '-') {
    std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE) return "the integer " + text + " is out of range (below -2^63)";
  } else if (integer) {
    std::strtoull(text.c_str(), &end, 10);
    if (errno == ERANGE) return "the integer " + text + " is out of range (above 2^64-1)";
  } else {
    double value = std::strtod(text.c_str(), &end);
    if (!std::isfinite(value)) return "the number " + text + " is out of range (not finite as a double)";
  }
  return "";
}

}  // namespace

InputLimitError::InputLimitError(std::string file, std::size_t line, std::string problem)
    : std::runtime_error(file + (line ? ":" + std::to_string(line) : std::string()) + ": " + problem),
      file_(std::move(file)),
      line_(line),
      problem_(std::move(problem)) {}

std::string read_regular_file(const std::filesystem::path& path, const std::string& display) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) throw InputLimitError(display, 0, std::string("cannot open the file: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0)
    throw InputLimitError(display, 0, std::string("cannot stat the file: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw InputLimitError(display, 0, "is " + file_kind(info.st_mode) + "; kemit reads only regular files");
  auto too_large = [&] {
    return InputLimitError(display, 0, "the file is larger than the input limit of " + mib(kMaxFileBytes));
  };
  if (static_cast<std::uint64_t>(info.st_size) > kMaxFileBytes) throw too_large();
  std::string text;
  text.resize(static_cast<std::size_t>(info.st_size));
  std::size_t have = 0;
  while (true) {
    if (have == text.size()) text.resize(have + 65536);  // the file may have grown since fstat
    ssize_t got = ::read(file.fd, &text[have], text.size() - have);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputLimitError(display, 0, std::string("cannot read the file: ") + std::strerror(errno));
    if (got == 0) break;
    have += static_cast<std::size_t>(got);
    if (have > kMaxFileBytes) throw too_large();
  }
  text.resize(have);
  return text;
}

std::optional<JsonLimitBreach> find_json_limit_breach(std::string_view text) {
  std::size_t depth = 0, line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {  // skip the string: brackets and digits inside it are text
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        else if (text[i] == '\n') ++line;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return JsonLimitBreach{line, "nesting deeper than the input limit of " + std::to_string(kMaxJsonDepth) +
                                         " levels"};
    } else if (c == ']' || c == '}') {
      if (depth) --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t start = i;
      while (i + 1 < text.size() && is_number_char(text[i + 1])) ++i;
      std::string problem = number_problem(text.substr(start, i - start + 1));
      if (!problem.empty()) return JsonLimitBreach{line, problem};
    }
  }
  return std::nullopt;
}

void check_json_limits(std::string_view text, const std::string& display) {
  if (auto breach = find_json_limit_breach(text)) throw InputLimitError(display, breach->line, breach->problem);
}

std::string cut_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t keep = max_bytes;
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // not mid-character
  return std::string(text.substr(0, keep)) + "... [" + std::to_string(text.size() - keep) + " more bytes cut]";
}

std::string unsafe_write_target(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "";  // absent: it will be created
  if (S_ISLNK(info.st_mode)) return "is a symlink; kemit writes only regular files it owns, never through a link";
  if (!S_ISREG(info.st_mode)) return "is " + file_kind(info.st_mode) + ", not a regular file";
  return "";
}

}  // namespace kemit::limits

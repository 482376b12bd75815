#include "kemit/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// The length of the well-formed UTF-8 sequence at text[i], or 0 when none starts there; `prefix`
// is then the length of the maximal ill-formed subpart (at least 1), the bytes one U+FFFD
// replaces (Unicode 15, table 3-7 and section 3.9 "U+FFFD Substitution of Maximal Subparts").
std::size_t utf8_sequence(std::string_view text, std::size_t i, std::size_t& prefix) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  prefix = 1;
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead == 0xE0) length = 3, low = 0xA0;
  else if (lead == 0xED) length = 3, high = 0x9F;
  else if (lead >= 0xE1 && lead <= 0xEF) length = 3;
  else if (lead == 0xF0) length = 4, low = 0x90;
  else if (lead == 0xF4) length = 4, high = 0x8F;
  else if (lead >= 0xF1 && lead <= 0xF3) length = 4;
  else return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (i + k >= text.size()) return 0;
    unsigned char b = byte(i + k);
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return 0;
    prefix = k + 1;
  }
  return length;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::size_t prefix = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = utf8_sequence(text, i, prefix);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string cut_text(std::string_view text, std::size_t max_bytes, std::size_t dropped_before) {
  std::string safe;
  if (is_valid_utf8(text)) {
    safe.assign(text);
  } else {
    safe.reserve(text.size() + 16);
    std::size_t prefix = 0;
    for (std::size_t i = 0; i < text.size();) {
      std::size_t length = utf8_sequence(text, i, prefix);
      if (length == 0) {
        safe += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
        i += prefix;
      } else {
        safe.append(text.substr(i, length));
        i += length;
      }
    }
  }
  if (safe.size() <= max_bytes && dropped_before == 0) return safe;
  std::size_t keep = std::min(max_bytes, safe.size());
  while (keep > 0 && keep < safe.size() && (static_cast<unsigned char>(safe[keep]) & 0xC0) == 0x80)
    --keep;  // not mid-character
  return safe.substr(0, keep) + "... [" + std::to_string(safe.size() - keep + dropped_before) + " more bytes cut]";
}

std::string unsafe_write_target(const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return "";  // absent: it will be created
  if (S_ISLNK(info.st_mode)) return "is a symlink; kemit writes only regular files it owns, never through a link";
  if (!S_ISREG(info.st_mode)) return "is " + file_kind(info.st_mode) + ", not a regular file";
  return "";
}

}  // namespace kemit::limits

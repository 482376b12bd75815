// The input limits of every kemit tool, stated once (docs/limits.md is the table of them).
// Everything a tool reads as data passes through here before it is parsed: config files,
// golden shards, merge-driver inputs, engine answer lines, checker answer lines. A breach is
// an InputLimitError that names the file (or stream), the line and the limit, so the tool exits
// 2 with a message instead of hanging, exhausting memory or overflowing its stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kemit::limits {

// JSON nesting (objects and arrays). The deepest legitimate document (a config's spec) nests
// 4 levels; 64 leaves room and keeps every recursive walk (copy, dump, compare) far from the
// end of a stack, sanitizer builds included.
inline constexpr std::size_t kMaxJsonDepth = 64;
// One input file (config, shard, merge input, module). A shard of 100,000 configs is ~100 MB.
inline constexpr std::uint64_t kMaxFileBytes = std::uint64_t(256) << 20;
// One protocol line (an engine's answer, a checker's answer). The largest real answer holds a
// few hundred KB; past this the worker is treated as crashed.
inline constexpr std::size_t kMaxLineBytes = std::size_t(16) << 20;
// Counts and byte sizes stored in shards: exact in a double (JSON readers of every language).
inline constexpr std::uint64_t kMaxCount = (std::uint64_t(1) << 53) - 1;
// Engine-provided text echoed into a message or report (a reason, a malformed line): longer
// texts are cut, and the cut says how many bytes it dropped.
inline constexpr std::size_t kMaxEchoBytes = 2000;
// A per-config timeout in seconds (the flags --timeout): finite, above 0, at most a day.
inline constexpr double kMaxTimeoutSeconds = 86400;
// Workers per engine (the flags --jobs).
inline constexpr int kMaxJobs = 256;

class InputLimitError : public std::runtime_error {
 public:
  // `line` 0 means the problem is the file as a whole (its kind or its size).
  InputLimitError(std::string file, std::size_t line, std::string problem);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string problem_;
};

// Reads a whole file that is a regular file (a symlink to one is fine) of at most
// kMaxFileBytes. A FIFO, device, socket or directory is refused without blocking on it.
// `display` names the file in the error. Throws InputLimitError (also when it cannot be opened).
std::string read_regular_file(const std::filesystem::path& path, const std::string& display);

// Checks JSON text, in one linear pass, against kMaxJsonDepth and the number range (a number
// must be finite as a double, an integer must fit in 64 bits). It does not validate the syntax
// (the parser does that next). Throws InputLimitError naming `display` and the line.
void check_json_limits(std::string_view text, const std::string& display);

// The same check without throwing: the problem ("" when none) and its line.
struct JsonLimitBreach {
  std::size_t line = 0;
  std::string problem;
};
std::optional<JsonLimitBreach> find_json_limit_breach(std::string_view text);

// A `why` of a config (one line of prose; the longest real one is about 200 bytes). Bounded so
// that `--filter`'s regex search (std::regex backtracks, one stack frame per character) stays
// far from the end of a stack.
inline constexpr std::size_t kMaxWhyBytes = 1000;
// A `--filter` pattern: a regex, not a document.
inline constexpr std::size_t kMaxFilterBytes = 1000;
// cut_text's `max_bytes` for a text that is made safe but never cut (a path, a command).
inline constexpr std::size_t kNoCut = static_cast<std::size_t>(-1);

// The one "make this text safe and cut it" of every tool: whatever bytes come in (a worker's
// stderr, a malformed answer line, a path), the result is valid UTF-8 that every writer (the
// terminal, the JSON reports, JUnit, the last-run report) takes as it is. Each ill-formed
// sequence is replaced by U+FFFD (one per maximal ill-formed subpart, as the Unicode standard
// recommends); then, when longer than `max_bytes`, the text is cut on a character boundary and
// followed by "... [N more bytes cut]". `dropped_before` counts bytes the caller already cut
// from the end of `text` (a stream kept only in part); they are added to N.
std::string cut_text(std::string_view text, std::size_t max_bytes = kMaxEchoBytes, std::size_t dropped_before = 0);

// True when `text` is well-formed UTF-8.
bool is_valid_utf8(std::string_view text);

// For a file a tool is about to write (a shard, a lock): refuses a symlink and anything that
// exists but is not a regular file. Returns the problem, "" when `path` may be written.
std::string unsafe_write_target(const std::filesystem::path& path);

}  // namespace kemit::limits

// Errors of the golden store. Every message names the file, the line when there is one,
// what was found, and what to do about it (lit's what / where / what-to-do rule).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace kemit::golden {

class GoldenError : public std::runtime_error {
 public:
  // `file` may be empty (an error about fresh results); `line` 0 means "no line".
  GoldenError(std::string file, std::size_t line, std::string what_happened, std::string what_to_do);

  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }
  const std::string& problem() const { return problem_; }
  const std::string& remedy() const { return remedy_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string problem_;
  std::string remedy_;
};

// The command that (re)writes a family's shard; error remedies quote it.
std::string record_command(const std::string& family);

}  // namespace kemit::golden

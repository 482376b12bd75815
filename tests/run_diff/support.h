// Helpers of the run_diff tests: run_diff in-process, temporary folders, fake engines.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::run_diff::testing_support {

struct Result {
  int exit_code = -1;
  std::string out, err;
  std::string last_line() const;
  std::string all() const { return out + err; }
};

// run_diff with exactly these arguments (after argv[0]).
Result run_diff(const std::vector<std::string>& args);

// A temporary folder removed at the end of the test.
struct TempDir {
  TempDir();
  ~TempDir();
  std::filesystem::path path;
};

// Sets (or unsets, with nullptr) the CI variable for the lifetime of the object.
struct CiVariable {
  explicit CiVariable(const char* value);
  ~CiVariable();
  bool had = false;
  std::string old;
};

// A run of the fake engines (tests/driver/fixtures/fake_engine.py) over `configs`, with shards in
// `golden`; `py_flags` / `cpp_flags` make a fake engine misbehave (e.g. "--alter 2").
std::vector<std::string> fake_args(const std::filesystem::path& configs, const std::filesystem::path& golden,
                                   const std::string& py_flags = "", const std::string& cpp_flags = "");
// Copies tests/driver/fixtures/configs/<name> into `into` and returns `into`.
std::filesystem::path copy_fixture_configs(const std::string& name, const std::filesystem::path& into);

std::string read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const std::string& text);
// Replaces the first `from` with `to`; fails the test when `from` is absent.
void replace_in_file(const std::filesystem::path& path, const std::string& from, const std::string& to);
// Runs a shell command; returns its exit status and puts stdout+stderr in `output`.
int shell(const std::string& command, std::string* output = nullptr);

}  // namespace kemit::run_diff::testing_support

#include "support.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "kemit/run_diff/run_diff.h"

namespace kemit::run_diff::testing_support {

namespace fs = std::filesystem;

std::string Result::last_line() const {
  std::string text = out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

Result run_diff(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"run_diff"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  Result run;
  run.exit_code = run_diff_main(static_cast<int>(argv.size()), argv.data(), out, err, false);
  run.out = out.str();
  run.err = err.str();
  return run;
}

TempDir::TempDir() {
  char pattern[] = "/tmp/kemit_run_diff_test_XXXXXX";
  if (!mkdtemp(pattern)) throw std::runtime_error("mkdtemp failed");
  path = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

CiVariable::CiVariable(const char* value) {
  if (const char* current = getenv("CI")) {
    had = true;
    old = current;
  }
  if (value)
    setenv("CI", value, 1);
  else
    unsetenv("CI");
}

CiVariable::~CiVariable() {
  if (had)
    setenv("CI", old.c_str(), 1);
  else
    unsetenv("CI");
}

std::vector<std::string> fake_args(const fs::path& configs, const fs::path& golden, const std::string& py_flags,
                                   const std::string& cpp_flags) {
  std::string fake = std::string(KEMIT_TEST_PYTHON) + " " + KEMIT_DRIVER_FIXTURES + "/fake_engine.py";
  return {"--configs", configs.string(), "--golden-dir", golden.string(), "--no-resources", "--jobs", "1",
          "--py-cmd",  fake + " --engine py " + py_flags, "--cpp-cmd", fake + " --engine cpp " + cpp_flags};
}

fs::path copy_fixture_configs(const std::string& name, const fs::path& into) {
  fs::create_directories(into);
  fs::copy(fs::path(KEMIT_DRIVER_FIXTURES) / "configs" / name, into, fs::copy_options::recursive);
  return into;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void replace_in_file(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = read_text(path);
  auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  text.replace(at, from.size(), to);
  write_text(path, text);
}

int shell(const std::string& command, std::string* output) {
  std::string full = "( " + command + " ) 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buffer;
  std::string text;
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) text.append(buffer.data(), n);
  int status = pclose(pipe);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kemit::run_diff::testing_support

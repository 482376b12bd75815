#include "test_support.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <sys/wait.h>

#include "kemit/golden/digest.h"

namespace kemit::golden::test {

std::string hash(const std::string& label) { return sha256_hex(label); }

Entry emitted_entry(std::uint64_t id, const std::string& version, const std::string& arch,
                    const std::vector<std::string>& flavors) {
  Entry e;
  e.id = id;
  e.spec_digest = hash("spec " + std::to_string(id));
  e.kernel_name = "kernel_" + std::to_string(id);
  e.arch = arch;
  e.canonical = Section::emitted(hash(version + " canonical " + std::to_string(id)), 1000 + id);
  for (const auto& f : flavors)
    e.flavors[f] = Section::emitted(hash(version + " " + f + " " + std::to_string(id)), 2000 + id);
  return e;
}

Entry refused_entry(std::uint64_t id, const std::string& reason, const std::string& arch) {
  Entry e;
  e.id = id;
  e.spec_digest = hash("spec " + std::to_string(id));
  e.arch = arch;
  e.rejected = reason;
  return e;
}

Shard make_shard(const std::string& family, std::vector<Entry> entries, const std::vector<std::string>& flavors) {
  Shard s;
  s.family = family;
  s.flavors = flavors;
  s.entries = std::move(entries);
  s.counters = compute_counters(s.entries, s.flavors);
  return s;
}

FreshResults make_run(const std::string& family, std::vector<Entry> entries, bool complete,
                      const std::vector<std::string>& flavors) {
  FreshResults r;
  r.family = family;
  r.flavors = flavors;
  r.complete = complete;
  r.entries = std::move(entries);
  return r;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() / ("kemit_golden_test_" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CommandResult run_command(const std::string& command) {
  std::string full = command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer;
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    had_value_ = true;
    old_value_ = old;
  }
  if (value)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (had_value_)
    ::setenv(name_.c_str(), old_value_.c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

}  // namespace kemit::golden::test

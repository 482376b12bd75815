// Helpers shared by the golden store tests: building entries, temporary folders, running
// commands.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kemit/golden/compare.h"
#include "kemit/golden/shard.h"

namespace kemit::golden::test {

inline const std::vector<std::string> kFlavors = {"llvm16", "llvm19", "llvm22"};

// sha256 of a label, so a test can say "the text changed" with hash("v2").
std::string hash(const std::string& label);

// An emitting config whose texts are derived from `version` (same version, same hashes).
Entry emitted_entry(std::uint64_t id, const std::string& version = "v1", const std::string& arch = "gfx942",
                    const std::vector<std::string>& flavors = kFlavors);
// A config refused by validation.
Entry refused_entry(std::uint64_t id, const std::string& reason, const std::string& arch = "gfx942");

Shard make_shard(const std::string& family, std::vector<Entry> entries,
                 const std::vector<std::string>& flavors = kFlavors);
FreshResults make_run(const std::string& family, std::vector<Entry> entries, bool complete = true,
                      const std::vector<std::string>& flavors = kFlavors);

// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_text(const std::filesystem::path& path, const std::string& text);
std::string read_text(const std::filesystem::path& path);

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr together
};
CommandResult run_command(const std::string& command);

// Sets (or unsets) an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();

 private:
  std::string name_;
  bool had_value_ = false;
  std::string old_value_;
};

}  // namespace kemit::golden::test

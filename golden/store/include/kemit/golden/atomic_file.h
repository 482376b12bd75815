// Crash-safe writing: a shard is either the old file or the new one, never a torn mix, and two
// writers of one shard folder take turns.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

namespace kemit::golden {

// A complete, synced temporary file waiting to be renamed over `path`.
struct StagedFile {
  std::filesystem::path path;
  std::filesystem::path temp;
};

// Writes `bytes` to a temporary file next to `path` and fsyncs it; nothing visible changes.
// Refuses a `path` that is a symlink or not a regular file. Throws GoldenError (no temp is left).
StagedFile stage_file(const std::filesystem::path& path, std::string_view bytes);
// Renames the staged file over its path and fsyncs the folder. Throws GoldenError.
void commit_staged(const StagedFile& staged);
// Removes a staged file that will not be committed.
void discard_staged(const StagedFile& staged);

// Writes `bytes` to a temporary file next to `path`, fsyncs it, renames it over `path` and
// fsyncs the folder. Throws GoldenError on any failure (the old file stays).
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

// An exclusive flock on <dir>/.golden.lock, held for the object's lifetime. Blocks while another
// process holds it. Also removes temporary files a crashed writer left behind.
class StoreLock {
 public:
  explicit StoreLock(const std::filesystem::path& shard_dir);
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  int fd_ = -1;
};

namespace test_hooks {
// Called after the temporary file is complete and synced, just before the rename. Tests use
// it to kill the process at the worst moment; empty by default.
void set_before_rename_hook(std::function<void(const std::filesystem::path& temp)> hook);
// Called before each staged file is written; a non-zero errno it returns fails that write as if
// the disk had said so (ENOSPC: a full disk). Tests of all-or-nothing blessing use it.
void set_stage_failure_hook(std::function<int(const std::filesystem::path& path)> hook);
}  // namespace test_hooks

}  // namespace kemit::golden

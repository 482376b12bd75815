#include "kemit/golden/atomic_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "kemit/golden/error.h"
#include "kemit/input_limits.h"

namespace kemit::golden {

namespace {

std::function<void(const std::filesystem::path&)>& before_rename_hook() {
  static std::function<void(const std::filesystem::path&)> hook;
  return hook;
}

std::function<int(const std::filesystem::path&)>& stage_failure_hook() {
  static std::function<int(const std::filesystem::path&)> hook;
  return hook;
}

[[noreturn]] void io_failure(const std::filesystem::path& path, const std::string& what) {
  throw GoldenError(path.string(), 0, fmt::format("{}: {}", what, std::strerror(errno)),
                    "check the folder's permissions and free space; the previous file is unchanged");
}

// Temporary names start with a dot and do not end in .json, so no reader mistakes them for shards.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
}

void write_all(int fd, std::string_view bytes, const std::filesystem::path& temp) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) io_failure(temp, "cannot write the temporary file");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void sync_folder(const std::filesystem::path& folder) {
  int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) io_failure(folder, "cannot open the folder to sync it");
  ::fsync(fd);  // makes the rename durable; a failure here cannot undo it, so it is not fatal
  ::close(fd);
}

}  // namespace

StagedFile stage_file(const std::filesystem::path& path, std::string_view bytes) {
  std::string unsafe = limits::unsafe_write_target(path);
  if (!unsafe.empty())
    throw GoldenError(path.string(), 0, unsafe, "replace it with the regular file from git (`git checkout -- <file>`)");
  std::filesystem::path temp = temp_path_for(path);
  // O_EXCL | O_NOFOLLOW: never write through a link or into a file someone else placed there.
  ::unlink(temp.c_str());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) io_failure(temp, "cannot create the temporary file");
  try {
    if (int injected = stage_failure_hook() ? stage_failure_hook()(path) : 0) {
      errno = injected;
      io_failure(temp, "cannot write the temporary file");
    }
    write_all(fd, bytes, temp);
    if (::fsync(fd) != 0) io_failure(temp, "cannot sync the temporary file");
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  ::close(fd);
  return StagedFile{path, temp};
}

void commit_staged(const StagedFile& staged) {
  if (before_rename_hook()) before_rename_hook()(staged.temp);
  if (::rename(staged.temp.c_str(), staged.path.c_str()) != 0) {
    int saved = errno;
    ::unlink(staged.temp.c_str());
    errno = saved;
    io_failure(staged.path, "cannot rename the temporary file over the shard");
  }
  sync_folder(staged.path.parent_path());
}

void discard_staged(const StagedFile& staged) { ::unlink(staged.temp.c_str()); }

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  commit_staged(stage_file(path, bytes));
}

StoreLock::StoreLock(const std::filesystem::path& shard_dir) {
  std::error_code ec;
  std::filesystem::create_directories(shard_dir, ec);
  std::filesystem::path lock = shard_dir / ".golden.lock";
  std::string unsafe = limits::unsafe_write_target(lock);
  if (!unsafe.empty()) throw GoldenError(lock.string(), 0, unsafe, "remove it; the store creates its own lock file");
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) io_failure(lock, "cannot open the lock file");
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) io_failure(lock, "cannot lock the shard folder");
  // Holding the lock, no writer is alive: any temporary file left here belongs to a dead one.
  for (const auto& item : std::filesystem::directory_iterator(shard_dir, ec)) {
    std::string name = item.path().filename().string();
    if (name.size() > 1 && name[0] == '.' && name.find(".json.tmp.") != std::string::npos)
      std::filesystem::remove(item.path(), ec);
  }
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

namespace test_hooks {
void set_before_rename_hook(std::function<void(const std::filesystem::path&)> hook) {
  before_rename_hook() = std::move(hook);
}
void set_stage_failure_hook(std::function<int(const std::filesystem::path& path)> hook) {
  stage_failure_hook() = std::move(hook);
}
}  // namespace test_hooks

}  // namespace kemit::golden

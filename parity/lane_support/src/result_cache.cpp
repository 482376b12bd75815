#include "kemit/lane_support/result_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include "kemit/driver/sha256.h"
#include "kemit/input_limits.h"

namespace kemit::lane_support {
namespace fs = std::filesystem;

namespace {

// Entries this process wrote (every cache folder, every instance). A prune finds nothing new to
// delete unless some entry was written since the last prune of the same folder by this process:
// a warm run, which writes none, walks no folder (its hits only refresh mtimes), and a process
// whose two phases each prune the one folder walks it once. Another process that writes prunes
// after its own writes; a killed run's temporaries go at the next prune that walks.
std::atomic<std::uint64_t> entries_written{0};
std::mutex pruned_mutex;
std::map<std::string, std::uint64_t> pruned_after;  // folder -> entries_written when it was last walked


// Entry file: three header lines, then the value to the end of the file.
constexpr const char* kMagic = "kemit-result-cache 1";
constexpr const char* kKeyPrefix = "kemit-result-cache-key 1\n";
constexpr const char* kInputsPrefix = "kemit-result-cache-inputs 1\n";
// The marker: the Cache Directory Tagging signature (backup tools skip the folder), then the
// line that says whose cache it is. Only a marker with that line marks a kemit cache.
constexpr const char* kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr const char* kTagOwner = "# kemit-result-cache 1";
// A temporary older than this is left by a killed run (a write takes milliseconds).
constexpr auto kStaleTemporary = std::chrono::hours(1);

std::string entry_text(const std::string& key, const std::string& value) {
  return std::string(kMagic) + "\nkey " + key + "\nsha256 " + kemit::driver::sha256_hex(value) + "\n" + value;
}

// The value of an entry, or "" with `why` set when the entry cannot be trusted.
std::optional<std::string> verified_value(const std::string& text, const std::string& key, std::string& why) {
  std::istringstream in(text);
  std::string magic, key_line, sum_line;
  if (!std::getline(in, magic) || magic != kMagic || !std::getline(in, key_line) || !std::getline(in, sum_line)) {
    why = "not a kemit-result-cache 1 entry";
    return std::nullopt;
  }
  if (key_line != "key " + key) {
    why = "its key line names another key";
    return std::nullopt;
  }
  size_t header = magic.size() + key_line.size() + sum_line.size() + 3;
  if (header > text.size()) {
    why = "it is truncated";
    return std::nullopt;
  }
  std::string value = text.substr(header);
  if (sum_line != "sha256 " + kemit::driver::sha256_hex(value)) {
    why = "its value does not match its sha256";
    return std::nullopt;
  }
  return value;
}

bool is_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The names the cache gives its files (the only files it ever deletes): a shard folder
// "<2 hex>"; inside it an entry "<64 hex>" starting with the folder's name, or an entry's
// temporary "<64 hex>.tmp.<pid>.<thread>.<n>"; at the top, the marker and its temporary.
bool is_shard_folder_name(const std::string& name) { return name.size() == 2 && is_hex(name); }

bool is_entry_name(const std::string& folder, const std::string& name) {
  return name.size() == 64 && is_hex(name) && name.compare(0, 2, folder) == 0;
}

// ".tmp.<pid>.<thread>.<n>" (this writer) or ".tmp.<pid>.<thread>" (result_cache.py's).
bool is_temporary_suffix(std::string_view suffix) {
  if (suffix.substr(0, 5) != ".tmp.") return false;
  suffix.remove_prefix(5);
  int parts = 0;
  while (true) {
    size_t dot = suffix.find('.');
    if (!is_digits(suffix.substr(0, dot))) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    suffix.remove_prefix(dot + 1);
  }
  return parts == 2 || parts == 3;
}

bool is_entry_temporary_name(const std::string& folder, const std::string& name) {
  return name.size() > 64 && is_entry_name(folder, name.substr(0, 64)) && is_temporary_suffix(name.substr(64));
}

bool is_marker_temporary_name(const std::string& name) {
  const std::string marker = ResultCache::kMarkerName;
  return name.size() > marker.size() && name.compare(0, marker.size(), marker) == 0 &&
         is_temporary_suffix(std::string_view(name).substr(marker.size()));
}

// A name no other writer (process or thread) uses at the same time.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." + std::to_string(counter++);
}

bool is_kemit_marker(const fs::path& path) {
  try {
    std::string text = limits::read_regular_file(path, path.string());
    return text.rfind(kTagSignature, 0) == 0 && text.find(std::string("\n") + kTagOwner + "\n") != std::string::npos;
  } catch (const limits::InputLimitError&) {
    return false;
  }
}

// Writes the marker atomically (a concurrent run sees none or all of it).
void write_marker(const fs::path& dir) {
  const fs::path marker = dir / ResultCache::kMarkerName;
  const std::string temporary = temporary_name(marker.string());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << kTagSignature << kTagOwner
        << "\n# This folder is a kemit result cache (docs/run_diff.md, \"Result cache\"): the cache prunes and\n"
           "# deletes the entries it wrote here (<2 hex>/<64 hex>) and nothing else.\n";
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw CacheError("cache folder " + dir.string() + ": cannot write its marker " + marker.string() +
                       " (check the folder's permissions, or pass --no-cache)");
    }
  }
  std::error_code error;
  fs::rename(temporary, marker, error);
  if (error) {
    fs::remove(temporary, error);
    throw CacheError("cache folder " + dir.string() + ": cannot write its marker " + marker.string());
  }
}

// What in an unmarked folder the cache did not name ("" when everything is its own).
std::string foreign_file(const fs::path& dir, size_t& count) {
  std::string first;
  auto foreign = [&](const fs::path& path) {
    if (first.empty()) first = path.string();
    ++count;
  };
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name == ResultCache::kMarkerName || is_marker_temporary_name(name)) continue;
    if (!is_shard_folder_name(name) || !it->is_directory(error) || it->is_symlink(error)) {
      foreign(it->path());
      continue;
    }
    std::error_code inner;
    for (fs::directory_iterator file(it->path(), inner), stop; !inner && file != stop; file.increment(inner)) {
      const std::string file_name = file->path().filename().string();
      if (!is_entry_name(name, file_name) && !is_entry_temporary_name(name, file_name)) foreign(file->path());
    }
  }
  return first;
}

void open_folder(const std::string& dir) {
  std::error_code error;
  const fs::path path(dir);
  if (!fs::exists(path, error)) {
    fs::create_directories(path, error);
    if (error)
      throw CacheError("cannot create the cache folder " + dir + ": " + error.message() +
                       " (pass --cache DIR with a folder you may write, or --no-cache)");
    write_marker(path);
    return;
  }
  if (!fs::is_directory(path, error))
    throw CacheError("the cache folder " + dir + " is not a folder (pass --cache DIR with a folder, or --no-cache)");
  if (is_kemit_marker(path / ResultCache::kMarkerName)) return;
  size_t count = 0;
  std::string first = foreign_file(path, count);
  if (!first.empty())
    throw CacheError("the cache folder " + dir + " is not a kemit result cache: it holds " + first +
                     (count > 1 ? " and " + std::to_string(count - 1) + " other file(s)" : std::string()) +
                     " that the cache did not write, and the cache prunes and deletes files. Use an empty or new "
                     "folder (--cache DIR, $KEMIT_CACHE), or --no-cache; a folder that is a kemit cache carries "
                     "the marker " + (path / ResultCache::kMarkerName).string());
  write_marker(path);  // empty, or a cache written before the marker: its own from now on
}

struct EntryFile {
  fs::path path;
  std::uintmax_t bytes;
  fs::file_time_type used;
};

// A regular file (no link, FIFO or device) as lstat sees it: its size and mtime.
std::optional<EntryFile> own_regular_file(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  std::error_code error;
  fs::file_time_type used = fs::last_write_time(path, error);
  if (error) return std::nullopt;
  return EntryFile{path, static_cast<std::uintmax_t>(info.st_size), used};
}

}  // namespace

CacheInputs& CacheInputs::add(std::string_view name, std::string_view value) {
  text_ += std::to_string(name.size()) + ":";
  text_.append(name.data(), name.size());
  text_ += "=" + std::to_string(value.size()) + ":";
  text_.append(value.data(), value.size());
  text_ += "\n";
  return *this;
}

CacheInputs& CacheInputs::add(std::string_view name, std::int64_t value) { return add(name, std::to_string(value)); }

CacheInputs& CacheInputs::add(std::string_view name, bool value) { return add(name, value ? "true" : "false"); }

CacheInputs& CacheInputs::add(std::string_view name, const std::vector<std::string>& values) {
  std::string list = std::to_string(values.size()) + "[";
  for (const auto& value : values) list += std::to_string(value.size()) + ":" + value + ",";
  return add(name, list + "]");
}

std::string CacheInputs::key() const { return kemit::driver::sha256_hex(kInputsPrefix + text_); }

ResultCache::ResultCache(std::string dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  if (enabled()) open_folder(dir_);
}

std::uint64_t ResultCache::default_max_bytes() {
  const char* text = std::getenv("KEMIT_CACHE_MAX_MB");
  if (!text || !*text) return std::uint64_t(1024) << 20;
  const std::string value(text);
  auto refuse = [&] {
    return CacheError("KEMIT_CACHE_MAX_MB='" + limits::cut_text(value, 80) +
                      "' is not a whole number of MiB of at least 1 (the result cache's size cap; unset it for "
                      "the default of 1024)");
  };
  if (!is_digits(value)) throw refuse();
  errno = 0;
  unsigned long long megabytes = std::strtoull(value.c_str(), nullptr, 10);
  if (errno == ERANGE || megabytes > (std::numeric_limits<std::uint64_t>::max() >> 20))
    return std::numeric_limits<std::uint64_t>::max();  // more than any disk: no cap, never a wrap to 0
  if (megabytes == 0) throw refuse();
  return static_cast<std::uint64_t>(megabytes) << 20;
}

std::string ResultCache::key(const std::vector<std::string_view>& parts) {
  std::string material = kKeyPrefix;
  for (std::string_view part : parts) {
    material += std::to_string(part.size()) + ":";
    material.append(part.data(), part.size());
    material += "\n";
  }
  return kemit::driver::sha256_hex(material);
}

std::string ResultCache::path_of(const std::string& key) const { return dir_ + "/" + key.substr(0, 2) + "/" + key; }

void ResultCache::record_corrupt(const std::string& path, const std::string& why) {
  std::error_code ignored;
  fs::remove(path, ignored);  // its own name: never trusted again; the recomputed value replaces it
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.corrupt++;
  stats_.problems.push_back("corrupt cache entry " + path + " (" + why + "): deleted and recomputed");
}

std::optional<std::string> ResultCache::get(const std::string& key) {
  if (!enabled()) return std::nullopt;
  const std::string path = path_of(key);
  std::optional<std::string> value;
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) {
    std::string why;
    if (S_ISLNK(info.st_mode)) {
      why = "it is a symlink; the cache reads only the files it wrote";
    } else {
      try {
        value = verified_value(limits::read_regular_file(path, path), key, why);
      } catch (const limits::InputLimitError& error) {
        why = error.problem();
      }
    }
    if (!value) record_corrupt(path, why);
  }
  if (value) utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used, for prune()
  std::lock_guard<std::mutex> lock(mutex_);
  (value ? stats_.hits : stats_.misses)++;
  return value;
}

void ResultCache::reject(const std::string& key, const std::string& why) {
  record_corrupt(path_of(key), why);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.hits--;
  stats_.misses++;
}

void ResultCache::put(const std::string& key, const std::string& value) {
  if (!enabled()) return;
  const std::string path = path_of(key);
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  const std::string temporary = temporary_name(path);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << entry_text(key, value);
    out.close();
    if (!out) error = std::make_error_code(std::errc::io_error);
  }
  if (!error) fs::rename(temporary, path, error);  // atomic: readers see the old entry or the new one
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error) {
    stats_.stored++;
    entries_written++;
    return;
  }
  fs::remove(temporary, error);
  stats_.problems.push_back("cannot write cache entry " + path + ": not cached (check the cache directory)");
}

void ResultCache::prune() {
  if (!enabled()) return;
  {
    std::lock_guard<std::mutex> lock(pruned_mutex);
    const std::uint64_t written = entries_written.load();
    auto last = pruned_after.find(dir_);
    if (last == pruned_after.end() ? written == 0 : last->second == written) return;
    pruned_after[dir_] = written;
  }
  std::vector<EntryFile> entries;
  std::uintmax_t total = 0;
  const auto stale = fs::file_time_type::clock::now() - kStaleTemporary;
  std::error_code error;
  // Only the cache's own names, two levels deep: nothing else in the folder is ever counted or removed.
  for (fs::directory_iterator top(dir_, error), end; !error && top != end; top.increment(error)) {
    const std::string folder = top->path().filename().string();
    if (!is_shard_folder_name(folder) || top->is_symlink(error) || !top->is_directory(error)) continue;
    std::error_code inner;
    for (fs::directory_iterator it(top->path(), inner), stop; !inner && it != stop; it.increment(inner)) {
      const std::string name = it->path().filename().string();
      bool entry = is_entry_name(folder, name);
      if (!entry && !is_entry_temporary_name(folder, name)) continue;
      std::optional<EntryFile> file = own_regular_file(it->path());
      if (!file) continue;  // deleted meanwhile by a concurrent prune, or not a regular file
      if (!entry) {
        if (file->used < stale) fs::remove(file->path, inner);  // a killed run's leftover
        continue;
      }
      total += file->bytes;
      entries.push_back(std::move(*file));
    }
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const EntryFile& a, const EntryFile& b) { return a.used < b.used; });
  const std::uintmax_t target = max_bytes_ / 10 * 9;  // some room, so that not every run prunes
  for (const auto& entry : entries) {
    if (total <= target) break;
    if (fs::remove(entry.path, error)) total -= entry.bytes;
  }
}

CacheStats ResultCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string ResultCache::summary() const {
  if (!enabled()) return "cache: off";
  CacheStats s = stats();
  std::string text = "cache: " + std::to_string(s.hits) + " hits, " + std::to_string(s.misses) + " misses";
  if (s.corrupt) text += ", " + std::to_string(s.corrupt) + " corrupt entr" + (s.corrupt == 1 ? "y" : "ies") + " recomputed";
  return text;
}

std::string resolve_cache_dir(const std::string& flag_dir, bool no_cache, const std::string& build_dir) {
  if (no_cache) return "";
  if (!flag_dir.empty()) return flag_dir;
  const char* env = std::getenv("KEMIT_CACHE");
  if (env && *env) return env;
  return build_dir + "/result-cache";
}

void check_cache_settings(const std::string& dir) {
  if (!dir.empty()) ResultCache cache(dir);
}

std::string file_sha256(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw CacheError("cannot read " + path + " to name it in a cache key: " + std::strerror(errno));
  using Identity = std::tuple<std::string, dev_t, ino_t, off_t, std::int64_t, long>;
  const Identity identity{path, info.st_dev, info.st_ino, info.st_size, info.st_mtim.tv_sec, info.st_mtim.tv_nsec};
  static std::mutex mutex;
  static std::map<Identity, std::string> digests;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = digests.find(identity);
    if (found != digests.end()) return found->second;
  }
  std::string digest;
  try {
    digest = kemit::driver::sha256_hex(limits::read_regular_file(path, path));
  } catch (const limits::InputLimitError& error) {
    throw CacheError(std::string("cannot read a binary to name it in a cache key: ") + error.what());
  }
  std::lock_guard<std::mutex> lock(mutex);
  digests[identity] = digest;
  return digest;
}

}  // namespace kemit::lane_support

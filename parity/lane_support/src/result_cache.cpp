#include "kemit/lane_support/result_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "kemit/driver/sha256.h"

namespace kemit::lane_support {
namespace fs = std::filesystem;

namespace {

// Entry file: three header lines, then the value to the end of the file.
constexpr const char* kMagic = "kemit-result-cache 1";
constexpr const char* kKeyPrefix = "kemit-result-cache-key 1\n";

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

bool read_file(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// A name no other writer (process or thread) uses at the same time.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." + std::to_string(counter++);
}

struct EntryFile {
  fs::path path;
  std::uintmax_t bytes;
  fs::file_time_type used;
};

}  // namespace

ResultCache::ResultCache(std::string dir, std::uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

std::uint64_t ResultCache::default_max_bytes() {
  const char* text = std::getenv("KEMIT_CACHE_MAX_MB");
  long long megabytes = text ? std::atoll(text) : 0;
  return static_cast<std::uint64_t>(megabytes > 0 ? megabytes : 1024) << 20;
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
  fs::remove(path, ignored);  // never trusted again; the recomputed value replaces it
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.corrupt++;
  stats_.problems.push_back("corrupt cache entry " + path + " (" + why + "): deleted and recomputed");
}

std::optional<std::string> ResultCache::get(const std::string& key) {
  if (!enabled()) return std::nullopt;
  const std::string path = path_of(key);
  std::string text, why;
  std::optional<std::string> value;
  if (read_file(path, text)) {
    value = verified_value(text, key, why);
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
    return;
  }
  fs::remove(temporary, error);
  stats_.problems.push_back("cannot write cache entry " + path + ": not cached (check the cache directory)");
}

void ResultCache::prune() {
  if (!enabled()) return;
  std::vector<EntryFile> entries;
  std::uintmax_t total = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    EntryFile entry{it->path(), it->file_size(error), it->last_write_time(error)};
    if (error) continue;  // deleted meanwhile by a concurrent prune
    total += entry.bytes;
    entries.push_back(std::move(entry));
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

}  // namespace kemit::lane_support

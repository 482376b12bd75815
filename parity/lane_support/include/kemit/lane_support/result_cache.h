// One content-addressed result cache for every lane (docs/run_diff.md "Result cache").
//
// An entry is the answer a lane computed for one input; its key is the sha256 of
// everything that determines that answer (the lane builds the list of parts and
// bumps its own lane-version part when its logic changes). Entries live in
// <dir>/<key[0:2]>/<key>; each holds the key and the sha256 of its value, so a
// corrupted or planted entry is detected, deleted, reported and recomputed.
// Writes go to a temporary file renamed into place (atomic; concurrent runs may
// share a directory); reads refresh the entry's mtime, and prune() deletes the
// least recently used entries past the size cap.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kemit::lane_support {

struct CacheStats {
  size_t hits = 0;
  size_t misses = 0;
  size_t stored = 0;
  size_t corrupt = 0;                  // entries found broken, deleted and recomputed
  std::vector<std::string> problems;   // one line per corrupt entry or failed write
};

class ResultCache {
 public:
  // An empty `dir` is a disabled cache: every get misses, put does nothing.
  explicit ResultCache(std::string dir, std::uint64_t max_bytes = default_max_bytes());

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // sha256 over the parts, each length-prefixed so that no two lists collide.
  static std::string key(const std::vector<std::string_view>& parts);

  // The value stored under `key`, verified; nullopt on a miss or a broken entry.
  std::optional<std::string> get(const std::string& key);
  // The caller could not use a value get() returned (it did not decode): counted
  // and reported as corrupt, the entry deleted, and the hit taken back.
  void reject(const std::string& key, const std::string& why);
  void put(const std::string& key, const std::string& value);
  // Deletes least recently used entries until the cache is under its cap.
  void prune();

  CacheStats stats() const;
  // "cache: 12 hits, 3 misses" (+ ", 1 corrupt entry recomputed"), or "cache: off".
  std::string summary() const;

  static std::uint64_t default_max_bytes();  // KEMIT_CACHE_MAX_MB, else 1024 MiB

 private:
  std::string path_of(const std::string& key) const;
  void record_corrupt(const std::string& path, const std::string& why);

  std::string dir_;
  std::uint64_t max_bytes_;
  mutable std::mutex mutex_;
  CacheStats stats_;
};

// Where a command's cache lives: --no-cache -> "" (off); --cache DIR; else $KEMIT_CACHE;
// else <build_dir>/result-cache.
std::string resolve_cache_dir(const std::string& flag_dir, bool no_cache, const std::string& build_dir);

}  // namespace kemit::lane_support

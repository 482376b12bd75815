// One content-addressed result cache for every lane (docs/run_diff.md "Result cache").
//
// An entry is the answer a lane computed for one input; its key is the sha256 of
// everything that determines that answer. A lane states those inputs once, as a
// CacheInputs list of named fields (CacheInputs::key is the one key derivation),
// from the same structure its computation takes. Entries live in
// <dir>/<key[0:2]>/<key>; each holds the key and the sha256 of its value, so a
// corrupted or planted entry is detected, deleted, reported and recomputed; the lane
// validates a verified value against its own schema before it believes it (reject()).
// Writes go to a temporary file renamed into place (atomic; concurrent runs may
// share a directory); reads refresh the entry's mtime, and prune() deletes the
// least recently used entries past the size cap.
//
// The cache owns only what it named: its entries and its temporaries in that layout, and
// its marker (CACHEDIR.TAG). It never reads, prunes or deletes any other file, and it
// refuses a folder holding other files unless the folder carries its marker.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kemit::lane_support {

// A cache folder the cache may not use, or a bad KEMIT_CACHE_MAX_MB: a usage error (exit 2).
struct CacheError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The inputs of one answer, each named, in the order the lane adds them. The names are part
// of the key, so two lists that differ in a field's name or position never collide.
class CacheInputs {
 public:
  CacheInputs& add(std::string_view name, std::string_view value);
  CacheInputs& add(std::string_view name, const char* value) { return add(name, std::string_view(value)); }
  CacheInputs& add(std::string_view name, const std::string& value) { return add(name, std::string_view(value)); }
  CacheInputs& add(std::string_view name, std::int64_t value);
  CacheInputs& add(std::string_view name, int value) { return add(name, static_cast<std::int64_t>(value)); }
  CacheInputs& add(std::string_view name, bool value);
  CacheInputs& add(std::string_view name, const std::vector<std::string>& values);

  // The length-prefixed serialization the key hashes (readable: a test can show which field moved).
  const std::string& text() const { return text_; }
  // sha256 of "kemit-result-cache-inputs 1\n" + text(): the entry's name.
  std::string key() const;

 private:
  std::string text_;
};

struct CacheStats {
  size_t hits = 0;
  size_t misses = 0;
  size_t stored = 0;
  size_t corrupt = 0;                  // entries found broken, deleted and recomputed
  std::vector<std::string> problems;   // one line per corrupt entry or failed write
};

class ResultCache {
 public:
  // An empty `dir` is a disabled cache: every get misses, put does nothing. Otherwise the
  // folder is created (with its marker) when absent, and checked when present: it must be
  // marked, empty, or hold nothing but entries and temporaries in the cache's layout (a cache
  // written before the marker existed; it is marked then). Throws CacheError otherwise.
  explicit ResultCache(std::string dir, std::uint64_t max_bytes = default_max_bytes());

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // sha256 over the parts, each length-prefixed so that no two lists collide (a lane names its
  // inputs with CacheInputs instead).
  static std::string key(const std::vector<std::string_view>& parts);

  // The value stored under `key`, verified; nullopt on a miss or a broken entry. The entry is
  // read as every loader reads (a regular file, not a link, at most the input limit of one
  // file; a FIFO is refused without waiting on it).
  std::optional<std::string> get(const std::string& key);
  // The caller could not use a value get() returned (it breaks the lane's schema or the input
  // limits): counted and reported as corrupt, the entry deleted, and the hit taken back.
  void reject(const std::string& key, const std::string& why);
  void put(const std::string& key, const std::string& value);
  // Deletes least recently used entries until the cache is under its cap, and temporaries
  // left by a killed run; never a file the cache did not name. Walks the folder only when this
  // process wrote an entry (through any instance) since it last walked that folder: a run that
  // wrote nothing left the cache no larger.
  void prune();

  CacheStats stats() const;
  // "cache: 12 hits, 3 misses" (+ ", 1 corrupt entry recomputed"), or "cache: off".
  std::string summary() const;

  // KEMIT_CACHE_MAX_MB (a whole number of MiB, at least 1; a number too large for bytes is
  // no cap), else 1024 MiB. Throws CacheError naming the variable for anything else.
  static std::uint64_t default_max_bytes();
  // The marker's file name inside a cache folder (the Cache Directory Tagging convention).
  static constexpr const char* kMarkerName = "CACHEDIR.TAG";

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

// The checks ResultCache's constructor makes (folder and cap), without keeping a cache: a tool
// calls it before its run so that a bad cache folder is exit 2 before any work. Throws CacheError.
void check_cache_settings(const std::string& dir);

// sha256 of a file's bytes (a checker or executor binary: part of a key), computed once per
// process for each (path, inode, size, mtime). Throws CacheError when the file cannot be read.
std::string file_sha256(const std::string& path);

}  // namespace kemit::lane_support

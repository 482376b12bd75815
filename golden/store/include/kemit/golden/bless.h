// Blessing: writing a fresh run into the shards. Add-new-only unless told otherwise, all or
// nothing across families, atomic per file, one writer at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kemit/golden/compare.h"

namespace kemit::golden {

struct BlessOptions {
  bool allow_changes = false;  // rewrite configs whose texts, refusal reasons or resources changed
  bool renumber = false;       // accept MOVED configs: store them under their new id
  bool prune = false;          // drop MISSING configs and retired flavors (needs a complete run)
  bool force = false;          // write even though the CI environment variable is set
  bool dry_run = false;        // plan and report, write nothing (allowed in CI)
};

struct FamilyBlessReport {
  std::string family;
  std::filesystem::path path;
  bool created = false;  // the family had no shard
  std::string repaired;  // the shard did not load (the loader's message): rebuilt whole from a complete run
  bool written = false;  // the file's bytes changed and were written (false in a dry run)
  std::vector<std::uint64_t> added, changed, removed;
  std::vector<std::uint64_t> filled;  // unchanged configs that gained resource figures or an ISA profile
  std::vector<std::pair<std::uint64_t, std::uint64_t>> moved;  // (blessed id, new id)
  std::vector<std::string> flavors_added, flavors_removed;
};

struct BlessReport {
  std::vector<std::string> refusals;  // when non-empty nothing was written
  std::vector<FamilyBlessReport> families;
  bool refused() const { return !refusals.empty(); }
};

// Blesses `runs` (one per family) into `shard_dir`. Policy refusals come back in the report;
// a shard that fails to load is rebuilt whole from a complete run of its family (`repaired`),
// and throws GoldenError for any other run; an I/O failure throws GoldenError. Either way nothing is
// written unless every family can be blessed. Refuses when ci_environment() unless `force`.
BlessReport bless(const std::filesystem::path& shard_dir, const std::vector<FreshResults>& runs,
                  const BlessOptions& options);

// True when the CI environment variable is set to anything but "", "0" or "false". The
// store reads it itself, so a caller that forgets cannot bless in CI by accident.
bool ci_environment();

std::string describe_bless(const BlessReport& report);

}  // namespace kemit::golden

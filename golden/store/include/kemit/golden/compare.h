// Comparing a fresh run with a family's stored shard: what run_diff --check-golden reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kemit/golden/shard.h"

namespace kemit::golden {

// A fresh run of one family. Entries use the stored model: sections hold sha256 + bytes (hash
// the texts with sha256_hex), a flavor gate is Section::refused(reason), a validation refusal
// sets Entry::rejected. Only `flavors` need be present in each entry's `flavors` map.
struct FreshResults {
  std::string family;
  std::vector<std::string> flavors;      // the flavors this run emitted and compares
  std::vector<std::string> all_flavors;  // the flavor table (a full shard's flavors); empty: `flavors`
  bool complete = false;  // every config of the family ran (no id filter or shard): enables MISSING
  std::vector<Entry> entries;
};

enum class Category {
  changed,            // a section's text changed (or a refusal appeared or went away)
  new_entry,          // a config the shard lacks (unblessed)
  missing,            // a blessed config the run no longer has (complete runs only)
  moved,              // the same spec digest under another id (renumbered)
  reason_changed,     // a refusal's text changed
  stale_flavor,       // the shard lacks a flavor the run has, or holds one the flavor table lacks
  counters,           // the counters the run implies differ from the stored ones
  resources_changed,  // a resource figure (VGPRs, spills, ...) changed
  code_changed,       // the compiled code changed: the ISA profile (waves/SIMD, instruction counts) or its digest
};
std::string_view category_name(Category c);  // "CHANGED", "NEW", ...

// One section of one config, before and after. For the "validation" pseudo-section, `before`
// or `after` is the refusal, or the emitted canonical section.
struct SectionChange {
  std::string section;  // "canonical", a flavor, "validation", "kernel_name" or "spec_digest"
  Section before, after;
  std::string before_text, after_text;  // kernel_name / spec_digest only
  std::int64_t bytes_delta() const {
    return static_cast<std::int64_t>(after.bytes) - static_cast<std::int64_t>(before.bytes);
  }
};

struct ResourceChange {
  std::string flavor;
  ResourceKind kind;
  std::optional<std::uint64_t> before;  // none: the section holds other figures but not this one
  std::uint64_t after = 0;
};

// One figure of the compiled code, before and after (docs/isa_profile.md).
struct CodeChange {
  std::string flavor;
  std::string what;           // "waves/SIMD", an instruction class, "loop <class>", or "code"
  std::string before, after;  // counts ("0" when absent) or shortened digests
  bool ir_unchanged = false;  // "code" only: same IR, so another LLVM build (or lane codegen) compiled it
};

struct Finding {
  Category category;
  std::uint64_t id = 0;         // the config's id in the run (the stored id for MISSING)
  std::uint64_t stored_id = 0;  // the id in the shard (differs from `id` only for MOVED)
  std::string kernel_name;
  std::string arch;
  std::vector<SectionChange> sections;    // CHANGED, REASON_CHANGED
  std::vector<ResourceChange> resources;  // RESOURCES_CHANGED
  std::vector<CodeChange> code;           // CODE_CHANGED
  std::vector<CounterChange> counters;    // COUNTERS
  std::string flavor;                     // STALE_FLAVOR
  bool flavor_missing_from_shard = false;  // STALE_FLAVOR: true = the run has it, the shard not
};

struct Comparison {
  std::string family;
  bool shard_exists = false;
  std::vector<std::string> flavors_compared;
  std::size_t configs_in_run = 0;    // the run's configs of this family (NEW ones included)
  std::size_t configs_compared = 0;  // fresh configs found in the shard (by id or by move)
  // Flavor sections of compared configs whose resources the run measured: with figures stored
  // too (compared), and without (blessed with --no-resources: nothing to compare them with).
  std::size_t resources_compared = 0, resources_unstored = 0;
  std::vector<Finding> findings;     // by category, then id

  bool clean() const { return findings.empty(); }
  std::size_t count(Category c) const;
};

// `stored` is null when the family has no shard yet (everything is NEW). Throws GoldenError
// when the fresh results are malformed (duplicate ids, bad digests, a run flavor missing).
Comparison compare_with_golden(const Shard* stored, const FreshResults& fresh);

// Human-readable lines: one summary line, then one line per finding, each with the command
// that blesses it. `run_diff` is how that command starts: the caller passes its own path and
// location flags, so that the command looks where the run looked.
std::string describe_finding(const std::string& family, const Finding& finding,
                             const std::string& run_diff = "run_diff");
std::string describe_comparison(const Comparison& comparison, const std::string& run_diff = "run_diff");

// The section-level differences between two entries over "canonical" + `flavors` (both entries
// must hold those flavors unless refused); used by compare and by the merge reports.
std::vector<SectionChange> entry_changes(const Entry& before, const Entry& after,
                                         const std::vector<std::string>& flavors);
std::vector<ResourceChange> resource_changes(const Entry& before, const Entry& after,
                                             const std::vector<std::string>& flavors);
// ISA profile and code digest differences, where both sides measured them.
std::vector<CodeChange> code_changes(const Entry& before, const Entry& after, const std::vector<std::string>& flavors);

// Throws GoldenError when `fresh` is malformed (bad family name or digests, duplicate ids, an
// entry lacking one of the run's flavors).
void validate_fresh(const FreshResults& fresh);

}  // namespace kemit::golden

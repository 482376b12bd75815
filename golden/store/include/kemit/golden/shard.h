// The in-memory model of a golden shard: one file per kernel family, one entry per config.
// The same `Entry` type describes a fresh run's result, so blessing is "store what ran".
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kemit::golden {

inline constexpr int kFormatVersion = 1;
// The only command that writes shards; stored in every header so hand edits stand out.
inline constexpr std::string_view kWrittenBy = "run_diff --record-golden";
inline constexpr std::string_view kCanonicalSection = "canonical";

// Resource figures read from the compiled code object (VGPRs, spills, ...), in file order.
enum class ResourceKind { vgpr, agpr, sgpr, vgpr_spill, sgpr_spill, scratch, lds };
inline constexpr std::size_t kResourceKinds = 7;
std::string_view resource_name(ResourceKind kind);
std::optional<ResourceKind> resource_from_name(std::string_view name);

// Each figure is optional: a run without the LLVM lane measures none of them.
struct Resources {
  std::array<std::optional<std::uint64_t>, kResourceKinds> figures;

  std::optional<std::uint64_t>& operator[](ResourceKind k) { return figures[static_cast<std::size_t>(k)]; }
  const std::optional<std::uint64_t>& operator[](ResourceKind k) const {
    return figures[static_cast<std::size_t>(k)];
  }
  bool empty() const;
  bool operator==(const Resources& other) const { return figures == other.figures; }
  bool operator!=(const Resources& other) const { return !(*this == other); }
};

// What the compiled code of a module's kernel does (docs/isa_profile.md): its waves per SIMD and
// its instruction counts by class, whole kernel and inside loops. Empty when not measured.
struct IsaFigures {
  std::optional<std::uint64_t> waves;
  std::map<std::string, std::uint64_t> counts;  // keys [a-z0-9_]+, counts above 0 only
  std::map<std::string, std::uint64_t> loop;
  bool empty() const { return !waves && counts.empty() && loop.empty(); }
  bool operator==(const IsaFigures& o) const { return waves == o.waves && counts == o.counts && loop == o.loop; }
  bool operator!=(const IsaFigures& o) const { return !(*this == o); }
};

// One emitted text (its sha256 and size) or a refusal with its reason.
struct Section {
  std::string sha256;    // 64 lowercase hex digits; empty when refused
  std::uint64_t bytes = 0;
  std::string rejected;  // the refusal reason; non-empty exactly when refused
  Resources resources;   // flavor sections only
  IsaFigures isa;        // flavor sections only: the ISA profile (docs/isa_profile.md)
  // Flavor sections only: sha256 of the compiled code (the LLVM lane's code text, docs/llvm_lane.md);
  // "" when not measured. Compared (CODE_CHANGED) and behind `golden summary`'s TWIN lines.
  std::string code;

  bool is_rejected() const { return !rejected.empty(); }
  bool operator==(const Section& o) const {
    return sha256 == o.sha256 && bytes == o.bytes && rejected == o.rejected && resources == o.resources &&
           isa == o.isa && code == o.code;
  }
  bool operator!=(const Section& o) const { return !(*this == o); }
  static Section emitted(std::string sha256, std::uint64_t bytes, Resources resources = {});
  static Section refused(std::string reason);
};

// Flavor names sort naturally (llvm9 < llvm16 < llvm100): digit runs compare as numbers.
bool flavor_less(std::string_view a, std::string_view b);
struct FlavorLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return flavor_less(a, b); }
};
void sort_flavors(std::vector<std::string>& flavors);

// One config. A validation refusal (`rejected` non-empty) has no sections and no kernel name.
struct Entry {
  std::uint64_t id = 0;
  std::string spec_digest;  // sha256 of the canonical JSON of {"arch", "spec"}
  std::string kernel_name;
  std::string arch;
  std::string rejected;     // validation refusal reason
  Section canonical;
  std::map<std::string, Section, FlavorLess> flavors;

  bool is_rejected() const { return !rejected.empty(); }
  bool operator==(const Entry& o) const;
  bool operator!=(const Entry& o) const { return !(*this == o); }
};

struct SectionCounts {
  std::uint64_t emitted = 0;
  std::uint64_t refused = 0;  // flavor gates plus validation refusals: emitted + refused == configs
  bool operator==(const SectionCounts& o) const { return emitted == o.emitted && refused == o.refused; }
  bool operator!=(const SectionCounts& o) const { return !(*this == o); }
};

// Derived from the entries only; never edited, checked on load, recomputed on write.
struct Counters {
  std::uint64_t configs = 0;
  std::uint64_t validation_refused = 0;
  std::map<std::string, SectionCounts, FlavorLess> sections;  // "canonical" and each flavor
  std::map<std::string, std::uint64_t> arch;                  // configs per arch

  bool operator==(const Counters& o) const;
  bool operator!=(const Counters& o) const { return !(*this == o); }
  void add(const Counters& other);  // for totals across families
};

struct Shard {
  std::string family;
  std::vector<std::string> flavors;  // natural order, unique
  Counters counters;                 // always compute_counters(*this) once loaded or built
  std::vector<Entry> entries;        // strictly increasing id

  const Entry* find(std::uint64_t id) const;
};

// Counters over `entries` for the sections "canonical" + `flavors`.
Counters compute_counters(const std::vector<Entry>& entries, const std::vector<std::string>& flavors);
struct CounterChange {
  std::string name;  // "configs", "sections.llvm19.emitted", "arch.gfx942", ...
  std::uint64_t before, after;
};
// Every figure in which `before` and `after` differ (a section or arch absent counts as 0).
std::vector<CounterChange> counter_differences(const Counters& before, const Counters& after);

bool is_family_name(std::string_view name);  // [a-z0-9_]+
bool is_sha256_hex(std::string_view text);   // 64 lowercase hex digits

}  // namespace kemit::golden

// The shard model: ordering rules, equality and the derived counters.
#include "kemit/golden/shard.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kemit/golden/error.h"

namespace kemit::golden {

namespace {

constexpr std::array<std::string_view, kResourceKinds> kResourceNames = {
    "vgpr", "agpr", "sgpr", "vgpr_spill", "sgpr_spill", "scratch", "lds"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Compares two runs of digits as numbers without overflow: strip zeros, then length, then text.
int compare_digit_runs(std::string_view a, std::string_view b) {
  auto strip = [](std::string_view s) {
    std::size_t i = 0;
    while (i + 1 < s.size() && s[i] == '0') ++i;
    return s.substr(i);
  };
  a = strip(a);
  b = strip(b);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b);
}

}  // namespace

GoldenError::GoldenError(std::string file, std::size_t line, std::string what_happened, std::string what_to_do)
    : std::runtime_error(fmt::format("{}{}: {}{}", file.empty() ? "golden" : file,
                                     line ? fmt::format(":{}", line) : std::string(), what_happened,
                                     what_to_do.empty() ? std::string() : "; " + what_to_do)),
      file_(std::move(file)),
      line_(line),
      problem_(std::move(what_happened)),
      remedy_(std::move(what_to_do)) {}

std::string record_command(const std::string& family) {
  return fmt::format("run_diff --record-golden --only {}", family);
}

std::string_view resource_name(ResourceKind kind) { return kResourceNames[static_cast<std::size_t>(kind)]; }

std::optional<ResourceKind> resource_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kResourceKinds; ++i)
    if (kResourceNames[i] == name) return static_cast<ResourceKind>(i);
  return std::nullopt;
}

bool Resources::empty() const {
  return std::none_of(figures.begin(), figures.end(), [](const auto& f) { return f.has_value(); });
}

Section Section::emitted(std::string sha256, std::uint64_t bytes, Resources resources) {
  Section s;
  s.sha256 = std::move(sha256);
  s.bytes = bytes;
  s.resources = resources;
  return s;
}

Section Section::refused(std::string reason) {
  Section s;
  s.rejected = std::move(reason);
  return s;
}

bool flavor_less(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t i_end = i, j_end = j;
      while (i_end < a.size() && is_digit(a[i_end])) ++i_end;
      while (j_end < b.size() && is_digit(b[j_end])) ++j_end;
      int c = compare_digit_runs(a.substr(i, i_end - i), b.substr(j, j_end - j));
      if (c != 0) return c < 0;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // "llvm016" vs "llvm16": any total order will do, as long as it is fixed
}

void sort_flavors(std::vector<std::string>& flavors) {
  std::sort(flavors.begin(), flavors.end(), flavor_less);
  flavors.erase(std::unique(flavors.begin(), flavors.end()), flavors.end());
}

bool Entry::operator==(const Entry& o) const {
  return id == o.id && spec_digest == o.spec_digest && kernel_name == o.kernel_name && arch == o.arch &&
         rejected == o.rejected && canonical == o.canonical && flavors == o.flavors;
}

bool Counters::operator==(const Counters& o) const {
  return configs == o.configs && validation_refused == o.validation_refused && sections == o.sections &&
         arch == o.arch;
}

void Counters::add(const Counters& other) {
  configs += other.configs;
  validation_refused += other.validation_refused;
  for (const auto& [name, counts] : other.sections) {
    sections[name].emitted += counts.emitted;
    sections[name].refused += counts.refused;
  }
  for (const auto& [arch_name, n] : other.arch) arch[arch_name] += n;
}

const Entry* Shard::find(std::uint64_t id) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), id,
                             [](const Entry& e, std::uint64_t wanted) { return e.id < wanted; });
  return it != entries.end() && it->id == id ? &*it : nullptr;
}

Counters compute_counters(const std::vector<Entry>& entries, const std::vector<std::string>& flavors) {
  Counters c;
  // References into the map, looked up once: this runs over every entry of every shard.
  SectionCounts& canonical = c.sections[std::string(kCanonicalSection)];
  std::vector<SectionCounts*> per_flavor;
  for (const auto& f : flavors) per_flavor.push_back(&c.sections[f]);
  for (const Entry& e : entries) {
    ++c.configs;
    ++c.arch[e.arch];
    if (e.is_rejected()) {
      ++c.validation_refused;
      ++canonical.refused;
      for (SectionCounts* counts : per_flavor) ++counts->refused;
      continue;
    }
    ++(e.canonical.is_rejected() ? canonical.refused : canonical.emitted);
    for (std::size_t i = 0; i < flavors.size(); ++i) {
      auto it = e.flavors.find(flavors[i]);
      bool refused = it == e.flavors.end() || it->second.is_rejected();
      ++(refused ? per_flavor[i]->refused : per_flavor[i]->emitted);
    }
  }
  return c;
}

std::vector<CounterChange> counter_differences(const Counters& before, const Counters& after) {
  std::vector<CounterChange> out;
  auto check = [&](const std::string& name, std::uint64_t b, std::uint64_t a) {
    if (b != a) out.push_back({name, b, a});
  };
  check("configs", before.configs, after.configs);
  check("validation_refused", before.validation_refused, after.validation_refused);
  std::map<std::string, std::pair<SectionCounts, SectionCounts>, FlavorLess> sections;
  for (const auto& [name, counts] : before.sections) sections[name].first = counts;
  for (const auto& [name, counts] : after.sections) sections[name].second = counts;
  for (const auto& [name, pair] : sections) {
    check("sections." + name + ".emitted", pair.first.emitted, pair.second.emitted);
    check("sections." + name + ".refused", pair.first.refused, pair.second.refused);
  }
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> arches;
  for (const auto& [name, n] : before.arch) arches[name].first = n;
  for (const auto& [name, n] : after.arch) arches[name].second = n;
  for (const auto& [name, pair] : arches) check("arch." + name, pair.first, pair.second);
  return out;
}

bool is_family_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_';
  });
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  // Branch-free per character: this runs on every digest of every loaded entry.
  bool ok = true;
  for (char c : text) ok &= (c >= '0' && c <= '9') | (c >= 'a' && c <= 'f');
  return ok;
}

}  // namespace kemit::golden

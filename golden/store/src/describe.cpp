// One line per finding, saying what changed and which command blesses it (lit's rule: what,
// where, what to do).

#include <map>

#include <fmt/ranges.h>

#include "kemit/golden/bless.h"
#include "kemit/golden/compare.h"
#include "kemit/golden/error.h"

namespace kemit::golden {

namespace {

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

std::string section_state(const Section& s) {
  if (s.is_rejected()) return fmt::format("rejected \"{}\"", s.rejected);
  return fmt::format("{} ({} bytes)", short_sha(s.sha256), s.bytes);
}

std::string describe_change(const SectionChange& c) {
  if (!c.before_text.empty() || !c.after_text.empty())
    return fmt::format("{} {} -> {}", c.section, c.before_text, c.after_text);
  std::string text = fmt::format("{} {} -> {}", c.section, section_state(c.before), section_state(c.after));
  if (!c.before.is_rejected() && !c.after.is_rejected()) text += fmt::format(" ({:+} bytes)", c.bytes_delta());
  return text;
}

std::string config_label(const std::string& family, const Finding& f) {
  std::string label = fmt::format("{} #{}", family, f.id);
  if (f.stored_id != f.id) label += fmt::format(" (blessed as #{})", f.stored_id);
  if (!f.kernel_name.empty()) label += " " + f.kernel_name;
  if (!f.arch.empty()) label += " [" + f.arch + "]";
  return label;
}

template <typename Item, typename Format>
std::string join(const std::vector<Item>& items, Format format) {
  std::string out;
  for (const Item& item : items) out += (out.empty() ? "" : "; ") + format(item);
  return out;
}

// "llvm19 waves/SIMD 8 -> 7, global_load_dwordx4 16 -> 0, global_load_dword 0 -> 64": per
// flavor, at most kShown figures (then how many more), a digest change named by its cause.
std::string describe_code_changes(const std::vector<CodeChange>& changes) {
  constexpr std::size_t kShown = 12;
  std::map<std::string, std::vector<std::string>, FlavorLess> by_flavor;
  for (const CodeChange& c : changes) {
    std::string text = fmt::format("{} {} -> {}", c.what, c.before, c.after);
    if (c.what == "code")
      text += c.ir_unchanged ? " (the IR is unchanged: another LLVM build compiled it, not an engine change)"
                             : " (the IR changed)";
    by_flavor[c.flavor].push_back(std::move(text));
  }
  std::string out;
  for (const auto& [flavor, parts] : by_flavor) {
    std::string line;
    for (std::size_t i = 0; i < parts.size() && i < kShown; ++i) line += (i ? ", " : "") + parts[i];
    if (parts.size() > kShown) line += fmt::format(" (and {} more)", parts.size() - kShown);
    out += (out.empty() ? "" : "; ") + flavor + " " + line;
  }
  return out;
}

}  // namespace

std::string_view category_name(Category c) {
  switch (c) {
    case Category::changed: return "CHANGED";
    case Category::new_entry: return "NEW";
    case Category::missing: return "MISSING";
    case Category::moved: return "MOVED";
    case Category::reason_changed: return "REASON_CHANGED";
    case Category::stale_flavor: return "STALE_FLAVOR";
    case Category::counters: return "COUNTERS";
    case Category::resources_changed: return "RESOURCES_CHANGED";
    case Category::code_changed: return "CODE_CHANGED";
  }
  return "UNKNOWN";
}

std::string describe_finding(const std::string& family, const Finding& f, const std::string& run_diff) {
  std::string bless = fmt::format("{} --record-golden --only {}", run_diff, family);
  // --prune needs a complete run, so its remedy never carries --only (which it refuses).
  std::string prune = run_diff + " --record-golden --prune";
  std::string head = fmt::format("{} {}", category_name(f.category), config_label(family, f));
  switch (f.category) {
    case Category::changed:
    case Category::reason_changed:
      return fmt::format("{}: {}; bless with `{} --allow-changes`", head, join(f.sections, describe_change), bless);
    case Category::resources_changed:
      return fmt::format("{}: {}; bless with `{} --allow-changes`", head, join(f.resources, [](const auto& r) {
                           return fmt::format("{} {} {} -> {}", r.flavor, resource_name(r.kind),
                                              r.before ? std::to_string(*r.before) : "(not stored)", r.after);
                         }), bless);
    case Category::code_changed:
      return fmt::format("{}: {}; bless with `{} --allow-changes`", head, describe_code_changes(f.code), bless);
    case Category::new_entry: return fmt::format("{}: not blessed yet; bless with `{}`", head, bless);
    case Category::missing:
      return fmt::format("{}: blessed but no longer in the configs; remove with `{}`", head, prune);
    case Category::moved:
      return fmt::format("{}: same spec as blessed #{}; renumber with `{} --renumber`", head, f.stored_id, bless);
    case Category::stale_flavor:
      if (f.flavor_missing_from_shard)
        return fmt::format("STALE_FLAVOR {}: the shard lacks flavor {}, which this run checks; record it with `{}` "
                           "(a complete run)",
                           family, f.flavor, bless);
      return fmt::format("STALE_FLAVOR {}: the shard holds flavor {}, which the flavor table no longer has; drop it "
                         "with `{}`",
                         family, f.flavor, prune);
    case Category::counters:
      return fmt::format("COUNTERS {}: {}", family, join(f.counters, [](const CounterChange& c) {
                           return fmt::format("{} {} -> {}", c.name, c.before, c.after);
                         }));
  }
  return head;
}

std::string describe_comparison(const Comparison& c, const std::string& run_diff) {
  std::string sections = "canonical";
  for (const auto& f : c.flavors_compared) sections += "," + f;
  std::string out = fmt::format("GOLDEN {}: {} configs ({})", c.family, c.configs_in_run, sections);
  if (!c.shard_exists) out += ", no shard yet";
  else if (c.configs_compared != c.configs_in_run)
    out += fmt::format(", {} of them in the shard", c.configs_compared);
  if (c.clean()) return out + ": OK\n";
  std::string counts;
  for (Category cat : {Category::changed, Category::new_entry, Category::missing, Category::moved,
                       Category::reason_changed, Category::stale_flavor, Category::counters,
                       Category::resources_changed, Category::code_changed})
    if (std::size_t n = c.count(cat)) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", category_name(cat), n);
  out += ": " + counts + "\n";
  for (const Finding& f : c.findings) out += "  " + describe_finding(c.family, f, run_diff) + "\n";
  return out;
}

}  // namespace kemit::golden

namespace kemit::golden {

namespace {
std::string id_list(const std::vector<std::uint64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size() && i < 20; ++i) out += fmt::format("{}{}", i ? ", " : "", ids[i]);
  if (ids.size() > 20) out += fmt::format(", ... ({} in all)", ids.size());
  return out;
}
}  // namespace

std::string describe_bless(const BlessReport& report) {
  std::string out;
  for (const auto& r : report.refusals) out += "REFUSED " + r + "\n";
  if (report.refused()) return out + "nothing was written\n";
  for (const FamilyBlessReport& f : report.families) {
    std::vector<std::string> parts;
    if (!f.repaired.empty()) parts.push_back("REPAIRED: the shard did not load (" + f.repaired + "), rebuilt from this complete run");
    if (!f.added.empty()) parts.push_back(fmt::format("added {}", id_list(f.added)));
    if (!f.changed.empty()) parts.push_back(fmt::format("changed {}", id_list(f.changed)));
    if (!f.filled.empty()) parts.push_back(fmt::format("resources filled in {}", id_list(f.filled)));
    for (const auto& [from, to] : f.moved) parts.push_back(fmt::format("moved {} -> {}", from, to));
    if (!f.removed.empty()) parts.push_back(fmt::format("removed {}", id_list(f.removed)));
    for (const auto& fl : f.flavors_added) parts.push_back("flavor added " + fl);
    for (const auto& fl : f.flavors_removed) parts.push_back("flavor removed " + fl);
    std::string what = parts.empty() ? "nothing to bless" : fmt::format("{}", fmt::join(parts, "; "));
    out += fmt::format("golden {}: {}{}\n", f.family, what,
                       f.written ? fmt::format(" (wrote {})", f.path.string()) : std::string());
  }
  return out;
}

}  // namespace kemit::golden

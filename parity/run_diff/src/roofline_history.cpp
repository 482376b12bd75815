// The roofline of a blessed config across the shard's history (roofline_history.h).
#include "roofline_history.h"

#include <fmt/format.h>

#include "kemit/driver/config.h"
#include "kemit/golden/error.h"
#include "kemit/golden/roofline.h"
#include "kemit/golden/shard_io.h"

namespace kemit::run_diff {
namespace {

constexpr size_t kCommitsShown = 40;

// The roofline of `id` as one commit (or the working tree) holds the shard and the config file:
// its text, or why there is none.
std::string roofline_state(const golden::Shard& shard, const driver::FamilyConfigs& configs, std::uint64_t id,
                           const std::map<std::string, lane::FamilyIntents>& intents) {
  const golden::Entry* entry = shard.find(id);
  if (!entry) return "not blessed";
  golden::Shard one{shard.family, shard.flavors, {}, {*entry}};
  std::map<std::uint64_t, golden::ConfigSpec> config;
  for (const auto& c : configs.configs)
    if (static_cast<std::uint64_t>(c.id) == id) config[id] = {c.arch, c.spec, driver::spec_digest(c.arch, c.spec)};
  auto found = intents.find(shard.family);
  golden::FamilyRoofline family = golden::family_roofline(one, config, found == intents.end() ? nullptr : &found->second);
  if (!family.missing.empty()) return "no roofline: " + family.missing;
  if (!family.without_config.empty()) return "no config " + std::to_string(id) + " in that commit's config file";
  if (family.configs.empty()) return "refused at every flavor: no roofline";
  return golden::config_roofline_text(family.configs.front());
}

// The state at `commit`, or why the commit's files cannot be read.
std::string state_at(BlessedHistory& history, const std::string& commit, std::uint64_t id,
                     const std::map<std::string, lane::FamilyIntents>& intents) {
  std::string shard_text = history.shard_at(commit), configs_text = history.configs_at(commit);
  if (configs_text.empty()) return "no config file " + history.config_path() + " in this commit";
  try {
    golden::LoadOptions load;
    load.expected_family = history.shard().family;  // the label is not a file name
    golden::Shard shard = golden::parse_shard(shard_text, history.shard_in_repo() + "@" + commit.substr(0, 12), load);
    return roofline_state(shard, driver::parse_family_configs(configs_text, history.config_path()), id, intents);
  } catch (const std::exception& e) {  // a shard or config file of an older format
    return std::string("unreadable: ") + e.what();
  }
}

}  // namespace

std::string roofline_history(const Options& options, BlessedHistory& history, std::uint64_t id) {
  const std::string& family = history.shard().family;
  std::string out = fmt::format("== roofline of {} #{} across the history of {} (each commit's spec and stored "
                                "waves/SIMD; today's parity/intents and tables/arch_peaks.json), where it changed:\n",
                                family, id, history.shard_in_repo());
  std::map<std::string, lane::FamilyIntents> intents;
  try {
    intents = golden::tree_intents(options.check.locations.root);
  } catch (const std::runtime_error& e) {
    return out + "  no roofline: " + e.what() + "\n";
  }
  std::string last;
  auto commits = history.shard_commits(kCommitsShown);
  if (commits.empty()) out += "  (no commit holds the shard)\n";
  for (const auto& [commit, description] : commits) {
    std::string state = state_at(history, commit, id, intents);
    if (state != last) out += fmt::format("  {}\n      {}\n", description, state);
    last = state;
  }
  std::string now = roofline_state(history.shard(), history.configs(), id, intents);
  if (now != last) out += fmt::format("  working tree (uncommitted)\n      {}\n", now);
  return out;
}

}  // namespace kemit::run_diff

// Performance intents, evaluated with Debian's muparser (docs/isa_profile.md, "Intents").
#include "kemit/lane/intents.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <regex>
#include <stdexcept>

#include <muParser.h>

#include "spec_expressions.h"

namespace kemit::lane {
namespace {

bool is_class_name(const std::string& name) {
  static const std::regex instruction("^(global|buffer|flat|scratch|lds|ds|v|s)_[a-z0-9_]+$");
  static const std::vector<std::string> classes = {"instructions", "valu", "valu_packed", "salu", "smem",
                                                   "s_waitcnt", "branch", "s_barrier", "readfirstlane",
                                                   "mma", "packed_fma", "scalar_fma", "loops"};
  return std::regex_match(name, instruction) || std::find(classes.begin(), classes.end(), name) != classes.end();
}

// "global_load_min_bits": the narrowest width of the kernel's global loads (0 when none).
std::optional<double> width_value(const IsaCounts& counts, const std::string& name) {
  static const std::regex width("^([a-z]+_(load|store))_(min|max)_bits$");
  std::smatch match;
  if (!std::regex_match(name, match, width)) return std::nullopt;
  std::optional<int64_t> best;
  const std::string prefix = match[1].str() + "_";
  for (const auto& [key, count] : counts) {
    if (key.rfind(prefix, 0) != 0) continue;
    std::string bits = key.substr(prefix.size());
    if (bits.empty() || bits.find_first_not_of("0123456789") != std::string::npos) continue;
    int64_t value = std::stoll(bits);
    best = !best ? value : (match[3] == "min" ? std::min(*best, value) : std::max(*best, value));
  }
  return static_cast<double>(best.value_or(0));
}

std::optional<double> count_value(const IsaCounts& counts, const std::string& name) {
  if (auto width = width_value(counts, name)) return width;
  if (!is_class_name(name)) return std::nullopt;
  auto found = counts.find(name);
  return static_cast<double>(found == counts.end() ? 0 : found->second);
}

std::optional<double> kernel_value(const KernelResources& k, const std::string& name) {
  const std::map<std::string, int64_t> figures = {
      {"vgpr", k.vgpr_count},         {"agpr", k.agpr_count},
      {"sgpr", k.sgpr_count},         {"vgpr_spill", k.vgpr_spill_count},
      {"sgpr_spill", k.sgpr_spill_count}, {"scratch", k.private_segment_fixed_size},
      {"lds", k.group_segment_fixed_size}, {"waves", k.isa.waves_per_simd},
      {"workgroup", k.max_flat_workgroup_size}};
  auto found = figures.find(name);
  if (found != figures.end()) return static_cast<double>(found->second);
  if (name.rfind("n_", 0) == 0) return count_value(k.isa.counts, name.substr(2));
  if (name.rfind("loop_", 0) == 0) return count_value(k.isa.loop_counts, name.substr(5));
  return width_value(k.isa.counts, name);  // "global_load_min_bits": the whole kernel's
}

bool excused(const Intent& intent, const LaneModule& module) {
  const std::string id = std::to_string(module.config);
  return intent.known_breaks.count(id) || intent.known_breaks.count(id + "@" + module.flavor);
}

bool applies_to(const Intent& intent, const std::string& arch) {
  return intent.archs.empty() || std::find(intent.archs.begin(), intent.archs.end(), arch) != intent.archs.end();
}

bool matches(const Intent& intent, const nlohmann::json& spec, const nlohmann::json& defaults) {
  for (const auto& [field, wanted] : intent.match) {
    const nlohmann::json& source = spec.contains(field) ? spec : defaults;
    if (!source.contains(field) || !source[field].is_string() || source[field].get<std::string>() != wanted) return false;
  }
  return true;
}

std::string values_text(const std::vector<std::pair<std::string, double>>& used) {
  std::string text;
  for (const auto& [name, value] : used) {
    char number[32];
    std::snprintf(number, sizeof number, "%g", value);
    text += (text.empty() ? "" : ", ") + name + " " + number;
  }
  return text;
}

// True when the kernel keeps the intent (or it does not apply); else the message.
std::optional<std::string> broken(const FamilyIntents& family, const Intent& intent, const nlohmann::json& spec,
                                  const KernelResources& kernel) {
  const std::string where = family.file + ": intent '" + intent.name + "'";
  auto value_of = [&](const std::string& name) -> std::optional<double> {
    if (auto v = spec_value(spec, family.defaults, name)) return v;
    return kernel_value(kernel, name);
  };
  std::vector<std::pair<std::string, double>> used;
  if (!intent.when.empty() && evaluate(intent.when, value_of, where, used) == 0) return std::nullopt;
  used.clear();
  if (evaluate(intent.require, value_of, where, used) != 0) return std::nullopt;
  return "intent '" + intent.name + "' broken by kernel " + kernel.name + ": `" + intent.require + "` is false with " +
         values_text(used) + " (" + family.file + ")";
}

}  // namespace

void apply_intents(const FamilyIntents& family, const nlohmann::json& spec, const LaneModule& module,
                   LaneResult& result) {
  if (result.verdict != Verdict::LLVM_OK) return;
  for (const Intent& intent : family.intents) {
    if (excused(intent, module) || !applies_to(intent, module.arch) || !matches(intent, spec, family.defaults)) continue;
    for (const auto& kernel : result.kernels) {
      std::optional<std::string> why;
      try {
        why = broken(family, intent, spec, kernel);
      } catch (const mu::Parser::exception_type& error) {
        why = family.file + ": intent '" + intent.name + "' cannot be evaluated: " + error.GetMsg();
      } catch (const std::runtime_error& error) {  // a name the config and the profile do not define
        why = error.what();
      }
      if (!why) continue;
      result.verdict = Verdict::INTENT_BROKEN;
      result.detail = *why;
      return;
    }
  }
}

void attach_roofline(const FamilyIntents& family, const nlohmann::json& spec, const LaneModule& module,
                     LaneResult& result) {
  if (result.kernels.empty() || !family.roofline) return;
  result.roofline = roofline_or_why(family, spec, module.arch);
  int64_t waves = result.kernels.front().isa.waves_per_simd;
  for (const auto& kernel : result.kernels) waves = std::min(waves, kernel.isa.waves_per_simd);
  result.roofline->waves_per_simd = static_cast<int>(waves);
}

}  // namespace kemit::lane

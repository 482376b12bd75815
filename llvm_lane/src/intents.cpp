// Performance intents, evaluated with Debian's muparser (docs/isa_profile.md, "Intents").
#include "kemit/lane/intents.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <filesystem>
#include <optional>
#include <regex>
#include <stdexcept>

#include <muParser.h>

#include "kemit/input_limits.h"

namespace kemit::lane {
namespace {

std::string read_text(const std::filesystem::path& file) {
  try {
    std::string text = limits::read_regular_file(file, file.string());
    limits::check_json_limits(text, file.string());
    return text;
  } catch (const limits::InputLimitError& error) {
    throw std::runtime_error(std::string(error.what()) + "; see docs/limits.md");
  }
}

// One muparser per expression text for the run: it is compiled to bytecode once, and each kernel
// only refills the values its names point to (muparser keeps pointers, so they live in a deque).
// Not thread-safe: check_llvm applies the intents on one thread.
struct CompiledExpression {
  mu::Parser parser;
  std::vector<std::string> names;
  std::deque<double> values;
};

CompiledExpression& compiled(const std::string& expression) {
  static std::map<std::string, std::unique_ptr<CompiledExpression>> cache;
  std::unique_ptr<CompiledExpression>& slot = cache[expression];
  if (slot) return *slot;
  auto e = std::make_unique<CompiledExpression>();
  e->parser.SetExpr(expression);
  const mu::varmap_type names = e->parser.GetUsedVar();  // a copy: DefineVar resets the parser's own
  for (const auto& [name, unused] : names) {
    e->names.push_back(name);
    e->values.push_back(0);
    e->parser.DefineVar(name, &e->values.back());
  }
  e->parser.SetExpr(expression);
  slot = std::move(e);
  return *slot;
}

// The expression's value with every name it uses given by `value_of`; `used` gets each name and value.
double evaluate(const std::string& expression,
                const std::function<std::optional<double>(const std::string&)>& value_of, const std::string& where,
                std::vector<std::pair<std::string, double>>& used) {
  CompiledExpression& e = compiled(expression);
  for (size_t i = 0; i < e.names.size(); ++i) {
    std::optional<double> value = value_of(e.names[i]);
    if (!value) throw std::runtime_error(where + ": `" + expression + "` uses '" + e.names[i] + "', which is neither a "
                                         "spec field, a default nor a profile figure (docs/isa_profile.md, \"Intents\")");
    e.values[i] = *value;
    used.emplace_back(e.names[i], *value);
  }
  return e.parser.Eval();
}

// `mma_m` of a spec field "mma": "mfma_32x32x8" (a shape MxNxK at the end of a string field).
std::optional<double> shape_value(const nlohmann::json& field, char which) {
  static const std::regex shape("([0-9]+)x([0-9]+)x([0-9]+)$");
  std::smatch match;
  if (!field.is_string()) return std::nullopt;
  const std::string text = field.get<std::string>();
  if (!std::regex_search(text, match, shape)) return std::nullopt;
  return std::stod(match[which == 'm' ? 1 : which == 'n' ? 2 : 3].str());
}

// The spec's numbers and booleans, then the family's defaults for the fields a config leaves out;
// `<field>_m`, `_n`, `_k` of a string field that ends in a shape MxNxK.
std::optional<double> spec_value(const nlohmann::json& spec, const nlohmann::json& defaults, const std::string& name) {
  for (const nlohmann::json* source : {&spec, &defaults}) {
    auto found = source->find(name);
    if (found != source->end()) {
      if (found->is_boolean()) return found->get<bool>() ? 1.0 : 0.0;
      if (found->is_number()) return found->get<double>();
    }
    char which = name.size() > 2 && name[name.size() - 2] == '_' ? name.back() : 0;
    if (which != 'm' && which != 'n' && which != 'k') continue;
    auto field = source->find(name.substr(0, name.size() - 2));
    if (field != source->end()) return shape_value(*field, which);
  }
  return std::nullopt;
}

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

Intent read_intent(const nlohmann::json& item, const std::string& where) {
  Intent intent;
  intent.name = item.at("name").get<std::string>();
  intent.require = item.at("require").get<std::string>();
  intent.when = item.value("when", "");
  const nlohmann::json match = item.value("match", nlohmann::json::object());  // outlives the loops below
  const nlohmann::json known_breaks = item.value("known_breaks", nlohmann::json::object());
  for (const auto& [field, value] : match.items()) intent.match[field] = value.get<std::string>();
  for (const auto& [id, why] : known_breaks.items()) intent.known_breaks[id] = why.get<std::string>();
  intent.archs = item.value("archs", std::vector<std::string>{});
  for (const std::string* expression : {&intent.when, &intent.require}) {
    if (expression->empty()) continue;
    mu::Parser check;  // syntax only: the names are resolved per kernel
    check.SetExpr(*expression);
    try {
      check.GetUsedVar();
    } catch (const mu::Parser::exception_type& error) {
      throw std::runtime_error(where + ": intent '" + intent.name + "': `" + *expression + "`: " + error.GetMsg());
    }
  }
  return intent;
}

FamilyIntents read_family(const std::filesystem::path& file) {
  FamilyIntents family;
  family.file = "parity/intents/" + file.filename().string();
  try {
    nlohmann::json document = nlohmann::json::parse(read_text(file));
    family.family = document.at("family").get<std::string>();
    if (family.family != file.stem().string())
      throw std::runtime_error("\"family\" is '" + family.family + "', not the file's name");
    family.defaults = document.value("defaults", nlohmann::json::object());
    for (const auto& item : document.at("intents")) family.intents.push_back(read_intent(item, family.file));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(file.string() + ": " + error.what() +
                             " (expected {\"family\", \"defaults\"?, \"intents\": [{\"name\", \"require\", \"when\"?, "
                             "\"match\"?, \"known_breaks\"?}]})");
  }
  return family;
}

}  // namespace

std::map<std::string, FamilyIntents> load_intents(const std::string& folder) {
  std::map<std::string, FamilyIntents> out;
  if (!std::filesystem::is_directory(folder)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".json") continue;
    FamilyIntents family = read_family(entry.path());
    out.emplace(family.family, std::move(family));
  }
  return out;
}

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

}  // namespace kemit::lane

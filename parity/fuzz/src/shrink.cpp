// The shrinker (see shrink.h).
#include "kemit/fuzz/shrink.h"

#include <cmath>
#include <cstdlib>

namespace kemit::fuzz {
namespace {

using nlohmann::json;
constexpr int kMaxPasses = 40;

double value_cost(const FieldDomain* field, const json& value) {
  if (!field || !type_problem(*field, value).empty()) return 50;  // a wrong type or unknown field costs most
  if (value == field->default_value) return 0;
  if (field->type != FieldType::integer) return 1;
  double distance = std::fabs(static_cast<double>(value.get<long long>() - field->default_value.get<long long>()));
  return 1 + std::log2(1 + distance);
}

// Integer values between the default (or the valid minimum) and `value`, nearest the default first.
std::vector<json> smaller_integers(const FieldDomain& field, long long value) {
  std::vector<json> out = {field.default_value};
  if (field.min) out.push_back(*field.min);
  for (const auto& option : field.values) out.push_back(option);
  for (const auto& option : field.draw) out.push_back(option);
  long long base = field.default_value.get<long long>();
  out.push_back(base + (value - base) / 2);
  out.push_back(value > base ? value - 1 : value + 1);
  return out;
}

std::vector<std::pair<std::string, json>> candidates(const Domain& domain, const DrawnSpec& current) {
  std::vector<std::pair<std::string, json>> out;  // (arch, spec)
  for (const auto& arch : domain.archs())
    if (domain.arch_position(arch.name) < domain.arch_position(current.arch)) out.push_back({arch.name, current.spec});
  if (!current.spec.is_object()) return out;
  for (const auto& [key, value] : current.spec.items()) {
    json without = current.spec;
    without.erase(key);
    out.push_back({current.arch, without});
    const FieldDomain* field = domain.field(key);
    if (!field || !type_problem(*field, value).empty()) {
      if (field) {
        json fixed = current.spec;
        fixed[key] = field->default_value;
        out.push_back({current.arch, fixed});
      }
      continue;
    }
    std::vector<json> options;
    if (field->type == FieldType::integer) options = smaller_integers(*field, value.get<long long>());
    else options = field->values.empty() ? std::vector<json>{field->default_value} : field->values;
    for (const auto& option : options) {
      json changed = current.spec;
      changed[key] = option;
      out.push_back({current.arch, changed});
    }
  }
  return out;
}

const Failure* same_way(const SpecResult& result, const Failure& target) {
  for (const auto& failure : result.failures)
    if (failure.signature() == target.signature()) return &failure;
  return nullptr;
}

}  // namespace

double spec_size(const Domain& domain, const std::string& arch, const json& spec) {
  double size = domain.arch_position(arch);
  if (!spec.is_object()) return size + 1000;
  for (const auto& [key, value] : spec.items()) size += 10 + value_cost(domain.field(key), value);
  return size;
}

Shrunk shrink(FuzzLanes& lanes, const Domain& domain, const DrawnSpec& failing, const Failure& failure) {
  Shrunk best{failing, {}, failure, 0, 0};
  double best_size = spec_size(domain, failing.arch, failing.spec);
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    std::vector<DrawnSpec> batch;
    for (auto& [arch, spec] : candidates(domain, best.spec)) {
      if (spec_size(domain, arch, spec) >= best_size) continue;
      DrawnSpec candidate = best.spec;
      candidate.arch = arch;
      candidate.spec = spec;
      batch.push_back(candidate);
    }
    if (batch.empty()) break;
    auto results = lanes.check(batch);
    best.evaluations += static_cast<int>(batch.size());
    long chosen = -1;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!same_way(results[i], failure)) continue;
      double size = spec_size(domain, batch[i].arch, batch[i].spec);
      if (size < best_size) best_size = size, chosen = static_cast<long>(i);
    }
    if (chosen < 0) break;
    best.spec = batch[chosen];
    best.result = results[chosen];
    best.failure = *same_way(results[chosen], failure);
    best.passes++;
  }
  if (best.passes == 0) best.result = lanes.check({best.spec})[0];  // the original's own results
  return best;
}

}  // namespace kemit::fuzz

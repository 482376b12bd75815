// Strict spec parsing shared by the families: unknown or mistyped fields are refusals.
// Mirrors py_engine/kemit/families/spec.py.
#include "kemit/families/spec.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kemit::families {

namespace {

// Python's str() of a JSON scalar as the families show it: strings bare, numbers as digits.
std::string plain_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::string json_kind(const nlohmann::json& value) {
  // A boolean first: Python's bool is an int, and nlohmann keeps them apart anyway.
  if (value.is_boolean()) return "boolean";
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  if (value.is_object()) return "object";
  return "null";
}

nlohmann::json parse_fields(const std::string& family, const nlohmann::json& raw, const std::vector<Field>& fields) {
  if (!raw.is_object())
    throw SpecError(fmt::format("{family} spec must be a JSON object (got {kind})", fmt::arg("family", family),
                                fmt::arg("kind", json_kind(raw))));
  std::vector<std::string> known;
  for (const auto& field : fields) known.push_back(field.name);
  std::sort(known.begin(), known.end());
  for (const auto& item : raw.items()) {  // nlohmann objects iterate in sorted key order
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      throw SpecError(fmt::format("unknown field '{key}' in {family} spec (known: {known})",
                                  fmt::arg("key", item.key()), fmt::arg("family", family),
                                  fmt::arg("known", fmt::join(known, ", "))));
  }
  nlohmann::json spec = nlohmann::json::object();
  for (const auto& field : fields) {
    auto found = raw.find(field.name);
    spec[field.name] = check_kind(field.name, field.kind, found == raw.end() ? field.default_value : *found);
  }
  return spec;
}

nlohmann::json check_kind(const std::string& name, const std::string& kind, const nlohmann::json& value) {
  std::string got = json_kind(value);
  if (kind == "int") {
    if (got != "number" || value.is_number_float())
      throw SpecError(fmt::format("field '{name}' must be an integer (got {got})", fmt::arg("name", name),
                                  fmt::arg("got", got != "number" ? got : "a fraction")));
    bool fits = value.is_number_unsigned() ? value.get<uint64_t>() < (uint64_t{1} << 31)
                                           : value.get<int64_t>() >= -(int64_t{1} << 31) &&
                                                 value.get<int64_t>() < (int64_t{1} << 31);
    if (!fits) throw SpecError(fmt::format("field '{name}' must fit in 32 bits", fmt::arg("name", name)));
  } else if (kind == "str" && got != "string") {
    throw SpecError(
        fmt::format("field '{name}' must be a string (got {got})", fmt::arg("name", name), fmt::arg("got", got)));
  } else if (kind == "bool" && got != "boolean") {
    throw SpecError(
        fmt::format("field '{name}' must be a boolean (got {got})", fmt::arg("name", name), fmt::arg("got", got)));
  }
  return value;
}

std::string one_of(const std::string& name, const nlohmann::json& value, const std::vector<nlohmann::json>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return "";
  std::string shown =
      value.is_string() ? fmt::format("'{value}'", fmt::arg("value", value.get<std::string>())) : plain_text(value);
  std::vector<std::string> names;
  for (const auto& item : allowed) names.push_back(plain_text(item));
  return fmt::format("{name} must be one of {allowed} (got {shown})", fmt::arg("name", name),
                     fmt::arg("allowed", fmt::join(names, ", ")), fmt::arg("shown", shown));
}

std::string first_reason(const std::vector<std::function<std::string()>>& checks) {
  for (const auto& check : checks) {
    std::string reason = check();
    if (!reason.empty()) return reason;
  }
  return "";
}

int64_t int_field(const nlohmann::json& spec, const char* name) { return spec.at(name).get<int64_t>(); }

std::string str_field(const nlohmann::json& spec, const char* name) { return spec.at(name).get<std::string>(); }

bool bool_field(const nlohmann::json& spec, const char* name) { return spec.at(name).get<bool>(); }

std::vector<nlohmann::json> json_list(const std::vector<std::string>& items) {
  return std::vector<nlohmann::json>(items.begin(), items.end());
}

std::vector<nlohmann::json> json_list(const std::vector<int>& items) {
  return std::vector<nlohmann::json>(items.begin(), items.end());
}

int bit_length(int value) {
  int bits = 0;
  for (; value > 0; value >>= 1) ++bits;
  return bits;
}

}  // namespace kemit::families

// Strict spec parsing shared by the families: unknown or mistyped fields are refusals.
// Mirrors py_engine/kemit/families/spec.py. A parsed spec is a JSON object holding every
// field of the family (defaults filled in), as the Python side holds a dict. The C++ families
// then read it once (their read_spec) into a typed `struct Spec`, one member per field: the C++
// representation of the same parsed spec, as ir::Type's enums are of Python's type strings
// (docs/architecture.md, "The mirror").
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::families {

// A spec the family refuses; `reason` is the refusal reason (part of the contract), whole: what()
// is a C string and would end it at a NUL byte that a field name may hold.
struct SpecError : std::invalid_argument {
  explicit SpecError(const std::string& text) : std::invalid_argument(text), reason(text) {}
  std::string reason;
};

// One field of a family's spec: kind is "int", "str" or "bool".
struct Field {
  std::string name;
  std::string kind;
  nlohmann::json default_value;
};

std::string json_kind(const nlohmann::json& value);
// Returns a full spec object. Checks run in a fixed order so both engines refuse with the
// same text: the spec's shape, unknown fields (sorted), then each field's type in
// declaration order.
nlohmann::json parse_fields(const std::string& family, const nlohmann::json& raw, const std::vector<Field>& fields);
nlohmann::json check_kind(const std::string& name, const std::string& kind, const nlohmann::json& value);
// "" when value is allowed, else the refusal text.
std::string one_of(const std::string& name, const nlohmann::json& value, const std::vector<nlohmann::json>& allowed);

// (field name, value) pairs: what a Python check takes as field names to look up in the dict.
using NamedValues = std::vector<std::pair<std::string, int64_t>>;

// The first non-empty reason of the ordered checks (each returns "" or a reason).
std::string first_reason(const std::vector<std::function<std::string()>>& checks);

// C++ stand-ins for what the Python families spell inline (no Python counterpart).
// spec[name] of a parsed spec (every int field fits in 32 bits once parsed): only the families'
// read_*_spec functions look a field up by name; everything else reads their typed Spec.
int64_t int_field(const nlohmann::json& spec, const char* name);
std::string str_field(const nlohmann::json& spec, const char* name);
bool bool_field(const nlohmann::json& spec, const char* name);
// A list of allowed values as one_of takes it.
std::vector<nlohmann::json> json_list(const std::vector<std::string>& items);
std::vector<nlohmann::json> json_list(const std::vector<int>& items);
// Python's int.bit_length().
int bit_length(int value);

}  // namespace kemit::families

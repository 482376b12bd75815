// The muparser expressions of parity/intents/<family>.json (docs/isa_profile.md, "Intents" and
// "Roofline"): each compiled once per run, and the spec names they may read.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <muParser.h>
#include <nlohmann/json.hpp>

namespace kemit::lane {

// A parser that knows the functions beyond muparser's own: `idiv(a, b)` (the integer quotient,
// rounded toward zero) and `mod(a, b)`, as the fuzzer's domains spell them (docs/fuzz.md).
void define_functions(mu::Parser& parser);

// The expression's value with every name it uses given by `value_of`; `used` gets each name and
// value. A name `value_of` does not know throws std::runtime_error naming it and `where`; muparser's
// own errors throw mu::Parser::exception_type. Not thread-safe (one compiled parser per text).
double evaluate(const std::string& expression,
                const std::function<std::optional<double>(const std::string&)>& value_of, const std::string& where,
                std::vector<std::pair<std::string, double>>& used);

// A spec name's value: the spec's numbers and booleans (1/0), then the family's defaults for the
// fields a config leaves out; `<field>_m`, `_n`, `_k` of a string field ending in a shape MxNxK;
// `<field>_bits` of a string field naming an element type (`f16` 16, `e4m3` 8); `<field>_is_<value>`
// (1 when the string field holds that value, else 0).
std::optional<double> spec_value(const nlohmann::json& spec, const nlohmann::json& defaults, const std::string& name);

// A spec string field's value, or the family's default for it ("" when neither has one).
std::string spec_text(const nlohmann::json& spec, const nlohmann::json& defaults, const std::string& field);

}  // namespace kemit::lane

// A family's spec space as data: parity/domains/<family>.json (docs/fuzz.md). Every spec field with
// its type, default, valid values or range, the values worth drawing and the boundary values worth
// hitting; the derived quantities and the cross-field rules a valid spec obeys, as expressions
// (muparser) over the fields, the attributes of string values and the processor's facts (hello's
// `arch_facts`: the harness keeps no arch table of its own).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/arch_facts.h"

namespace kemit::fuzz {

struct DomainError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class FieldType { integer, string, boolean };

struct FieldDomain {
  std::string name;
  FieldType type = FieldType::integer;
  nlohmann::json default_value;
  std::vector<nlohmann::json> values;  // the valid values, when the field is an enumeration
  std::optional<long long> min, max;   // the valid range of an integer field without `values`
  std::vector<nlohmann::json> draw;    // values worth drawing (integers with a range)
  std::vector<nlohmann::json> boundary;  // values at and past the boundaries (mostly invalid)
};

struct Rule {
  std::string name;  // a derived quantity's name, or the constraint's `why`
  std::string expression;
};

// What the domain says about one (arch, spec).
enum class Prediction { valid, invalid, malformed };
const char* prediction_name(Prediction prediction);

struct Judgement {
  Prediction prediction = Prediction::valid;
  std::string reason;  // why invalid or malformed; "" when valid
};

class Domain {
 public:
  // Parses one domain file's text; `display_path` names it in messages; `archs` are the processors
  // the engines serve, from their hello. Throws DomainError.
  Domain(const std::string& text, const std::string& display_path, std::vector<driver::ArchFacts> archs);
  ~Domain();
  Domain(Domain&&) noexcept;
  Domain& operator=(Domain&&) noexcept;

  const std::string& family() const { return family_; }
  const std::string& path() const { return path_; }
  const std::vector<FieldDomain>& fields() const { return fields_; }
  const FieldDomain* field(const std::string& name) const;
  const std::vector<driver::ArchFacts>& archs() const { return archs_; }
  // The processor's position in the engines' table (the table's size for an unknown one).
  int arch_position(const std::string& arch) const;

  // Valid, invalid (a field outside its values or range, or a rule broken: the first one named)
  // or malformed (not an object, an unknown field, a wrong type, an unknown processor).
  Judgement judge(const std::string& arch, const nlohmann::json& spec) const;

 private:
  struct Compiled;
  void compile();
  void find_slots();
  void set_variables(const std::string& arch, const nlohmann::json& spec) const;
  std::string family_, path_;
  std::vector<FieldDomain> fields_;
  std::vector<driver::ArchFacts> archs_;
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> attributes_;
  std::vector<Rule> derived_, constraints_;
  std::unique_ptr<Compiled> compiled_;
};

// Every parity/domains/<family>.json of `dir`, by family. Throws DomainError.
std::map<std::string, Domain> load_domains(const std::string& dir, const std::string& display_dir,
                                           const std::vector<driver::ArchFacts>& archs);

// "" when the JSON value has the field's type (and an integer fits in 32 bits), else what it is.
std::string type_problem(const FieldDomain& field, const nlohmann::json& value);

}  // namespace kemit::fuzz

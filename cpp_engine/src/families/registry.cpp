// The families this engine knows, by name. Mirrors py_engine/kemit/families/registry.py.
#include "kemit/families/registry.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

// Generated (cpp_engine/families.cmake): the header of each family, and KEMIT_FAMILIES(X), one
// X(name) per family.
#include "kemit/families/declared.h"

namespace kemit::families {

// What a family without an optional entry point finds in its place. A row calls each entry point by
// its plain name from inside the family's namespace, so the family's own declaration is found
// first and hides these; a call that lands here leaves the row's pointer null (optional_entry).
namespace absent {
struct Absent {};
template <typename... Args>
Absent flavor_gate(const Args&...);
template <typename... Args>
Absent build_module(const Args&...);
template <typename... Args>
Absent plan_module(const Args&...);
}  // namespace absent

namespace {

// The argument types of a row's pointer, to name what a call with them returns.
template <typename Pointer>
struct Signature;
template <typename Result, typename... Args>
struct Signature<Result (*)(Args...)> {
  template <typename Call>
  using result_of = std::invoke_result_t<Call, Args...>;
};

// The row's pointer to an optional entry point: the call, or nullptr where the family declares none.
template <typename Pointer, typename Call>
Pointer optional_entry(Call call) {
  if constexpr (std::is_convertible_v<Call, Pointer>) {
    return call;
  } else {
    static_assert(std::is_same_v<typename Signature<Pointer>::template result_of<Call>, absent::Absent>,
                  "a family declares an optional entry point with another signature than registry.h's Family");
    return nullptr;
  }
}

}  // namespace

// The row of family `name`, made inside its namespace. Each entry point reads the parsed spec once
// into the family's Spec (read_spec) and passes it on with the other arguments. The name in
// parentheses turns off argument-dependent lookup: a shared struct's namespace (gemm_core for
// MmaSpec) never stands in for the family's own function.
#define KEMIT_FAMILY_ROW(name)                                                                                 \
  namespace name {                                                                                             \
  Family registry_row() {                                                                                      \
    using namespace absent;                                                                                    \
    using nlohmann::json;                                                                                      \
    return {FAMILY,                                                                                            \
            parse_spec,                                                                                        \
            [](const json& spec) { return (kernel_name)(read_spec(spec)); },                                   \
            [](const json& spec, const target::Arch& arch) { return (validate)(read_spec(spec), arch); },      \
            [](const json& spec, const target::Arch& arch) { return (build)(read_spec(spec), arch); },         \
            optional_entry<decltype(Family::flavor_gate)>(                                                     \
                [](const json& spec, const target::Arch& arch, const llvm::Flavor& flavor) {                   \
                  return (flavor_gate)(read_spec(spec), arch, flavor);                                         \
                }),                                                                                            \
            optional_entry<decltype(Family::build_module)>(                                                    \
                [](const json& spec, const target::Arch& arch) { return (build_module)(read_spec(spec), arch); }), \
            optional_entry<decltype(Family::plan_module)>(                                                     \
                [](const json& spec, const target::Arch& arch, uint64_t buffer_range) {                        \
                  return (plan_module)(read_spec(spec), arch, buffer_range);                                   \
                })};                                                                                           \
  }                                                                                                            \
  }
KEMIT_FAMILIES(KEMIT_FAMILY_ROW)
#undef KEMIT_FAMILY_ROW

std::vector<Family> declared_families() {
  std::vector<Family> families;
  auto add = [&families](Family row, const std::string& file) {
    if (row.FAMILY != file)
      throw std::logic_error("family file " + file + ": FAMILY is '" + row.FAMILY + "'; a family's file is named for it");
    families.push_back(std::move(row));
  };
#define KEMIT_DECLARED(name) add(name::registry_row(), #name);
  KEMIT_FAMILIES(KEMIT_DECLARED)
#undef KEMIT_DECLARED
  return families;
}

const std::vector<Family>& FAMILIES() {
  static const std::vector<Family> table = declared_families();
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& family : FAMILIES()) names.push_back(family.FAMILY);
  std::sort(names.begin(), names.end());
  return names;
}

const Family& find_family(std::string_view name) {
  for (const auto& family : FAMILIES())
    if (family.FAMILY == name) return family;
  throw std::invalid_argument(fmt::format("unknown family '{name}' (known: {known})", fmt::arg("name", name),
                                          fmt::arg("known", fmt::join(family_names(), ", "))));
}

}  // namespace kemit::families

// Contract expressions of the launch plan (docs/contracts.md): decimal integers, size names,
// + - * / (floor division), ceil(a,b), min(a,b), max(a,b), parentheses; no spaces. Their meaning
// is mathematical integers, held here in 128 bits (a plan's sizes stay far below 2^60).
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kemit::proof {

using Int = __int128;

// Text that is not a plan: the plan parser prefixes the line (`line 3: ...`).
struct PlanError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Expr {
  enum class Kind { number, name, add, sub, mul, div, ceil, min, max };
  Kind kind = Kind::number;
  Int number = 0;
  std::string name;
  std::vector<Expr> args;  // two for every kind but number and name
};

// The expression `text`; PlanError naming the character where it stops being one.
Expr parse_expr(const std::string& text);
// Its text as the plan spells it.
std::string expr_text(const Expr& e);
// Every name it reads, in order of first appearance.
void expr_names(const Expr& e, std::vector<std::string>& names);
// Its value with every name bound; PlanError for a name without a value or a division by zero.
Int eval_expr(const Expr& e, const std::map<std::string, Int>& values);
// Decimal text of a 128-bit integer.
std::string int_text(Int value);

}  // namespace kemit::proof

#include "kemit/proof/expr.h"

#include <algorithm>
#include <cctype>

namespace kemit::proof {
namespace {

// Recursive descent over the grammar: sum := product (('+'|'-') product)*,
// product := atom (('*'|'/') atom)*, atom := number | name | fn '(' sum ',' sum ')' | '(' sum ')'.
class ExprParser {
 public:
  explicit ExprParser(const std::string& text) : text_(text) {}

  Expr parse() {
    if (text_.empty()) throw PlanError("an empty expression");
    Expr e = sum();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw PlanError("expression '" + text_ + "' at character " + std::to_string(pos_ + 1) + ": " + what);
  }
  bool next_is(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  void expect(char c) {
    if (!next_is(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  static Expr binary(Expr::Kind kind, Expr a, Expr b) {
    Expr e;
    e.kind = kind;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }
  Expr sum() {
    Expr e = product();
    while (next_is('+') || next_is('-')) {
      Expr::Kind kind = text_[pos_++] == '+' ? Expr::Kind::add : Expr::Kind::sub;
      e = binary(kind, std::move(e), product());
    }
    return e;
  }
  Expr product() {
    Expr e = atom();
    while (next_is('*') || next_is('/')) {
      Expr::Kind kind = text_[pos_++] == '*' ? Expr::Kind::mul : Expr::Kind::div;
      e = binary(kind, std::move(e), atom());
    }
    return e;
  }
  Expr atom() {
    if (next_is('(')) {
      ++pos_;
      Expr e = sum();
      expect(')');
      return e;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) return number();
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      return name_or_call();
    fail(pos_ < text_.size() ? "expected a number, a name or '('" : "the expression ends too early");
  }
  Expr number() {
    Expr e;
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (pos_ - start >= 30) fail("a number of more than 30 digits");
      e.number = e.number * 10 + (text_[pos_++] - '0');
    }
    return e;
  }
  Expr name_or_call() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string word = text_.substr(start, pos_ - start);
    if (!next_is('(')) {
      Expr e;
      e.kind = Expr::Kind::name;
      e.name = word;
      return e;
    }
    Expr::Kind kind;
    if (word == "ceil") kind = Expr::Kind::ceil;
    else if (word == "min") kind = Expr::Kind::min;
    else if (word == "max") kind = Expr::Kind::max;
    else fail("unknown function '" + word + "' (ceil, min, max)");
    ++pos_;
    Expr a = sum();
    expect(',');
    Expr b = sum();
    expect(')');
    return binary(kind, std::move(a), std::move(b));
  }

  const std::string& text_;
  size_t pos_ = 0;
};

Int floor_div(Int a, Int b) {
  Int q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

const char* operator_text(Expr::Kind kind) {
  switch (kind) {
    case Expr::Kind::add: return "+";
    case Expr::Kind::sub: return "-";
    case Expr::Kind::mul: return "*";
    case Expr::Kind::div: return "/";
    case Expr::Kind::ceil: return "ceil";
    case Expr::Kind::min: return "min";
    default: return "max";
  }
}

}  // namespace

Expr parse_expr(const std::string& text) { return ExprParser(text).parse(); }

std::string int_text(Int value) {
  if (value == 0) return "0";
  bool negative = value < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  while (magnitude > 0) {
    digits += static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  }
  if (negative) digits += '-';
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// Fully parenthesised below the top: the text is for reasons, and must read unambiguously.
std::string expr_text(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::number: return int_text(e.number);
    case Expr::Kind::name: return e.name;
    case Expr::Kind::ceil:
    case Expr::Kind::min:
    case Expr::Kind::max:
      return std::string(operator_text(e.kind)) + "(" + expr_text(e.args[0]) + "," + expr_text(e.args[1]) + ")";
    default: {
      auto side = [](const Expr& a) {
        bool simple = a.kind == Expr::Kind::number || a.kind == Expr::Kind::name || a.kind == Expr::Kind::ceil ||
                      a.kind == Expr::Kind::min || a.kind == Expr::Kind::max;
        return simple ? expr_text(a) : "(" + expr_text(a) + ")";
      };
      return side(e.args[0]) + operator_text(e.kind) + side(e.args[1]);
    }
  }
}

void expr_names(const Expr& e, std::vector<std::string>& names) {
  if (e.kind == Expr::Kind::name) {
    if (std::find(names.begin(), names.end(), e.name) == names.end()) names.push_back(e.name);
    return;
  }
  for (const Expr& a : e.args) expr_names(a, names);
}

Int eval_expr(const Expr& e, const std::map<std::string, Int>& values) {
  if (e.kind == Expr::Kind::number) return e.number;
  if (e.kind == Expr::Kind::name) {
    auto found = values.find(e.name);
    if (found == values.end()) throw PlanError("the name '" + e.name + "' has no value");
    return found->second;
  }
  Int a = eval_expr(e.args[0], values), b = eval_expr(e.args[1], values);
  switch (e.kind) {
    case Expr::Kind::add: return a + b;
    case Expr::Kind::sub: return a - b;
    case Expr::Kind::mul: return a * b;
    case Expr::Kind::min: return std::min(a, b);
    case Expr::Kind::max: return std::max(a, b);
    default:
      if (b == 0) throw PlanError("division by zero in '" + expr_text(e) + "'");
      return e.kind == Expr::Kind::div ? floor_div(a, b) : -floor_div(-a, b);
  }
}

}  // namespace kemit::proof

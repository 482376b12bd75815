// The canonical parser: canonical IR text back into a Kernel.
// Mirrors py_engine/kemit/ir/parser.py function for function, with the same error texts.
#include "kemit/ir/parser.h"
#include "name_lists.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <regex>
#include <set>

#include "kemit/ir/printer.h"

namespace kemit::ir {
namespace {

const std::regex KERNEL_LINE(R"(kernel @([a-z_][a-z0-9_]*) \{)");
const std::regex PARAM_LINE(R"(  param %([0-9]+) ([a-z_][a-z0-9_]*) : ([^{]+?)(?: \{(.*)\})?)");
const std::regex LDS_LINE(R"(  lds %([0-9]+) ([a-z_][a-z0-9_]*) : ([^\[]+)\[([0-9]+)\] \{align=([0-9]+)\})");
const std::regex OP_LINE(R"((?:%([0-9]+) = )?([a-z_0-9]+)((?: %[0-9]+(?:, %[0-9]+)*)?)(?: \{([^}]*)\})?(?: : (.+))?)");
const std::regex FOR_LINE(
    R"((?:(%[0-9]+(?:, %[0-9]+)*) = )?for %([0-9]+) = %([0-9]+) to %([0-9]+) step %([0-9]+)(?: iter\((.*)\))? \{)");
const std::regex ITER_PAIR(R"(%([0-9]+) = %([0-9]+) : (.+))");
const std::regex IF_LINE(R"(if %([0-9]+) \{)");
const std::regex YIELD_LINE(R"(yield((?: %[0-9]+(?:, %[0-9]+)*)?))");
const std::regex ARCH_LINE(R"(  arch [a-z0-9]+)");
const std::regex ATTR_KEY(R"([a-z_][a-z0-9_]*)");
const std::regex DECIMAL(R"(-?[0-9]+)");
const std::regex HEX_BITS(R"(0x[0-9A-F]+)");
const std::regex SHUFFLE_MASK(R"(\[[0-9]+(?:,[0-9]+)*\])");
// The op groups, from tables/ops.json.
std::vector<std::string> names_of_group(tables::OpGroup group) {
  std::vector<std::string> out;
  for (const auto& row : tables::OPS)
    if (row.group == group) out.emplace_back(row.name);
  return out;
}
std::vector<std::string> names_of(const tables::Names& names) { return {names.begin(), names.end()}; }
const std::vector<std::string> INT_BINARY = names_of_group(tables::OpGroup::int_binary);
const std::vector<std::string> INT_BINARY_FLAGS = [] {
  std::set<std::string> flags;  // sorted, each once
  for (const auto& row : tables::OPS)
    if (row.group == tables::OpGroup::int_binary) flags.insert(row.flags.begin(), row.flags.end());
  return std::vector<std::string>(flags.begin(), flags.end());
}();
const std::vector<std::pair<std::string, size_t>> FLOAT_OPS = [] {
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& row : tables::OPS)
    if (row.group == tables::OpGroup::float_math) out.emplace_back(row.name, static_cast<size_t>(row.operands));
  return out;
}();
const std::vector<std::string> COMPARES = names_of_group(tables::OpGroup::compare);
const std::vector<std::string> CASTS = names_of_group(tables::OpGroup::cast);
const std::vector<std::string> SPECIAL_REGISTERS = names_of_group(tables::OpGroup::special_register);

// name == the text of op `kind` (C++ only: Python compares with tables.OP).
bool is_op(const std::string& name, tables::OpKind kind) { return name == tables::op_name(kind); }
constexpr size_t MAX_DIGITS = 18;    // an integer attribute fits an int64
constexpr size_t MAX_ID_DIGITS = 9;  // an id, count or alignment fits an int32

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size())
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

std::string pad_of(int depth) { return std::string(2 * depth, ' '); }

// Attributes in text order, as a Python dict keeps them.
using AttrList = std::vector<std::pair<std::string, Attr>>;

const Attr* find_attr(const AttrList& attrs, const std::string& key) {
  for (const auto& [name, value] : attrs)
    if (name == key) return &value;
  return nullptr;
}

std::string attr_string(const Attr& attr) {
  return attr.kind == Attr::Kind::integer ? std::to_string(attr.integer) : attr.text;
}

// Recursive descent over the lines, building as it goes; line_number is the current line.
class Parser {
 public:
  explicit Parser(std::vector<std::string> lines) : lines(std::move(lines)) {}

  std::vector<std::string> lines;
  int line_number = 1;  // the header
  std::unique_ptr<Builder> b;
  std::vector<std::map<int, Value>> scopes = {{}};  // id -> Value per open region, innermost last

  std::string take() {
    if (line_number >= static_cast<int>(lines.size())) {
      line_number = static_cast<int>(lines.size()) + 1;
      fail("unexpected end of text");
    }
    ++line_number;
    return lines[line_number - 1];
  }

  const std::string* peek() const {
    return line_number < static_cast<int>(lines.size()) ? &lines[line_number] : nullptr;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError("line " + std::to_string(line_number) + ": " + message);
  }

  // ---- kernel ----
  Kernel kernel() {
    std::string head = take();
    std::smatch match;
    if (!std::regex_match(head, match, KERNEL_LINE)) fail("expected 'kernel @<name> {' (got '" + head + "')");
    std::string arch = take();
    if (!std::regex_match(arch, ARCH_LINE)) fail("expected '  arch <processor>' (got '" + arch + "')");
    b = std::make_unique<Builder>(match[1].str(), arch.substr(7));
    scopes = {{}};
    interface();
    std::string end = region(1);
    if (end != "}") fail("expected '}' to close the kernel (got '" + end + "')");
    return b->finish();
  }

  // attr, param and lds lines (their order is checked against the printer at the end).
  void interface() {
    while (peek() != nullptr) {
      std::string line = *peek();
      if (starts_with(line, "  attr ")) {
        take();
        std::string rest = line.substr(7);
        size_t space = rest.find(' ');
        std::string key = space == std::string::npos ? rest : rest.substr(0, space);
        std::string value = space == std::string::npos ? "" : rest.substr(space + 1);
        b->attr(key, value);
      } else if (starts_with(line, "  param ")) {
        take();
        param(line);
      } else if (starts_with(line, "  lds ")) {
        take();
        lds(line);
      } else {
        return;
      }
    }
  }

  void param(const std::string& line);
  void lds(const std::string& line);
  std::string region(int depth);
  void open_scope() { scopes.emplace_back(); }
  void close_scope() { scopes.pop_back(); }
  void for_op(const std::string& head, int depth);
  void if_op(const std::string& head, int depth);
  bool has_else(int depth) const;
  void op(const std::string& text);
  Value use(const std::string& token);
  void define(const Value& value, const std::string& token, int at_line = 0);
};

int number(const Parser& parser, const std::string& token) {
  std::string digits = token[0] == '%' ? token.substr(1) : token;
  if (digits.size() > MAX_ID_DIGITS)
    parser.fail("number " + digits + " has more than " + std::to_string(MAX_ID_DIGITS) + " digits");
  return std::stoi(digits);
}

// `a, b=1, c=x` -> a flag, an integer, a text; a decimal value is an integer.
AttrList parse_attrs(const Parser& parser, const std::string& text) {
  AttrList attrs;
  for (const auto& item : split(text, ", ")) {
    size_t equals = item.find('=');
    std::string key = item.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : item.substr(equals + 1);
    if (!std::regex_match(key, ATTR_KEY) || find_attr(attrs, key) || (equals != std::string::npos && value.empty()))
      parser.fail("malformed attribute '" + item + "'");
    bool decimal = std::regex_match(value, DECIMAL);
    if (equals != std::string::npos && decimal && value.size() - (value[0] == '-') > MAX_DIGITS)
      parser.fail("attribute value " + value + " has more than " + std::to_string(MAX_DIGITS) + " digits");
    if (equals == std::string::npos)
      attrs.emplace_back(key, Attr::flag());
    else if (decimal)
      attrs.emplace_back(key, Attr::of(static_cast<int64_t>(std::stoll(value))));
    else
      attrs.emplace_back(key, Attr::of(value));
  }
  return attrs;
}

void Parser::param(const std::string& line) {
  std::smatch match;
  if (!std::regex_match(line, match, PARAM_LINE))
    fail("expected '  param %<id> <name> : <type>[ {attrs}]' (got '" + line + "')");
  AttrList attrs = match[4].matched ? parse_attrs(*this, match[4].str()) : AttrList{};
  std::map<std::string, bool> flags;
  for (const char* key : {"noalias", "nocapture", "readonly", "writeonly"}) {
    auto at = std::find_if(attrs.begin(), attrs.end(), [&](const auto& item) { return item.first == key; });
    if (at == attrs.end()) continue;
    flags[key] = at->second.kind == Attr::Kind::flag;
    attrs.erase(at);
  }
  Attr align = Attr::of(int64_t{0});
  auto at = std::find_if(attrs.begin(), attrs.end(), [](const auto& item) { return item.first == "align"; });
  if (at != attrs.end()) {
    align = at->second;
    attrs.erase(at);
  }
  bool all_flags = std::all_of(flags.begin(), flags.end(), [](const auto& item) { return item.second; });
  if (!attrs.empty() || !all_flags || align.kind != Attr::Kind::integer)
    fail("param attributes are align=N, noalias, nocapture, readonly, writeonly (got '" + match[4].str() + "')");
  Value value = b->param(match[2].str(), parse_type(match[3].str()), align.integer, flags.count("noalias") > 0,
                         flags.count("nocapture") > 0, flags.count("readonly") > 0, flags.count("writeonly") > 0);
  define(value, match[1].str());
}

void Parser::lds(const std::string& line) {
  std::smatch match;
  if (!std::regex_match(line, match, LDS_LINE))
    fail("expected '  lds %<id> <name> : <type>[<count>] {align=N}' (got '" + line + "')");
  Type element = parse_type(match[3].str());
  int count = number(*this, match[4].str());
  int align = number(*this, match[5].str());
  Value value = b->lds(match[2].str(), element, count, align);
  define(value, match[1].str());
}

// Ops indented by `depth` levels up to the line that ends the region, which it returns: the
// closing brace, `} else {`, or a yield (with its indentation stripped).
std::string Parser::region(int depth) {
  std::string pad = pad_of(depth), closing = pad_of(depth - 1) + "}";
  while (true) {
    std::string line = take();
    if (line == closing || line == closing + " else {") return line.substr(2 * (depth - 1));
    if (!starts_with(line, pad) || starts_with(line.substr(pad.size()), " "))
      fail("expected an op indented by " + std::to_string(pad.size()) + " spaces or '" + closing + "' (got '" +
           line + "')");
    std::string text = line.substr(pad.size());
    if (std::regex_match(text, YIELD_LINE)) return text;
    if (std::regex_match(text, FOR_LINE))
      for_op(text, depth);
    else if (std::regex_match(text, IF_LINE))
      if_op(text, depth);
    else
      op(text);
  }
}

void Parser::for_op(const std::string& head, int depth) {
  std::smatch match;
  std::regex_match(head, match, FOR_LINE);
  int head_line = line_number;
  Value lo = use(match[3].str());
  Value hi = use(match[4].str());
  Value step = use(match[5].str());
  std::vector<std::pair<std::string, std::string>> pair_ids;  // (arg, init) of each iter pair
  if (match[6].matched) {
    for (const auto& text : split(match[6].str(), ", ")) {
      std::smatch pair;
      if (!std::regex_match(text, pair, ITER_PAIR))
        fail("expected 'iter(%<arg> = %<init> : <type>, ...)' (got 'iter(" + match[6].str() + ")')");
      pair_ids.emplace_back(pair[1].str(), pair[2].str());
    }
  }
  std::vector<Value> inits;
  for (const auto& [arg, init] : pair_ids) inits.push_back(use(init));
  std::string iv_token = match[2].str();
  std::string names_text = match[1].matched ? match[1].str() : "";

  auto body = [&](const Value& iv, const std::vector<Value>& iters) {
    open_scope();
    define(iv, iv_token);
    for (size_t i = 0; i < iters.size() && i < pair_ids.size(); ++i) define(iters[i], pair_ids[i].first);
    std::string end = region(depth + 1);
    if (!std::regex_match(end, YIELD_LINE)) fail("a for body must end with 'yield[ %v, ...]'");
    std::vector<Value> yields;
    if (end != tables::op_name(tables::OpKind::yield_values))
      for (const auto& token : split(end.substr(6), ", ")) yields.push_back(use(token));
    close_scope();
    std::string closing = take();
    if (closing != pad_of(depth) + "}")
      fail("expected '" + pad_of(depth) + "}' after the yield (got '" + closing + "')");
    return yields;
  };

  std::vector<Value> results = b->for_loop(lo, hi, step, inits, body);
  std::vector<std::string> names = names_text.empty() ? std::vector<std::string>{} : split(names_text, ", ");
  if (names.size() != results.size())
    throw ParseError("line " + std::to_string(head_line) + ": the for has " + std::to_string(results.size()) +
                     " result(s), the text names " + std::to_string(names.size()));
  for (size_t i = 0; i < results.size(); ++i) define(results[i], names[i], head_line);
}

void Parser::if_op(const std::string& head, int depth) {
  std::smatch match;
  std::regex_match(head, match, IF_LINE);
  Value cond = use(match[1].str());
  std::vector<std::string> ends;
  auto then_body = [&]() {
    open_scope();
    ends.push_back(region(depth + 1));
    close_scope();
  };
  auto else_body = [&]() {
    open_scope();
    ends.push_back(region(depth + 1));
    close_scope();
  };
  if (has_else(depth))
    b->if_then_else(cond, then_body, else_body);
  else
    b->if_then(cond, then_body);
  for (const auto& end : ends)
    if (end != "}" && end != "} else {") fail("yield outside a for body's last line");
}

// Whether the if opened on the current line (indented `depth` levels) has an else: its region
// ends at the first later line indented `depth` levels or less.
bool Parser::has_else(int depth) const {
  std::string pad = pad_of(depth);
  for (size_t i = line_number; i < lines.size(); ++i)
    if (!starts_with(lines[i], pad + "  ")) return lines[i] == pad + "} else {";
  return false;
}

std::optional<Value> build_op(Parser& parser, const std::string& name, const std::vector<Value>& operands,
                              const AttrList& attrs, const std::optional<Type>& result_type);

void Parser::op(const std::string& text) {
  std::smatch match;
  if (!std::regex_match(text, match, OP_LINE))
    fail("expected '[%<id> = ]<op>[ %<id>, ...][ {attrs}][ : <type>]' (got '" + text + "')");
  std::string name = match[2].str(), operand_text = match[3].str();
  std::vector<Value> operands;
  if (!operand_text.empty())
    for (const auto& token : split(operand_text.substr(1), ", ")) operands.push_back(use(token));
  AttrList attrs = match[4].matched ? parse_attrs(*this, match[4].str()) : AttrList{};
  if (match[1].matched != match[5].matched)
    fail("an op with a result needs both '%<id> = ' and ' : <type>' (got '" + text + "')");
  std::optional<Type> result_type;
  if (match[5].matched) result_type = parse_type(match[5].str());
  std::optional<Value> value = build_op(*this, name, operands, attrs, result_type);
  if (value.has_value() != match[1].matched)
    fail(name + " " + (value.has_value() ? "has a" : "has no") + " result");
  if (value) define(*value, match[1].str());
}

Value Parser::use(const std::string& token) {
  int wanted = number(*this, token);
  for (auto scope = scopes.rbegin(); scope != scopes.rend(); ++scope) {
    auto found = scope->find(wanted);
    if (found != scope->end()) return found->second;
  }
  fail("%" + std::to_string(wanted) + " is not defined here");
}

void Parser::define(const Value& value, const std::string& token, int at_line) {
  int given = number(*this, token);
  if (value.id != given)
    throw ParseError("line " + std::to_string(at_line ? at_line : line_number) + ": value %" + std::to_string(given) +
                     " is out of order (the next id is %" + std::to_string(value.id) + ")");
  scopes.back()[given] = value;
}

// The op's operand count and attribute keys; a flag takes no value, a required key does.
void expect_shape(const Parser& parser, const std::string& name, const std::vector<Value>& operands, size_t count,
                  const AttrList& attrs, const std::vector<std::string>& required,
                  const std::vector<std::string>& flags = {}) {
  if (operands.size() != count)
    parser.fail(name + " takes " + std::to_string(count) + " operand(s) (got " + std::to_string(operands.size()) + ")");
  for (const auto& key : required) {
    const Attr* attr = find_attr(attrs, key);
    if (!attr || attr->kind == Attr::Kind::flag) parser.fail(name + " needs attribute " + key + "=<value>");
  }
  for (const auto& [key, value] : attrs)
    if (!contains(required, key) && (!contains(flags, key) || value.kind != Attr::Kind::flag))
      parser.fail(name + " does not take attribute '" + key + "'");
}

int int_attr(const Parser& parser, const std::string& name, const AttrList& attrs, const std::string& key) {
  const Attr& value = *find_attr(attrs, key);
  if (value.kind != Attr::Kind::integer || value.integer < -(int64_t{1} << 31) || value.integer >= (int64_t{1} << 31))
    parser.fail(name + " attribute " + key + " must be a 32-bit integer (got " + attr_string(value) + ")");
  return static_cast<int>(value.integer);
}

std::string text_attr(const AttrList& attrs, const std::string& key) { return attr_string(*find_attr(attrs, key)); }

Type need_type(const Parser& parser, const std::string& name, const std::optional<Type>& result_type) {
  if (!result_type) parser.fail(name + " needs a result type");
  return *result_type;
}

// The float whose bit pattern in scalar float type t is `bits`.
double bits_to_float(const Type& t, uint64_t bits) {
  float f = 0;
  if (t.name == ScalarKind::f32 || t.name == ScalarKind::bf16) {
    uint32_t word = t.name == ScalarKind::f32 ? static_cast<uint32_t>(bits) : static_cast<uint32_t>((bits & 0xFFFF) << 16);
    std::memcpy(&f, &word, 4);
    return f;
  }
  uint32_t half = bits & 0xFFFF, sign = half >> 15, exponent = (half >> 10) & 0x1F, mantissa = half & 0x3FF;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? std::nan("") : HUGE_VAL;
  else
    magnitude = std::ldexp(static_cast<double>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

std::optional<Value> build_other_op(Parser& parser, const std::string& name, const std::vector<Value>& operands,
                                    const AttrList& attrs, const std::optional<Type>& result_type);

// Call the builder method of op `name`; its result value, or nothing (store, barrier).
std::optional<Value> build_op(Parser& parser, const std::string& name, const std::vector<Value>& operands,
                              const AttrList& attrs, const std::optional<Type>& result_type) {
  Builder& b = *parser.b;
  if (is_op(name, tables::OpKind::constant)) {
    expect_shape(parser, name, operands, 0, attrs, {"value"});
    Type t = need_type(parser, name, result_type);
    const Attr& value = *find_attr(attrs, "value");
    if (is_int(t) && value.kind == Attr::Kind::integer) return b.const_int(t, value.integer);
    if (!is_int(t) && value.kind == Attr::Kind::text && std::regex_match(value.text, HEX_BITS) &&
        value.text.size() <= 10)
      return b.const_float(t, bits_to_float(element_type(t), std::stoull(value.text.substr(2), nullptr, 16)));
    parser.fail("const value " + attr_string(value) + " does not suit " + type_text(t));
  }
  if (contains(SPECIAL_REGISTERS, name)) {
    expect_shape(parser, name, operands, 0, attrs, {"dim"});
    std::string dim = text_attr(attrs, "dim");
    if (is_op(name, tables::OpKind::workitem_id)) return b.workitem_id(dim);
    if (is_op(name, tables::OpKind::workgroup_id)) return b.workgroup_id(dim);
    return b.num_workgroups(dim);
  }
  if (contains(INT_BINARY, name)) {
    expect_shape(parser, name, operands, 2, attrs, {}, INT_BINARY_FLAGS);
    Flags flags;
    for (const auto& item : attrs) flags.push_back(item.first);
    std::sort(flags.begin(), flags.end());
    const Value &x = operands[0], &y = operands[1];
    if (tables::find_op(name)->flags.size == 0) {
      if (!flags.empty()) parser.fail(name + " does not take attribute '" + std::string(flags[0]) + "'");
      if (is_op(name, tables::OpKind::udiv)) return b.udiv(x, y);
      if (is_op(name, tables::OpKind::urem)) return b.urem(x, y);
      if (is_op(name, tables::OpKind::lshr)) return b.lshr(x, y);
      return b.bit_and(x, y);
    }
    if (is_op(name, tables::OpKind::add)) return b.add(x, y, flags);
    if (is_op(name, tables::OpKind::sub)) return b.sub(x, y, flags);
    if (is_op(name, tables::OpKind::mul)) return b.mul(x, y, flags);
    if (is_op(name, tables::OpKind::shl)) return b.shl(x, y, flags);
    return b.bit_or(x, y, flags);
  }
  for (const auto& [float_op, count] : FLOAT_OPS) {
    if (name != float_op) continue;
    expect_shape(parser, name, operands, count, attrs, {});
    if (is_op(name, tables::OpKind::fadd)) return b.fadd(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fsub)) return b.fsub(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fmul)) return b.fmul(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fdiv)) return b.fdiv(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fmax)) return b.fmax(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fmin)) return b.fmin(operands[0], operands[1]);
    if (is_op(name, tables::OpKind::fma)) return b.fma(operands[0], operands[1], operands[2]);
    if (is_op(name, tables::OpKind::fneg)) return b.fneg(operands[0]);
    if (is_op(name, tables::OpKind::exp)) return b.exp(operands[0]);
    return b.sqrt(operands[0]);
  }
  if (contains(COMPARES, name)) {
    expect_shape(parser, name, operands, 2, attrs, {"pred"});
    std::string pred = text_attr(attrs, "pred");
    return is_op(name, tables::OpKind::icmp) ? b.icmp(pred, operands[0], operands[1]) : b.fcmp(pred, operands[0], operands[1]);
  }
  if (is_op(name, tables::OpKind::select)) {
    expect_shape(parser, name, operands, 3, attrs, {});
    return b.select(operands[0], operands[1], operands[2]);
  }
  if (contains(CASTS, name)) {
    expect_shape(parser, name, operands, 1, attrs, {},
                 names_of(tables::find_op(name)->flags));
    Type t = need_type(parser, name, result_type);
    if (is_op(name, tables::OpKind::zext)) return b.zext(operands[0], t, find_attr(attrs, "nneg") != nullptr);
    if (is_op(name, tables::OpKind::sext)) return b.sext(operands[0], t);
    if (is_op(name, tables::OpKind::trunc)) return b.trunc(operands[0], t);
    if (is_op(name, tables::OpKind::fpext)) return b.fpext(operands[0], t);
    if (is_op(name, tables::OpKind::fptrunc)) return b.fptrunc(operands[0], t);
    if (is_op(name, tables::OpKind::sitofp)) return b.sitofp(operands[0], t);
    return b.fptosi(operands[0], t);
  }
  return build_other_op(parser, name, operands, attrs, result_type);
}

// Memory, vector element, cross-lane and matrix ops.
std::optional<Value> build_other_op(Parser& parser, const std::string& name, const std::vector<Value>& operands,
                                    const AttrList& attrs, const std::optional<Type>& result_type) {
  Builder& b = *parser.b;
  if (is_op(name, tables::OpKind::ptr_add)) {
    expect_shape(parser, name, operands, 2, attrs, {"element"});
    return b.ptr_add(operands[0], operands[1], parse_type(text_attr(attrs, "element")));
  }
  if (is_op(name, tables::OpKind::load)) {
    expect_shape(parser, name, operands, 1, attrs, {"align"});
    Type t = need_type(parser, name, result_type);
    return b.load(t, operands[0], int_attr(parser, name, attrs, "align"));
  }
  if (is_op(name, tables::OpKind::store)) {
    expect_shape(parser, name, operands, 2, attrs, {"align"});
    b.store(operands[0], operands[1], int_attr(parser, name, attrs, "align"));
    return std::nullopt;
  }
  if (is_op(name, tables::OpKind::atomic_add)) {
    expect_shape(parser, name, operands, 2, attrs, {"align", "order", "scope"});
    return b.atomic_add(operands[0], operands[1], text_attr(attrs, "order"), text_attr(attrs, "scope"),
                        int_attr(parser, name, attrs, "align"));
  }
  if (is_op(name, tables::OpKind::barrier)) {
    expect_shape(parser, name, operands, 0, attrs, {});
    b.barrier();
    return std::nullopt;
  }
  if (is_op(name, tables::OpKind::readfirstlane)) {
    expect_shape(parser, name, operands, 1, attrs, {});
    return b.readfirstlane(operands[0]);
  }
  if (is_op(name, tables::OpKind::extract_element)) {
    expect_shape(parser, name, operands, 1, attrs, {"index"});
    return b.extract_element(operands[0], int_attr(parser, name, attrs, "index"));
  }
  if (is_op(name, tables::OpKind::insert_element)) {
    expect_shape(parser, name, operands, 2, attrs, {"index"});
    return b.insert_element(operands[0], operands[1], int_attr(parser, name, attrs, "index"));
  }
  if (is_op(name, tables::OpKind::shuffle)) {
    expect_shape(parser, name, operands, 2, attrs, {"mask"});
    std::string mask = text_attr(attrs, "mask");
    if (!std::regex_match(mask, SHUFFLE_MASK)) parser.fail("shuffle mask must be [m0,m1,...] (got " + mask + ")");
    std::vector<int> lanes_of_mask;
    for (const auto& item : split(mask.substr(1, mask.size() - 2), ",")) {
      if (item.size() > MAX_ID_DIGITS) parser.fail("number " + item + " has more than 9 digits");
      lanes_of_mask.push_back(std::stoi(item));
    }
    return b.shuffle(operands[0], operands[1], lanes_of_mask);
  }
  if (is_op(name, tables::OpKind::bpermute)) {
    expect_shape(parser, name, operands, 2, attrs, {});
    return b.bpermute(operands[0], operands[1]);
  }
  if (is_op(name, tables::OpKind::update_dpp)) {
    expect_shape(parser, name, operands, 2, attrs, {"ctrl"});
    return b.update_dpp(operands[0], operands[1], int_attr(parser, name, attrs, "ctrl"));
  }
  if (is_op(name, tables::OpKind::mma)) {
    expect_shape(parser, name, operands, 3, attrs, {"instr"});
    return b.mma(text_attr(attrs, "instr"), operands[0], operands[1], operands[2]);
  }
  parser.fail("unknown op '" + name + "'");
}

}  // namespace

Kernel parse_kernel(const std::string& text) {
  std::vector<Kernel> kernels = parse_module(text);
  if (kernels.size() != 1)
    throw ParseError("line " + std::to_string(std::count(text.begin(), text.end(), '\n')) +
                     ": expected one kernel, the text has " + std::to_string(kernels.size()));
  return kernels[0];
}

std::vector<Kernel> parse_module(const std::string& text) {
  std::vector<std::string> lines = split(text, "\n");
  if (lines[0] + "\n" != HEADER)
    throw ParseError("line 1: expected the header '" + std::string(HEADER).substr(0, std::strlen(HEADER) - 1) + "'");
  if (!lines.back().empty())
    throw ParseError("line " + std::to_string(lines.size()) + ": the text must end with a newline");
  lines.pop_back();
  Parser parser(lines);
  std::vector<Kernel> kernels;
  try {
    while (parser.peek() != nullptr || kernels.empty()) kernels.push_back(parser.kernel());
  } catch (const ParseError&) {
    throw;
  } catch (const BuildError& error) {
    throw ParseError("line " + std::to_string(parser.line_number) + ": " + error.what());
  } catch (const TypeError& error) {
    throw ParseError("line " + std::to_string(parser.line_number) + ": " + error.what());
  }
  check_canonical(kernels, text);
  return kernels;
}

void check_canonical(const std::vector<Kernel>& kernels, const std::string& text) {
  std::string printed = HEADER;
  for (const auto& kernel : kernels) printed += print_kernel(kernel).substr(std::strlen(HEADER));
  if (printed == text) return;
  std::vector<std::string> mine = split(printed, "\n"), theirs = split(text, "\n");
  for (size_t i = 0; i < std::min(mine.size(), theirs.size()); ++i)
    if (mine[i] != theirs[i])
      throw ParseError("line " + std::to_string(i + 1) + ": not canonical: the printer writes '" + mine[i] + "'");
  throw ParseError("line " + std::to_string(std::min(mine.size(), theirs.size())) +
                   ": not canonical: the printer writes " + std::to_string(mine.size() - 1) +
                   " line(s), the text has " + std::to_string(theirs.size() - 1));
}

}  // namespace kemit::ir

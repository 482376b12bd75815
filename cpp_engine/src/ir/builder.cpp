// The builder: the only way to make IR. Mirrors py_engine/kemit/ir/builder.py.
#include "kemit/ir/builder.h"
#include "name_lists.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kemit::ir {

const std::vector<std::string> DIMS = {"x", "y", "z"};
const std::vector<MmaInstruction> MMA_INSTRUCTIONS = [] {
  std::vector<MmaInstruction> out;
  for (const auto& row : tables::MMA_INSTRUCTIONS)
    out.push_back({std::string(row.name), std::string(row.operand), std::string(row.accumulator), row.wave_size});
  return out;
}();

namespace {

// An op's name as text, for error messages.
std::string text_of(OpKind name) { return std::string(tables::op_name(name)); }

// Python's _NAME: [a-z_][a-z0-9_]*\Z
bool is_name(const std::string& text) {
  if (text.empty() || !((text[0] >= 'a' && text[0] <= 'z') || text[0] == '_')) return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

// Python's _RESERVED_NAME: v[0-9]+\Z
bool is_reserved_name(const std::string& text) {
  return text.size() >= 2 && text[0] == 'v' &&
         std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// [A-Za-z0-9_.,:-]+\Z
bool is_attr_value(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::strchr("_.,:-", c) != nullptr;
  });
}

uint32_t f32_bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::string hex_digits(uint32_t bits, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*X", digits, bits);
  return text;
}

}  // namespace

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest round-tripping digits (what Python's repr chooses), then Python's layout:
  // exponent form when the decimal point sits below -4 or above 16 digits.
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*e", precision - 1, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  std::string all(text);
  std::string sign = all[0] == '-' ? "-" : "";
  size_t e = all.find('e');
  std::string digits;
  for (size_t i = sign.size(); i < e; ++i)
    if (all[i] != '.') digits += all[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = std::atoi(all.c_str() + e + 1);
  int point = exponent + 1;
  if (point <= -4 || point > 16) {
    std::string out = sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char tail[16];
    std::snprintf(tail, sizeof tail, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + tail;
  }
  if (point <= 0) return sign + "0." + std::string(-point, '0') + digits;
  if (point >= static_cast<int>(digits.size()))
    return sign + digits + std::string(point - digits.size(), '0') + ".0";
  return sign + digits.substr(0, point) + "." + digits.substr(point);
}

uint32_t float_bits(const Type& t, double value) {
  float narrowed = static_cast<float>(value);
  if (std::isinf(narrowed) && std::isfinite(value))  // finite but beyond f32's range
    throw BuildError(fmt::format("constant {value} is not exact in {dtype}", fmt::arg("value", float_repr(value)),
                                 fmt::arg("dtype", scalar_name(t.name))));
  uint32_t f32 = f32_bits_of(narrowed);
  if (static_cast<double>(narrowed) != value)
    throw BuildError(fmt::format("constant {value} is not exact in {dtype}", fmt::arg("value", float_repr(value)),
                                 fmt::arg("dtype", scalar_name(t.name))));
  if (t.name == ScalarKind::f32) return f32;
  if (t.name == ScalarKind::bf16) {
    if (f32 & 0xFFFF)
      throw BuildError(fmt::format("constant {value} is not exact in bf16", fmt::arg("value", float_repr(value))));
    return f32 >> 16;
  }
  uint32_t sign = f32 >> 31, exponent = (f32 >> 23) & 0xFF, mantissa = f32 & 0x7FFFFF;
  if (exponent == 0 && mantissa == 0) return sign << 15;
  int unbiased = static_cast<int>(exponent) - 127;
  if (!(-14 <= unbiased && unbiased <= 15) || (mantissa & 0x1FFF))
    throw BuildError(fmt::format("constant {value} is not exact in f16", fmt::arg("value", float_repr(value))));
  return (sign << 15) | ((unbiased + 15) << 10) | (mantissa >> 13);
}

bool is_power_of_two(int64_t n) { return n >= 1 && (n & (n - 1)) == 0; }

Builder::Builder(const std::string& name, const std::string& arch) {
  if (!is_name(name))
    throw BuildError(fmt::format("kernel name '{name}' must match [a-z_][a-z0-9_]*", fmt::arg("name", name)));
  _kernel.name = name;
  _kernel.arch = arch;
  _regions.push_back(&_kernel.body);
}

// ---- kernel interface -------------------------------------------------------------------
void Builder::attr(const std::string& key, const std::string& value) {
  if (!is_name(key) || !is_attr_value(value))
    throw BuildError(fmt::format("kernel attribute {key}={value} has characters outside the canonical set",
                                 fmt::arg("key", key), fmt::arg("value", value)));
  for (auto& entry : _kernel.attrs)
    if (entry.first == key) {
      entry.second = value;
      return;
    }
  _kernel.attrs.emplace_back(key, value);
}

Value Builder::param(const std::string& name, const Type& t, int64_t align, bool noalias, bool nocapture,
                     bool readonly, bool writeonly) {
  _check_new_name(name);
  if (_next_id != static_cast<int>(_kernel.params.size()))
    throw BuildError(fmt::format("param '{name}' must be declared before LDS buffers and ops", fmt::arg("name", name)));
  const std::pair<AttrKey, bool> flags[] = {
      {"noalias", noalias}, {"nocapture", nocapture}, {"readonly", readonly}, {"writeonly", writeonly}};
  bool any_flag = noalias || nocapture || readonly || writeonly;
  if (t.kind != TypeKind::pointer && (align || any_flag))
    throw BuildError(fmt::format("param '{name}': align and memory flags need a pointer (got {type})",
                                 fmt::arg("name", name), fmt::arg("type", type_text(t))));
  if (align && !is_power_of_two(align))
    throw BuildError(fmt::format("param '{name}': align must be a power of two (got {align})", fmt::arg("name", name),
                                 fmt::arg("align", align)));
  Attrs attrs;
  for (const auto& [key, on] : flags)
    if (on) attrs[key] = Attr::flag();
  if (align) attrs["align"] = Attr::of(align);
  Value value = _new_value(t);
  _kernel.params.push_back(Param{value, name, attrs});
  return value;
}

Value Builder::lds(const std::string& name, const Type& element, int count, int align) {
  _check_new_name(name);
  if (element.kind == TypeKind::pointer || count < 1)
    throw BuildError(
        fmt::format("LDS buffer '{name}' needs a scalar or vector element and a count >= 1", fmt::arg("name", name)));
  if (!is_power_of_two(align))
    throw BuildError(fmt::format("LDS buffer '{name}': align must be a power of two (got {align})",
                                 fmt::arg("name", name), fmt::arg("align", align)));
  Value value = _new_value(Type{TypeKind::pointer, ScalarKind{}, 0, AddressSpace::lds});
  _kernel.lds.push_back(LdsBuffer{value, name, element, count, align});
  return value;
}

Kernel Builder::finish() {
  if (_regions.size() != 1) throw BuildError("finish() inside an open region");
  // C++ moves the kernel out instead of copying every op: the builder is spent afterwards.
  return std::move(_kernel);
}

// ---- constants and special registers ------------------------------------------------------
Value Builder::const_int(const Type& t, int64_t value) {
  if (!is_int(t))
    throw BuildError(fmt::format("const_int needs an integer type (got {type})", fmt::arg("type", type_text(t))));
  int bits = scalar_bits(element_type(t));
  bool fits = bits == 64 || (-(int64_t{1} << (bits - 1)) <= value && value < (int64_t{1} << bits));
  if (!fits)
    throw BuildError(
        fmt::format("constant {value} does not fit {type}", fmt::arg("value", value), fmt::arg("type", type_text(t))));
  return *_emit(OpKind::constant, {}, t, {{"value", Attr::of(value)}});
}

Value Builder::const_float(const Type& t, double value) {
  if (!is_float(t))
    throw BuildError(fmt::format("const_float needs a float type (got {type})", fmt::arg("type", type_text(t))));
  uint32_t bits = float_bits(element_type(t), value);
  int digits = scalar_bits(element_type(t)) / 4;
  return *_emit(OpKind::constant, {}, t, {{"value", Attr::of(hex_digits(bits, digits))}});
}

Value Builder::workitem_id(const std::string& dim) {
  return *_emit(OpKind::workitem_id, {}, scalar(ScalarKind::i32), {{"dim", Attr::of(_dim(dim))}});
}

Value Builder::workgroup_id(const std::string& dim) {
  return *_emit(OpKind::workgroup_id, {}, scalar(ScalarKind::i32), {{"dim", Attr::of(_dim(dim))}});
}

Value Builder::num_workgroups(const std::string& dim) {
  return *_emit(OpKind::num_workgroups, {}, scalar(ScalarKind::i32), {{"dim", Attr::of(_dim(dim))}});
}

// ---- integer and float arithmetic -----------------------------------------------------------
Value Builder::add(const Value& a, const Value& b, const Flags& flags) { return _int_binary(OpKind::add, a, b, flags); }
Value Builder::sub(const Value& a, const Value& b, const Flags& flags) { return _int_binary(OpKind::sub, a, b, flags); }
Value Builder::mul(const Value& a, const Value& b, const Flags& flags) { return _int_binary(OpKind::mul, a, b, flags); }
Value Builder::udiv(const Value& a, const Value& b) { return _int_binary(OpKind::udiv, a, b, {}); }
Value Builder::urem(const Value& a, const Value& b) { return _int_binary(OpKind::urem, a, b, {}); }
Value Builder::shl(const Value& a, const Value& b, const Flags& flags) { return _int_binary(OpKind::shl, a, b, flags); }
Value Builder::lshr(const Value& a, const Value& b) { return _int_binary(OpKind::lshr, a, b, {}); }
Value Builder::bit_and(const Value& a, const Value& b) { return _int_binary(OpKind::bit_and, a, b, {}); }
Value Builder::bit_or(const Value& a, const Value& b, const Flags& flags) {
  return _int_binary(OpKind::bit_or, a, b, flags);
}
Value Builder::fadd(const Value& a, const Value& b) { return _float_op(OpKind::fadd, {a, b}); }
Value Builder::fsub(const Value& a, const Value& b) { return _float_op(OpKind::fsub, {a, b}); }
Value Builder::fmul(const Value& a, const Value& b) { return _float_op(OpKind::fmul, {a, b}); }
Value Builder::fdiv(const Value& a, const Value& b) { return _float_op(OpKind::fdiv, {a, b}); }
Value Builder::fmax(const Value& a, const Value& b) { return _float_op(OpKind::fmax, {a, b}); }
Value Builder::fmin(const Value& a, const Value& b) { return _float_op(OpKind::fmin, {a, b}); }
Value Builder::fma(const Value& a, const Value& b, const Value& c) { return _float_op(OpKind::fma, {a, b, c}); }
Value Builder::fneg(const Value& a) { return _float_op(OpKind::fneg, {a}); }
Value Builder::exp(const Value& a) { return _float_op(OpKind::exp, {a}); }
Value Builder::sqrt(const Value& a) { return _float_op(OpKind::sqrt, {a}); }

Value Builder::icmp(const std::string& pred, const Value& a, const Value& b) {
  _same_types(OpKind::icmp, {a, b}, is_int, "integer");
  return _compare(OpKind::icmp, pred, tables::op_row(OpKind::icmp).predicates, a, b);
}

Value Builder::fcmp(const std::string& pred, const Value& a, const Value& b) {
  _same_types(OpKind::fcmp, {a, b}, is_float, "float");
  return _compare(OpKind::fcmp, pred, tables::op_row(OpKind::fcmp).predicates, a, b);
}

Value Builder::select(const Value& cond, const Value& a, const Value& b) {
  if (a.type != b.type || element_type(cond.type) != scalar(ScalarKind::i1) ||
      (cond.type.kind == TypeKind::vector && lanes(cond.type) != lanes(a.type)))
    throw BuildError(fmt::format("select needs an i1 condition per lane and equal arms (got {cond}, {a}, {b})",
                                 fmt::arg("cond", type_text(cond.type)), fmt::arg("a", type_text(a.type)),
                                 fmt::arg("b", type_text(b.type))));
  return *_emit(OpKind::select, {cond, a, b}, a.type, {});
}

// ---- casts ------------------------------------------------------------------------------------
Value Builder::zext(const Value& v, const Type& t, bool nneg) {
  return _cast(OpKind::zext, v, t, nneg ? Attrs{{"nneg", Attr::flag()}} : Attrs{});
}
Value Builder::sext(const Value& v, const Type& t) { return _cast(OpKind::sext, v, t, {}); }
Value Builder::trunc(const Value& v, const Type& t) { return _cast(OpKind::trunc, v, t, {}); }
Value Builder::fpext(const Value& v, const Type& t) {
  return _cast(OpKind::fpext, v, t, {});
}
Value Builder::fptrunc(const Value& v, const Type& t) {
  return _cast(OpKind::fptrunc, v, t, {});
}
Value Builder::sitofp(const Value& v, const Type& t) {
  return _cast(OpKind::sitofp, v, t, {});
}
Value Builder::fptosi(const Value& v, const Type& t) {
  return _cast(OpKind::fptosi, v, t, {});
}

// ---- memory -----------------------------------------------------------------------------------
// p + index * sizeof(element); index is an i32 known to be in [0, 2^31), or, into global or constant
// memory (8-byte pointers), an i64 known to be in [0, 2^63): a row offset past 2^31.
Value Builder::ptr_add(const Value& p, const Value& index, const Type& element) {
  bool wide = p.type.kind == TypeKind::pointer && byte_size(p.type) == 8 && index.type == scalar(ScalarKind::i64);
  if (p.type.kind != TypeKind::pointer || (index.type != scalar(ScalarKind::i32) && !wide) ||
      element.kind == TypeKind::pointer)
    throw BuildError(
        fmt::format("ptr_add needs a pointer, an i32 index (or an i64 one into global or constant memory) "
                    "and a non-pointer element (got {p}, {index}, {element})",
                    fmt::arg("p", type_text(p.type)), fmt::arg("index", type_text(index.type)),
                    fmt::arg("element", type_text(element))));
  return *_emit(OpKind::ptr_add, {p, index}, p.type, {{"element", Attr::of(type_text(element))}});
}

Value Builder::load(const Type& t, const Value& p, int align) {
  _check_access(OpKind::load, t, p, align);
  return *_emit(OpKind::load, {p}, t, {{"align", Attr::of(int64_t{align})}});
}

void Builder::store(const Value& v, const Value& p, int align) {
  _check_access(OpKind::store, v.type, p, align);
  _emit(OpKind::store, {v, p}, std::nullopt, {{"align", Attr::of(int64_t{align})}});
}

Value Builder::atomic_add(const Value& p, const Value& v, const std::string& order, const std::string& scope,
                          int align) {
  _check_atomic(OpKind::atomic_add, p, v, order, scope, align);
  return *_emit(OpKind::atomic_add, {p, v}, v.type,
                {{"align", Attr::of(int64_t{align})}, {"order", Attr::of(order)}, {"scope", Attr::of(scope)}});
}

void Builder::barrier() { _emit(OpKind::barrier, {}, std::nullopt, {}); }

Value Builder::readfirstlane(const Value& v) {
  if (v.type != scalar(ScalarKind::i32))
    throw BuildError(fmt::format("readfirstlane needs an i32 (got {type})", fmt::arg("type", type_text(v.type))));
  return *_emit(OpKind::readfirstlane, {v}, v.type, {});
}

// ---- structured control flow --------------------------------------------------------------------
std::vector<Value> Builder::for_loop(const Value& lo, const Value& hi, const Value& step,
                                     const std::vector<Value>& inits, const LoopBody& body) {
  Type i32 = scalar(ScalarKind::i32);
  if (!(lo.type == hi.type && hi.type == step.type && step.type == i32))
    throw BuildError("for_loop bounds and step must be i32");
  Value iv = _new_value(i32);
  Region region;
  region.args.push_back(iv);
  for (const auto& init : inits) region.args.push_back(_new_value(init.type));
  Op op{OpKind::for_loop, {}, {lo, hi, step}, {}, {}};
  op.operands.insert(op.operands.end(), inits.begin(), inits.end());
  op.regions.push_back(std::move(region));
  Region& parent = _current();
  parent.ops.push_back(std::move(op));
  Op& placed = parent.ops.back();
  _regions.push_back(&placed.regions[0]);
  std::vector<Value> iters(placed.regions[0].args.begin() + 1, placed.regions[0].args.end());
  std::vector<Value> yields = body(iv, iters);
  _regions.pop_back();
  bool same = yields.size() == inits.size();
  for (size_t i = 0; same && i < yields.size(); ++i) same = yields[i].type == inits[i].type;
  if (!same)
    throw BuildError(
        fmt::format("for_loop body must yield {count} values of the init types", fmt::arg("count", inits.size())));
  Op& yield = placed.regions[0].ops.emplace_back();
  yield.name = OpKind::yield_values;
  yield.operands.assign(yields.begin(), yields.end());
  for (const auto& init : inits) placed.results.push_back(_new_value(init.type));
  return std::vector<Value>(placed.results.begin(), placed.results.end());
}

// C++ passes the bodies by address: copying a std::function may allocate.
void Builder::if_then(const Value& cond, const IfBody& then_body) { _if(cond, {&then_body}); }

void Builder::if_then_else(const Value& cond, const IfBody& then_body, const IfBody& else_body) {
  _if(cond, {&then_body, &else_body});
}

// ---- internals ------------------------------------------------------------------------------------
void Builder::_if(const Value& cond, std::initializer_list<const IfBody*> bodies) {
  if (cond.type != scalar(ScalarKind::i1))
    throw BuildError(fmt::format("if needs an i1 condition (got {type})", fmt::arg("type", type_text(cond.type))));
  Region& parent = _current();
  parent.ops.push_back(Op{OpKind::if_then, {}, {cond}, {}, std::vector<Region>(bodies.size())});
  Op& placed = parent.ops.back();
  size_t i = 0;
  for (const IfBody* body : bodies) {
    _regions.push_back(&placed.regions[i++]);
    (*body)();
    _regions.pop_back();
  }
}

Region& Builder::_current() { return *_regions.back(); }

Value Builder::_new_value(const Type& t) { return Value{_next_id++, t}; }

std::optional<Value> Builder::_emit(OpKind name, std::initializer_list<Value> operands,
                                    const std::optional<Type>& result_type, Attrs&& attrs) {
  Op& op = _current().ops.emplace_back();  // built in place: nothing copied into the region
  op.name = name;
  op.operands.assign(operands.begin(), operands.end());
  op.attrs = std::move(attrs);
  if (!result_type) return std::nullopt;
  op.results.push_back(_new_value(*result_type));
  return op.results[0];
}

void Builder::_check_new_name(const std::string& name) const {
  bool taken = false;
  for (const auto& param : _kernel.params) taken = taken || param.name == name;
  for (const auto& buffer : _kernel.lds) taken = taken || buffer.name == name;
  taken = taken || name == "entry" || name == _kernel.name;  // the entry block's label and the kernel's symbol
  if (!is_name(name) || is_reserved_name(name) || taken)
    throw BuildError(
        fmt::format("name '{name}' must match [a-z_][a-z0-9_]*, not look like v<N>, "
                    "not be 'entry' or the kernel's name, and be unique",
                    fmt::arg("name", name)));
}

std::string Builder::_dim(const std::string& dim) {
  if (!contains(DIMS, dim))
    throw BuildError(fmt::format("dimension must be one of x, y, z (got {dim})", fmt::arg("dim", dim)));
  return dim;
}

void Builder::_same_types(OpKind name, std::initializer_list<Value> values, TypeCheck predicate, const char* what) {
  const Type& first = values.begin()->type;
  bool same = std::all_of(values.begin(), values.end(), [&](const Value& v) { return v.type == first; });
  if (!same || !predicate(first)) {
    std::vector<std::string> got;
    for (const auto& v : values) got.push_back(type_text(v.type));
    throw BuildError(fmt::format("{name} operands must be {what} values of one type (got {got})",
                                 fmt::arg("name", text_of(name)), fmt::arg("what", what),
                                 fmt::arg("got", fmt::join(got, ", "))));
  }
}

Value Builder::_int_binary(OpKind name, const Value& a, const Value& b, const Flags& flags) {
  _same_types(name, {a, b}, is_int, "integer");
  Attrs attrs;
  const tables::Names& known = tables::op_row(name).flags;
  for (std::string_view flag : flags) {
    const std::string_view* spelled = std::find(known.begin(), known.end(), flag);
    if (spelled == known.end())
      throw BuildError(
          fmt::format("{name} does not take flag '{flag}'", fmt::arg("name", text_of(name)), fmt::arg("flag", flag)));
    attrs[AttrKey::from_table(*spelled)] = Attr::flag();  // the table's text: the caller's may not outlive the op
  }
  return *_emit(name, {a, b}, a.type, std::move(attrs));
}

Value Builder::_float_op(OpKind name, std::initializer_list<Value> operands) {
  _same_types(name, operands, is_float, "float");
  return *_emit(name, operands, operands.begin()->type, {});
}

Value Builder::_compare(OpKind name, const std::string& pred, const tables::Names& predicates, const Value& a,
                        const Value& b) {
  if (!predicates.contains(pred))
    throw BuildError(fmt::format("{name} predicate must be one of {known} (got {pred})",
                                 fmt::arg("name", text_of(name)), fmt::arg("known", fmt::join(predicates, ", ")),
                                 fmt::arg("pred", pred)));
  return *_emit(name, {a, b}, with_lanes(scalar(ScalarKind::i1), lanes(a.type)), {{"pred", Attr::of(pred)}});
}

Value Builder::_cast(OpKind name, const Value& v, const Type& t, Attrs&& attrs) {
  // Python's CAST_RULES: the cast columns of tables/ops.json.
  const tables::OpRow& rule = tables::op_row(name);
  auto class_ok = [](bool is_float_class, const Type& type) { return is_float_class ? is_float(type) : is_int(type); };
  bool ok = class_ok(rule.cast_from_float, v.type) && class_ok(rule.cast_to_float, t) && lanes(v.type) == lanes(t);
  if (ok) {  // only then: a pointer has no bits
    int from = scalar_bits(element_type(v.type)), to = scalar_bits(element_type(t));
    ok = rule.cast_widths == tables::CastWidths::widens    ? from < to
         : rule.cast_widths == tables::CastWidths::narrows ? from > to
                                                           : true;
  }
  if (!ok)
    throw BuildError(fmt::format("{name} cannot convert {source} to {target}", fmt::arg("name", text_of(name)),
                                 fmt::arg("source", type_text(v.type)), fmt::arg("target", type_text(t))));
  return *_emit(name, {v}, t, std::move(attrs));
}

void Builder::_check_access(OpKind name, const Type& t, const Value& p, int align) {
  if (p.type.kind != TypeKind::pointer || t.kind == TypeKind::pointer)
    throw BuildError(
        fmt::format("{name} needs a pointer operand and a non-pointer value type", fmt::arg("name", text_of(name))));
  if (!is_power_of_two(align) || align > byte_size(t))
    throw BuildError(fmt::format("{name} align must be a power of two up to {most} (got {align})",
                                 fmt::arg("name", text_of(name)), fmt::arg("most", byte_size(t)),
                                 fmt::arg("align", align)));
}

void Builder::_check_atomic(OpKind name, const Value& p, const Value& v, const std::string& order,
                            const std::string& scope, int align) {
  if (v.type != scalar(ScalarKind::i32) || p.type.kind != TypeKind::pointer ||
      (p.type.space != AddressSpace::global && p.type.space != AddressSpace::lds))
    throw BuildError(fmt::format("{name} needs a global or LDS pointer and an i32 value (got {pointer}, {value})",
                                 fmt::arg("name", text_of(name)), fmt::arg("pointer", type_text(p.type)),
                                 fmt::arg("value", type_text(v.type))));
  const tables::OpRow& row = tables::op_row(name);
  if (!row.orders.contains(order))
    throw BuildError(fmt::format("{name} order must be one of {known} (got {order})", fmt::arg("name", text_of(name)),
                                 fmt::arg("known", fmt::join(row.orders, ", ")), fmt::arg("order", order)));
  if (!row.scopes.contains(scope))
    throw BuildError(fmt::format("{name} scope must be one of {known} (got {scope})", fmt::arg("name", text_of(name)),
                                 fmt::arg("known", fmt::join(row.scopes, ", ")), fmt::arg("scope", scope)));
  if (p.type.space == AddressSpace::lds && scope != "workgroup")
    throw BuildError(
        fmt::format("{name} on LDS takes scope workgroup: only the workgroup's waves share it (got {scope})",
                    fmt::arg("name", text_of(name)), fmt::arg("scope", scope)));
  if (align != byte_size(v.type))
    throw BuildError(fmt::format("{name} align must be {size}: an atomic is naturally aligned (got {align})",
                                 fmt::arg("name", text_of(name)), fmt::arg("size", byte_size(v.type)),
                                 fmt::arg("align", align)));
}

// ---- vector element ops -------------------------------------------------------------------------
Value Builder::extract_element(const Value& v, int index) {
  _check_lane(OpKind::extract_element, v.type, index);
  return *_emit(OpKind::extract_element, {v}, element_type(v.type), {{"index", Attr::of(int64_t{index})}});
}

Value Builder::insert_element(const Value& v, const Value& s, int index) {
  _check_lane(OpKind::insert_element, v.type, index);
  if (s.type != element_type(v.type))
    throw BuildError(fmt::format("insert_element needs a {lane} lane value (got {type})",
                                 fmt::arg("lane", type_text(element_type(v.type))),
                                 fmt::arg("type", type_text(s.type))));
  return *_emit(OpKind::insert_element, {v, s}, v.type, {{"index", Attr::of(int64_t{index})}});
}

Value Builder::shuffle(const Value& a, const Value& b, const std::vector<int>& mask) {
  if (a.type != b.type || a.type.kind != TypeKind::vector)
    throw BuildError(fmt::format("shuffle needs two vectors of one type (got {a}, {b})",
                                 fmt::arg("a", type_text(a.type)), fmt::arg("b", type_text(b.type))));
  std::string lanes_text;
  bool in_range = true;
  for (int m : mask) {
    lanes_text += (lanes_text.empty() ? "" : ",") + std::to_string(m);
    in_range = in_range && 0 <= m && m < 2 * a.type.count;
  }
  int count = static_cast<int>(mask.size());
  if (count < 2 || count > 16 || !in_range)
    throw BuildError(fmt::format("shuffle mask must have 2 to 16 lanes, each in [0, {lanes}) (got [{mask}])",
                                 fmt::arg("lanes", 2 * a.type.count), fmt::arg("mask", lanes_text)));
  return *_emit(OpKind::shuffle, {a, b}, with_lanes(element_type(a.type), count), {{"mask", Attr::of("[" + lanes_text + "]")}});
}

void Builder::_check_lane(OpKind name, const Type& t, int index) {
  if (t.kind != TypeKind::vector || index < 0 || index >= t.count)
    throw BuildError(fmt::format("{name} needs a vector and a lane index in range (got {type}, {index})",
                                 fmt::arg("name", text_of(name)), fmt::arg("type", type_text(t)),
                                 fmt::arg("index", index)));
}

// ---- cross-lane ops -----------------------------------------------------------------------------
Value Builder::bpermute(const Value& v, const Value& lane) {
  if ((v.type != scalar(ScalarKind::i32) && v.type != scalar(ScalarKind::f32)) || lane.type != scalar(ScalarKind::i32))
    throw BuildError(fmt::format("bpermute needs an i32 or f32 value and an i32 lane (got {value}, {lane})",
                                 fmt::arg("value", type_text(v.type)), fmt::arg("lane", type_text(lane.type))));
  return *_emit(OpKind::bpermute, {v, lane}, v.type, {});
}

namespace {
// row_shr:1 .. row_shr:15 (lanes past the row's start keep old); Python's DPP_ROW_SHR. Here rather
// than beside DPP_ROW_ROR_FIRST in builder.h only so that adding it did not rebuild every includer.
constexpr int DPP_ROW_SHR_FIRST = 0x111;
constexpr int DPP_ROW_SHR_LAST = 0x11F;
}  // namespace

Value Builder::update_dpp(const Value& old, const Value& v, int ctrl) {
  if (old.type != v.type || (v.type != scalar(ScalarKind::i32) && v.type != scalar(ScalarKind::f32)))
    throw BuildError(fmt::format("update_dpp needs two i32 or two f32 values (got {old}, {value})",
                                 fmt::arg("old", type_text(old.type)), fmt::arg("value", type_text(v.type))));
  if (!((0 <= ctrl && ctrl <= 0xFF) || (DPP_ROW_SHR_FIRST <= ctrl && ctrl <= DPP_ROW_SHR_LAST) ||
        (DPP_ROW_ROR_FIRST <= ctrl && ctrl <= DPP_ROW_ROR_LAST)))
    throw BuildError(fmt::format(
        "update_dpp control must be a quad_perm (0 to 255), a row_shr ({shr_first} to "
        "{shr_last}) or a row_ror ({ror_first} to {ror_last}) (got {ctrl})",
        fmt::arg("shr_first", DPP_ROW_SHR_FIRST), fmt::arg("shr_last", DPP_ROW_SHR_LAST),
        fmt::arg("ror_first", DPP_ROW_ROR_FIRST), fmt::arg("ror_last", DPP_ROW_ROR_LAST), fmt::arg("ctrl", ctrl)));
  return *_emit(OpKind::update_dpp, {old, v}, v.type, {{"ctrl", Attr::of(int64_t{ctrl})}});
}

// ---- matrix ops ---------------------------------------------------------------------------------
Value Builder::mma(const std::string& instr, const Value& a, const Value& b, const Value& c) {
  const MmaInstruction* found = nullptr;
  for (const auto& entry : MMA_INSTRUCTIONS)
    if (entry.name == instr) found = &entry;
  if (!found) {
    std::vector<std::string> known;
    for (const auto& entry : MMA_INSTRUCTIONS) known.push_back(entry.name);
    throw BuildError(fmt::format("unknown mma instruction '{instr}' (known: {known})", fmt::arg("instr", instr),
                                 fmt::arg("known", fmt::join(known, ", "))));
  }
  const std::string got[] = {type_text(a.type), type_text(b.type), type_text(c.type)};
  if (got[0] != found->operand || got[1] != found->operand || got[2] != found->accumulator)
    throw BuildError(fmt::format("mma {instr} needs {operand}, {operand}, {accumulator} (got {got})",
                                 fmt::arg("instr", instr), fmt::arg("operand", found->operand),
                                 fmt::arg("accumulator", found->accumulator),
                                 fmt::arg("got", fmt::join(std::begin(got), std::end(got), ", "))));
  return *_emit(OpKind::mma, {a, b, c}, c.type, {{"instr", Attr::of(instr)}});
}

}  // namespace kemit::ir

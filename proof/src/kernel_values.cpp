// The value of each integer op: its interval (signed), a divisor it is known to have, and its z3
// term. An op whose promise (nsw) is an obligation of its own takes the exact result: the promise
// is proven or reported on its own line, so later ops may rely on it.
#include <numeric>

#include "kernel_walk.h"

namespace kemit::proof {
namespace {

Int capped_product(Int a, Int b) {
  Int product = a * b;  // multiples are small (strides, alignments); past 2^40 knowing one is useless
  return (product > (Int(1) << 40) || product < 0) ? 1 : product;
}

int dim_index(const ir::Op& op) {
  const std::string& dim = op.attrs.at("dim").text;
  return dim == "x" ? 0 : dim == "y" ? 1 : 2;
}

z3::expr compare(const std::string& pred, const z3::expr& a, const z3::expr& b) {
  if (pred == "eq") return a == b;
  if (pred == "ne") return a != b;
  if (pred == "slt") return z3::slt(a, b);
  if (pred == "sle") return z3::sle(a, b);
  if (pred == "sgt") return z3::sgt(a, b);
  if (pred == "sge") return z3::sge(a, b);
  if (pred == "ult") return z3::ult(a, b);
  if (pred == "ule") return z3::ule(a, b);
  if (pred == "ugt") return z3::ugt(a, b);
  return z3::uge(a, b);
}

std::string negated(const std::string& pred) {
  static const std::map<std::string, std::string> NEGATION = {
      {"eq", "ne"},   {"ne", "eq"},   {"slt", "sge"}, {"sge", "slt"}, {"sle", "sgt"},
      {"sgt", "sle"}, {"ult", "uge"}, {"uge", "ult"}, {"ule", "ugt"}, {"ugt", "ule"}};
  return NEGATION.at(pred);
}

// `a pred b` as a signed predicate where the operands' intervals allow it, "" where not: an unsigned
// order is the signed one when both are non-negative, and `a <u b` (or `<=`) with b non-negative
// holds only for a non-negative a (`>` alike): then both ranges are clamped to >= 0.
std::string as_signed(std::string pred, Interval& a, Interval& b) {
  if (pred[0] != 'u') return pred;
  bool a_below = pred == "ult" || pred == "ule";
  if (!(a.non_negative() && b.non_negative()) && !(a_below ? b.non_negative() : a.non_negative())) return "";
  a.lo = std::max(a.lo, Int(0));
  b.lo = std::max(b.lo, Int(0));
  pred[0] = 's';
  return pred;
}

// The predicate with its operands swapped: `a < b` is `b > a`.
std::string swapped(const std::string& pred) {
  static const std::map<std::string, std::string> SWAP = {
      {"eq", "eq"}, {"ne", "ne"}, {"slt", "sgt"}, {"sgt", "slt"}, {"sle", "sge"}, {"sge", "sle"}};
  return SWAP.at(pred);
}

// The constant c of an interval that holds one value in [0, bits), or -1.
int exact_shift(const Interval& r, int bits) { return (r.lo == r.hi && r.lo >= 0 && r.lo < bits) ? int(r.lo) : -1; }

}  // namespace

Poly KernelWalk::atom(const std::string& name, Interval range, Int multiple) const {
  return Poly::atom(model_.relations.fresh(name, range, multiple));
}

// The result of an op as its type holds it: the exact value (and polynomial) when it cannot wrap
// or its nsw promise is an obligation of its own, else the whole type (an atom of its own).
IntValue KernelWalk::fitted(Interval math, Int multiple, z3::expr sym, int bits, bool promised, const Poly& exact) const {
  if (bits == 1) return IntValue{{0, 1}, 1, sym, atom("i1", {0, 1})};
  Interval type = Interval::signed_range(bits);
  if (math.within(type)) return IntValue{math, multiple, sym, exact};
  if (promised) {
    Interval kept = meet(math, type);
    if (kept.lo <= kept.hi) return IntValue{kept, multiple, sym, exact};
  }
  return IntValue{type, 1, sym, atom("wrapped", type)};
}

IntValue KernelWalk::value_of(const ir::Op& op) {
  const ir::Value& result = op.results[0];
  int bits = int_bits(result.type);
  switch (op.name) {
    case ir::OpKind::constant: {
      int64_t v = op.attrs.at("value").integer;
      return fitted(Interval::exactly(v), v, ctx_.bv_val(v, bits), bits, false, Poly::constant(v));
    }
    case ir::OpKind::workitem_id:
      if (dim_index(op) == 0) return IntValue{model_.lane_range, 1, model_.lane, model_.lane_poly};
      return IntValue{Interval::exactly(0), 0, ctx_.bv_val(0, 32), Poly::constant(0)};
    case ir::OpKind::workgroup_id:
      return fitted(model_.workgroup_range[dim_index(op)], 1, model_.workgroup[dim_index(op)], 32, false,
                    model_.workgroup_poly[dim_index(op)]);
    case ir::OpKind::num_workgroups: {
      const Term& grid = model_.grid[dim_index(op)];
      return fitted(grid.range, 1, grid.sym.extract(31, 0), 32, false, grid.poly);
    }
    case ir::OpKind::icmp: {
      z3::expr holds = compare(op.attrs.at("pred").text, int_or_unknown(op.operands[0]).sym,
                               int_or_unknown(op.operands[1]).sym);
      return IntValue{{0, 1}, 1, z3::ite(holds, ctx_.bv_val(1, 1), ctx_.bv_val(0, 1)), atom("i1", {0, 1})};
    }
    case ir::OpKind::select: {
      IntValue c = int_or_unknown(op.operands[0]), a = int_or_unknown(op.operands[1]), b = int_or_unknown(op.operands[2]);
      Interval range = hull(chosen_range(op.operands[0], true, op.operands[1], a),
                            chosen_range(op.operands[0], false, op.operands[2], b));
      Int multiple = gcd(a.multiple, b.multiple);
      IntValue v{range, multiple, z3::ite(c.sym == ctx_.bv_val(1, 1), a.sym, b.sym), atom("select", range, multiple)};
      if (bits > 1) shared_bounds(v.poly.terms.begin()->first[0], op, a, b);
      return v;
    }
    case ir::OpKind::zext:
    case ir::OpKind::sext:
    case ir::OpKind::trunc:
      if (!int_bits(op.operands[0].type)) return unknown(result);
      return cast_value(op, int_or_unknown(op.operands[0]), bits);
    case ir::OpKind::readfirstlane: {
      // Another lane's value of the same op: the same interval, a term of its own.
      IntValue a = int_or_unknown(op.operands[0]);
      IntValue v = unknown(result);
      v.poly = atom("readfirstlane", a.range);
      solver_.add_fact(z3::sle(ctx_.bv_val(static_cast<int64_t>(a.range.lo), bits), v.sym) &&
                       z3::sle(v.sym, ctx_.bv_val(static_cast<int64_t>(a.range.hi), bits)));
      v.range = a.range;
      return v;
    }
    default:
      if (op.operands.size() == 2 && int_bits(op.operands[0].type) && int_bits(op.operands[1].type))
        return binary_value(op, int_or_unknown(op.operands[0]), int_or_unknown(op.operands[1]), bits);
      return unknown(result);
  }
}

// The interval of `v` where the i1 `cond` is `holds`: a select's guarded operand (`select %c, %x, 0`
// with `%c = icmp %x, K`) keeps only the values its condition lets through.
Interval KernelWalk::chosen_range(const ir::Value& cond, bool holds, const ir::Value& v, const IntValue& value) const {
  auto def = defs_.find(cond.id);
  if (def == defs_.end() || def->second->name != ir::OpKind::icmp) return value.range;
  const ir::Op& icmp = *def->second;
  const IntValue* bound = int_of(icmp.operands[1]);
  if (icmp.operands[0].id != v.id || !bound) return value.range;
  Interval r = value.range, b = bound->range;
  std::string pred = as_signed(holds ? icmp.attrs.at("pred").text : negated(icmp.attrs.at("pred").text), r, b);
  if (pred == "slt") r = meet(r, {r.lo, b.hi - 1});
  if (pred == "sle") r = meet(r, {r.lo, b.hi});
  if (pred == "sgt") r = meet(r, {b.lo + 1, r.hi});
  if (pred == "sge") r = meet(r, {b.lo, r.hi});
  if (r.lo > r.hi) return value.range;
  return multiples_within(r, value.multiple);
}

// The polynomials a select's arm `v` is known to stay below (`upper`) or above where the i1
// `cond` is `holds`: its own, and the other operand of a guarding icmp (`%x < %n` bounds
// `select %c, %x, %n - 1` by `n - 1` in both arms).
std::vector<Poly> KernelWalk::arm_bounds(const ir::Value& cond, bool holds, const ir::Value& v, const IntValue& value,
                                         bool upper) const {
  std::vector<Poly> bounds{value.poly};
  auto def = defs_.find(cond.id);
  if (def == defs_.end() || def->second->name != ir::OpKind::icmp) return bounds;
  const ir::Op& icmp = *def->second;
  const IntValue* a = int_of(icmp.operands[0]);
  const IntValue* b = int_of(icmp.operands[1]);
  if (!a || !b) return bounds;
  Interval ra = a->range, rb = b->range;
  std::string pred = as_signed(holds ? icmp.attrs.at("pred").text : negated(icmp.attrs.at("pred").text), ra, rb);
  const IntValue* other = b;
  if (icmp.operands[1].id == v.id && icmp.operands[0].id != v.id) {
    other = a;
    if (!pred.empty()) pred = swapped(pred);
  } else if (icmp.operands[0].id != v.id) {
    return bounds;
  }
  Poly one = Poly::constant(1);
  if (pred == "eq" || (upper && pred == "sle") || (!upper && pred == "sge")) bounds.push_back(other->poly);
  if (upper && pred == "slt") bounds.push_back(other->poly - one);
  if (!upper && pred == "sgt") bounds.push_back(other->poly + one);
  return bounds;
}

// A select's atom keeps every bound both arms share: a bound of one arm that the other's bounds
// reach too (proven by the relations).
void KernelWalk::shared_bounds(int id, const ir::Op& select, const IntValue& a, const IntValue& b) {
  for (bool upper : {true, false}) {
    std::vector<Poly> x = arm_bounds(select.operands[0], true, select.operands[1], a, upper);
    std::vector<Poly> y = arm_bounds(select.operands[0], false, select.operands[2], b, upper);
    auto reaches = [&](const Poly& p, const std::vector<Poly>& arm) {
      for (const Poly& q : arm)
        if (model_.relations.prove_nonneg(upper ? p - q : q - p)) return true;
      return false;
    };
    std::vector<Poly> all = x;
    all.insert(all.end(), y.begin(), y.end());
    for (const Poly& p : all) {
      if (!reaches(p, x) || !reaches(p, y)) continue;
      upper ? model_.relations.bound_above(id, p) : model_.relations.bound_below(id, p);
    }
  }
}

IntValue KernelWalk::binary_value(const ir::Op& op, const IntValue& a, const IntValue& b, int bits) {
  bool nsw = op.attrs.count("nsw") > 0;
  bool non_negative = a.range.non_negative() && b.range.non_negative();
  Interval top = bits == 1 ? Interval{0, 1} : Interval::signed_range(bits);
  switch (op.name) {
    case ir::OpKind::add:
      return fitted(add(a.range, b.range), gcd(a.multiple, b.multiple), a.sym + b.sym, bits, nsw, a.poly + b.poly);
    case ir::OpKind::sub:
      return fitted(sub(a.range, b.range), gcd(a.multiple, b.multiple), a.sym - b.sym, bits, nsw, a.poly - b.poly);
    case ir::OpKind::mul:
      return fitted(mul(a.range, b.range), capped_product(a.multiple, b.multiple), a.sym * b.sym, bits, nsw,
                    a.poly * b.poly);
    case ir::OpKind::shl: {
      int c = exact_shift(b.range, bits);
      if (c < 0) return IntValue{top, 1, z3::shl(a.sym, b.sym), atom("shl", top)};
      Interval factor = Interval::exactly(Int(1) << c);
      return fitted(mul(a.range, factor), capped_product(a.multiple, Int(1) << c), z3::shl(a.sym, b.sym), bits, nsw,
                    scaled(a.poly, Int(1) << c));
    }
    case ir::OpKind::udiv:
      if (non_negative && b.range.lo > 0)
        return quotient(a, b, {a.range.lo / b.range.hi, a.range.hi / b.range.lo}, z3::udiv(a.sym, b.sym));
      return IntValue{top, 1, z3::udiv(a.sym, b.sym), atom("udiv", top)};
    case ir::OpKind::urem:
      if (non_negative && b.range.lo > 0) {
        Interval r{0, std::min(a.range.hi, b.range.hi - 1)};
        IntValue v{r, 1, z3::urem(a.sym, b.sym), atom("urem", r)};
        int id = v.poly.terms.begin()->first[0];
        model_.relations.bound_above(id, a.poly);
        model_.relations.bound_above(id, b.poly - Poly::constant(1));  // a run-time divisor's r <= b - 1
        return v;
      }
      return IntValue{top, 1, z3::urem(a.sym, b.sym), atom("urem", top)};
    case ir::OpKind::lshr: {
      int c = exact_shift(b.range, bits);
      if (c >= 0 && a.range.non_negative()) {
        IntValue divisor{Interval::exactly(Int(1) << c), Int(1) << c, b.sym, Poly::constant(Int(1) << c)};
        return quotient(a, divisor, {a.range.lo >> c, a.range.hi >> c}, z3::lshr(a.sym, b.sym));
      }
      return IntValue{top, 1, z3::lshr(a.sym, b.sym), atom("lshr", top)};
    }
    case ir::OpKind::bit_and: {
      Interval r = top;
      if (bits > 1 && (a.range.non_negative() || b.range.non_negative()))
        r = {0, std::min(a.range.non_negative() ? a.range.hi : b.range.hi, b.range.non_negative() ? b.range.hi : a.range.hi)};
      IntValue v{r, 1, a.sym & b.sym, atom("bit_and", r)};
      int id = v.poly.terms.begin()->first[0];
      if (bits > 1 && a.range.non_negative()) model_.relations.bound_above(id, a.poly);
      if (bits > 1 && b.range.non_negative()) model_.relations.bound_above(id, b.poly);
      return v;
    }
    case ir::OpKind::bit_or: {
      Interval r = (bits > 1 && non_negative) ? bit_or_non_negative(a.range, b.range) : top;
      return IntValue{r, 1, a.sym | b.sym, atom("bit_or", r)};
    }
    default: return unknown(op.results[0]);
  }
}

// a / b of non-negative operands, b > 0: an atom q with b q <= a < b q + b (b a constant or not).
IntValue KernelWalk::quotient(const IntValue& a, const IntValue& b, Interval range, z3::expr sym) {
  IntValue q{range, 1, std::move(sym), atom("quotient", range)};
  model_.relations.bound_quotient(q.poly.terms.begin()->first[0], a.poly, b.poly);
  return q;
}

IntValue KernelWalk::cast_value(const ir::Op& op, const IntValue& a, int bits) {
  int from = int_bits(op.operands[0].type);
  if (op.name == ir::OpKind::trunc)
    return fitted(a.range, a.multiple, a.sym.extract(bits - 1, 0), bits, false, a.poly);
  if (op.name == ir::OpKind::sext) {
    Interval r = from == 1 ? Interval{-1, 0} : a.range;
    return IntValue{r, from == 1 ? 1 : a.multiple, z3::sext(a.sym, bits - from), from == 1 ? atom("sext", r) : a.poly};
  }
  bool promised = op.attrs.count("nneg") > 0;
  Interval r = a.range;
  if (!a.range.non_negative()) r = promised ? meet(a.range, {0, a.range.hi}) : Interval::unsigned_range(from);
  bool exact = a.range.non_negative() || (promised && r.lo <= r.hi);
  if (r.lo > r.hi) r = Interval::unsigned_range(from);
  return IntValue{r, exact ? a.multiple : 1, z3::zext(a.sym, bits - from), exact ? a.poly : atom("zext", r)};
}

// Inside a branch, the value becomes an atom equal to what it was, with the branch's interval and
// the bounds its condition states against the other operand.
void KernelWalk::narrow(const ir::Value& v, Interval range, const std::vector<Poly>& below,
                        const std::vector<Poly>& above) {
  auto found = ints_.find(v.id);
  if (found == ints_.end() || range.lo > range.hi) return;
  saved_.back().emplace(v.id, found->second);  // keeps the first: the value before this region
  IntValue& value = found->second;
  Interval kept = meet(value.range, range);
  if (kept.lo > kept.hi) return;  // an unreachable branch: nothing below it is reached
  int id = model_.relations.fresh("%" + std::to_string(v.id), kept, value.multiple);
  model_.relations.bound_above(id, value.poly);
  model_.relations.bound_below(id, value.poly);
  for (const Poly& p : below) model_.relations.bound_below(id, p);
  for (const Poly& p : above) model_.relations.bound_above(id, p);
  value.range = model_.relations.atom(id).range;
  value.poly = Poly::atom(id);
}

// The interval side of a condition known to hold (or not) in a branch; the z3 side has the
// condition itself on its path.
void KernelWalk::refine(const ir::Value& cond, bool holds) {
  auto def = defs_.find(cond.id);
  if (def == defs_.end()) return;
  const ir::Op& op = *def->second;
  if ((op.name == ir::OpKind::bit_and && holds) || (op.name == ir::OpKind::bit_or && !holds)) {
    refine(op.operands[0], holds);
    refine(op.operands[1], holds);
    return;
  }
  if (op.name != ir::OpKind::icmp) return;
  const IntValue* a = int_of(op.operands[0]);
  const IntValue* b = int_of(op.operands[1]);
  if (!a || !b) return;
  Interval ra = a->range, rb = b->range;
  std::string pred = as_signed(holds ? op.attrs.at("pred").text : negated(op.attrs.at("pred").text), ra, rb);
  Poly pa = a->poly, pb = b->poly;
  Poly one = Poly::constant(1);
  if (pred == "eq") {
    narrow(op.operands[0], rb, {pb}, {pb});
    narrow(op.operands[1], ra, {pa}, {pa});
  } else if (pred == "slt") {
    narrow(op.operands[0], {ra.lo, rb.hi - 1}, {}, {pb - one});
    narrow(op.operands[1], {ra.lo + 1, rb.hi}, {pa + one}, {});
  } else if (pred == "sle") {
    narrow(op.operands[0], {ra.lo, rb.hi}, {}, {pb});
    narrow(op.operands[1], {ra.lo, rb.hi}, {pa}, {});
  } else if (pred == "sgt") {
    narrow(op.operands[0], {rb.lo + 1, ra.hi}, {pb + one}, {});
    narrow(op.operands[1], {rb.lo, ra.hi - 1}, {}, {pa - one});
  } else if (pred == "sge") {
    narrow(op.operands[0], {rb.lo, ra.hi}, {pb}, {});
    narrow(op.operands[1], {rb.lo, ra.hi}, {}, {pa});
  }
}

}  // namespace kemit::proof

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

// The constant c of an interval that holds one value in [0, bits), or -1.
int exact_shift(const Interval& r, int bits) { return (r.lo == r.hi && r.lo >= 0 && r.lo < bits) ? int(r.lo) : -1; }

}  // namespace

IntValue KernelWalk::fitted(Interval math, Int multiple, z3::expr sym, int bits, bool promised) const {
  if (bits == 1) return IntValue{{0, 1}, 1, sym};
  Interval type = Interval::signed_range(bits);
  if (math.within(type)) return IntValue{math, multiple, sym};
  if (promised) {
    Interval kept = meet(math, type);
    if (kept.lo <= kept.hi) return IntValue{kept, multiple, sym};
  }
  return IntValue{type, 1, sym};
}

IntValue KernelWalk::value_of(const ir::Op& op) {
  const ir::Value& result = op.results[0];
  int bits = int_bits(result.type);
  switch (op.name) {
    case ir::OpKind::constant: {
      int64_t v = op.attrs.at("value").integer;
      return fitted(Interval::exactly(v), v, ctx_.bv_val(v, bits), bits, false);
    }
    case ir::OpKind::workitem_id:
      if (dim_index(op) == 0) return IntValue{model_.lane_range, 1, model_.lane};
      return IntValue{Interval::exactly(0), 0, ctx_.bv_val(0, 32)};
    case ir::OpKind::workgroup_id:
      return fitted(model_.workgroup_range[dim_index(op)], 1, model_.workgroup[dim_index(op)], 32, false);
    case ir::OpKind::num_workgroups: {
      const Term& grid = model_.grid[dim_index(op)];
      return fitted(grid.range, 1, grid.sym.extract(31, 0), 32, false);
    }
    case ir::OpKind::icmp: {
      z3::expr holds = compare(op.attrs.at("pred").text, int_or_unknown(op.operands[0]).sym,
                               int_or_unknown(op.operands[1]).sym);
      return IntValue{{0, 1}, 1, z3::ite(holds, ctx_.bv_val(1, 1), ctx_.bv_val(0, 1))};
    }
    case ir::OpKind::select: {
      IntValue c = int_or_unknown(op.operands[0]), a = int_or_unknown(op.operands[1]), b = int_or_unknown(op.operands[2]);
      return IntValue{hull(a.range, b.range), gcd(a.multiple, b.multiple),
                      z3::ite(c.sym == ctx_.bv_val(1, 1), a.sym, b.sym)};
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

IntValue KernelWalk::binary_value(const ir::Op& op, const IntValue& a, const IntValue& b, int bits) {
  bool nsw = op.attrs.count("nsw") > 0;
  bool non_negative = a.range.non_negative() && b.range.non_negative();
  Interval top = bits == 1 ? Interval{0, 1} : Interval::signed_range(bits);
  switch (op.name) {
    case ir::OpKind::add: return fitted(add(a.range, b.range), gcd(a.multiple, b.multiple), a.sym + b.sym, bits, nsw);
    case ir::OpKind::sub: return fitted(sub(a.range, b.range), gcd(a.multiple, b.multiple), a.sym - b.sym, bits, nsw);
    case ir::OpKind::mul:
      return fitted(mul(a.range, b.range), capped_product(a.multiple, b.multiple), a.sym * b.sym, bits, nsw);
    case ir::OpKind::shl: {
      int c = exact_shift(b.range, bits);
      if (c < 0) return IntValue{top, 1, z3::shl(a.sym, b.sym)};
      Interval factor = Interval::exactly(Int(1) << c);
      return fitted(mul(a.range, factor), capped_product(a.multiple, Int(1) << c), z3::shl(a.sym, b.sym), bits, nsw);
    }
    case ir::OpKind::udiv:
      if (non_negative && b.range.lo > 0)
        return IntValue{{a.range.lo / b.range.hi, a.range.hi / b.range.lo}, 1, z3::udiv(a.sym, b.sym)};
      return IntValue{top, 1, z3::udiv(a.sym, b.sym)};
    case ir::OpKind::urem:
      if (non_negative && b.range.lo > 0)
        return IntValue{{0, std::min(a.range.hi, b.range.hi - 1)}, 1, z3::urem(a.sym, b.sym)};
      return IntValue{top, 1, z3::urem(a.sym, b.sym)};
    case ir::OpKind::lshr: {
      int c = exact_shift(b.range, bits);
      if (c >= 0 && a.range.non_negative())
        return IntValue{{a.range.lo >> c, a.range.hi >> c}, 1, z3::lshr(a.sym, b.sym)};
      return IntValue{top, 1, z3::lshr(a.sym, b.sym)};
    }
    case ir::OpKind::bit_and: {
      Interval r = top;
      if (bits > 1 && (a.range.non_negative() || b.range.non_negative()))
        r = {0, std::min(a.range.non_negative() ? a.range.hi : b.range.hi, b.range.non_negative() ? b.range.hi : a.range.hi)};
      return IntValue{r, 1, a.sym & b.sym};
    }
    case ir::OpKind::bit_or:
      return IntValue{(bits > 1 && non_negative) ? bit_or_non_negative(a.range, b.range) : top, 1, a.sym | b.sym};
    default: return unknown(op.results[0]);
  }
}

IntValue KernelWalk::cast_value(const ir::Op& op, const IntValue& a, int bits) {
  int from = int_bits(op.operands[0].type);
  if (op.name == ir::OpKind::trunc) return fitted(a.range, a.multiple, a.sym.extract(bits - 1, 0), bits, false);
  if (op.name == ir::OpKind::sext) {
    Interval r = from == 1 ? Interval{-1, 0} : a.range;
    return IntValue{r, from == 1 ? 1 : a.multiple, z3::sext(a.sym, bits - from)};
  }
  bool promised = op.attrs.count("nneg") > 0;
  Interval r = a.range;
  if (!a.range.non_negative()) r = promised ? meet(a.range, {0, a.range.hi}) : Interval::unsigned_range(from);
  if (r.lo > r.hi) r = Interval::unsigned_range(from);
  return IntValue{r, a.range.non_negative() || promised ? a.multiple : 1, z3::zext(a.sym, bits - from)};
}

void KernelWalk::narrow(const ir::Value& v, Interval range) {
  auto found = ints_.find(v.id);
  if (found == ints_.end() || range.lo > range.hi) return;
  saved_.back().emplace(v.id, found->second);  // keeps the first: the value before this region
  found->second.range = meet(found->second.range, range);
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
  std::string pred = holds ? op.attrs.at("pred").text : negated(op.attrs.at("pred").text);
  if (pred[0] == 'u') {
    if (!a->range.non_negative() || !b->range.non_negative()) return;
    pred[0] = 's';  // both non-negative: the unsigned order is the signed one
  }
  Interval ra = a->range, rb = b->range;
  if (pred == "eq") {
    narrow(op.operands[0], rb);
    narrow(op.operands[1], ra);
  } else if (pred == "slt") {
    narrow(op.operands[0], {ra.lo, rb.hi - 1});
    narrow(op.operands[1], {ra.lo + 1, rb.hi});
  } else if (pred == "sle") {
    narrow(op.operands[0], {ra.lo, rb.hi});
    narrow(op.operands[1], {ra.lo, rb.hi});
  } else if (pred == "sgt") {
    narrow(op.operands[0], {rb.lo + 1, ra.hi});
    narrow(op.operands[1], {rb.lo, ra.hi - 1});
  } else if (pred == "sge") {
    narrow(op.operands[0], {rb.lo, ra.hi});
    narrow(op.operands[1], {rb.lo, ra.hi});
  }
}

}  // namespace kemit::proof

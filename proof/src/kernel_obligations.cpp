// The obligations of each op (docs/contracts.md "Proven"): intervals first, z3 for what they
// leave open, each violation a bit-vector formula under the path condition.
#include <cstdint>
#include <numeric>

#include "kernel_walk.h"

namespace kemit::proof {
namespace {

// A divisor of a byte offset; past 2^40 knowing one is useless (and the product must not overflow).
// The polynomials that are >= 0 when `result` fits the signed (or, with `a` >= 0, the unsigned) type.
std::vector<Poly> type_bounds(const Poly& result, bool is_signed, int bits, const Poly& a) {
  Interval type = is_signed ? Interval::signed_range(bits) : Interval::unsigned_range(bits);
  std::vector<Poly> bounds{Poly::constant(type.hi) - result, result - Poly::constant(type.lo)};
  if (!is_signed) bounds.push_back(a);
  return bounds;
}

int exact_amount(const Interval& r, int bits) { return (r.lo == r.hi && r.lo >= 0 && r.lo < bits) ? int(r.lo) : -1; }

Int capped(Int multiple) { return (multiple > (Int(1) << 40) || multiple < 0) ? 1 : multiple; }

std::string value_name(const ir::Value& v) { return "%" + std::to_string(v.id); }
std::string llvm_value(const ir::Value& v, const char* role = "") {
  return "%v" + std::to_string(v.id) + role;
}

}  // namespace

Finding& KernelWalk::finding(const ir::Op& op, const std::string& kind, std::string llvm_name,
                             std::vector<std::string> llvm_flags) {
  Finding f;
  f.launch = model_.index;
  f.kernel = kernel_name_;
  f.kind = kind;
  f.op = op_line(op);
  f.llvm_name = std::move(llvm_name);
  f.llvm_flags = std::move(llvm_flags);
  f.contract = model_.contract();
  findings_.push_back(std::move(f));
  ++stats_.obligations;
  return findings_.back();
}

void KernelWalk::decide(Finding& f, bool by_intervals, const z3::expr& violation,
                        const std::vector<const ir::Value*>& shown, const std::vector<Poly>& nonneg,
                        bool by_relations) {
  if (by_intervals) {
    f.verdict = ProofVerdict::PROVEN;
    f.how = "intervals";
    ++stats_.by_intervals;
    return;
  }
  if (by_relations || (!nonneg.empty() && model_.relations.prove_all_nonneg(nonneg))) {
    f.verdict = ProofVerdict::PROVEN;
    f.how = "relations";
    ++stats_.by_relations;
    return;
  }
  std::vector<std::pair<std::string, z3::expr>> values;
  for (const ir::Value* v : shown) {
    const IntValue* known = int_of(*v);
    if (known) values.emplace_back(value_name(*v), known->sym);
  }
  solver_.decide(f, path_, violation, values);
}

void KernelWalk::flag_obligations(const ir::Op& op) {
  if (op.operands.size() < 2 && op.name != ir::OpKind::zext) return;
  const IntValue* a = int_of(op.operands[0]);
  if (!a) return;
  int bits = int_bits(op.operands[0].type);
  if (op.name == ir::OpKind::zext) {
    if (!op.attrs.count("nneg")) return;
    Finding& f = finding(op, "nneg", llvm_value(op.results[0]), {"nneg"});
    return decide(f, a->range.non_negative(), z3::slt(a->sym, ctx_.bv_val(0, bits)), {&op.operands[0]}, {a->poly});
  }
  const IntValue* b = int_of(op.operands[1]);
  if (!b || bits <= 1) return;
  switch (op.name) {
    case ir::OpKind::add:
    case ir::OpKind::sub:
    case ir::OpKind::mul:
    case ir::OpKind::shl:
      if (op.name == ir::OpKind::shl) shift_amount(op, *b, bits);
      for (const char* flag : {"nsw", "nuw"})
        if (op.attrs.count(flag)) arith_flag(op, flag, *a, *b, bits);
      return;
    case ir::OpKind::lshr: return shift_amount(op, *b, bits);
    case ir::OpKind::udiv:
    case ir::OpKind::urem: {
      Finding& f = finding(op, "divisor");
      bool nonzero = b->range.lo > 0 || b->range.hi < 0;
      return decide(f, nonzero, b->sym == ctx_.bv_val(0, bits), {&op.operands[1]}, {b->poly - Poly::constant(1)});
    }
    case ir::OpKind::bit_or: {
      if (!op.attrs.count("disjoint")) return;
      Finding& f = finding(op, "disjoint", llvm_value(op.results[0]), {"disjoint"});
      bool zero = (a->range.lo == 0 && a->range.hi == 0) || (b->range.lo == 0 && b->range.hi == 0);
      return decide(f, zero, (a->sym & b->sym) != ctx_.bv_val(0, bits), {&op.operands[0], &op.operands[1]});
    }
    default: return;
  }
}

void KernelWalk::shift_amount(const ir::Op& op, const IntValue& b, int bits) {
  Finding& f = finding(op, "shift");
  decide(f, b.range.lo >= 0 && b.range.hi < bits, z3::uge(b.sym, ctx_.bv_val(bits, bits)), {&op.operands[1]},
         {b.poly, Poly::constant(bits - 1) - b.poly});
}

// nsw: the result in 2w+1 bits (sign-extended) equals the w-bit result sign-extended; nuw alike
// with zero extension. The interval proof is the exact result inside the type's range.
void KernelWalk::arith_flag(const ir::Op& op, const std::string& flag, const IntValue& a, const IntValue& b, int bits) {
  bool is_signed = flag == "nsw";
  auto widen = [&](const z3::expr& e) { return is_signed ? z3::sext(e, bits + 1) : z3::zext(e, bits + 1); };
  z3::expr wa = widen(a.sym), wb = widen(b.sym), narrow_result = a.sym;
  Interval math;
  Poly exact;
  switch (op.name) {
    case ir::OpKind::add: math = add(a.range, b.range); narrow_result = a.sym + b.sym; wa = wa + wb; exact = a.poly + b.poly; break;
    case ir::OpKind::sub: math = sub(a.range, b.range); narrow_result = a.sym - b.sym; wa = wa - wb; exact = a.poly - b.poly; break;
    case ir::OpKind::mul: math = mul(a.range, b.range); narrow_result = a.sym * b.sym; wa = wa * wb; exact = a.poly * b.poly; break;
    default: {  // shl: shifting back must give the operand
      narrow_result = z3::shl(a.sym, b.sym);
      z3::expr back = is_signed ? z3::ashr(narrow_result, b.sym) : z3::lshr(narrow_result, b.sym);
      bool proven = b.range.lo >= 0 && b.range.hi < bits &&
                    (is_signed || a.range.non_negative()) &&
                    mul(a.range, {Int(1) << int(b.range.lo), Int(1) << int(b.range.hi)})
                        .within(is_signed ? Interval::signed_range(bits) : Interval{0, (Int(1) << (bits - 1)) - 1});
      Finding& f = finding(op, flag, llvm_value(op.results[0]), {flag});
      int c = exact_amount(b.range, bits);
      std::vector<Poly> fits;
      if (c >= 0) fits = type_bounds(scaled(a.poly, Int(1) << c), is_signed, bits, a.poly);
      return decide(f, proven, back != a.sym || z3::uge(b.sym, ctx_.bv_val(bits, bits)),
                    {&op.operands[0], &op.operands[1]}, fits);
    }
  }
  // Both flags' intervals read the operands as signed; nuw is decided by them when both are non-negative.
  bool proven = is_signed ? math.within(Interval::signed_range(bits))
                          : a.range.non_negative() && b.range.non_negative() && math.within(Interval::unsigned_range(bits));
  Finding& f = finding(op, flag, llvm_value(op.results[0]), {flag});
  std::vector<Poly> fits = type_bounds(exact, is_signed, bits, a.poly);
  if (!is_signed) fits.push_back(b.poly);
  decide(f, proven, wa != widen(narrow_result), {&op.operands[0], &op.operands[1]}, fits);
}

void KernelWalk::ptr_add(const ir::Op& op) {
  const IntValue* index = int_of(op.operands[1]);
  const ir::Value& result = op.results[0];
  if (!index) return;
  // An i32 index promises [0, 2^31) (the lowering's `zext nneg` to i64 stands for it); an i64 one, a
  // row offset past 2^31 into global memory, [0, 2^63): the getelementptr takes it as it is.
  int bits = int_bits(op.operands[1].type);
  Finding& f = finding(op, "index", llvm_value(result, ".idx"), {"nneg"});
  decide(f, index->range.non_negative(), z3::slt(index->sym, ctx_.bv_val(0, bits)), {&op.operands[1]}, {index->poly});
  // A proven non-negative index is its own value as the zero-extended offset term reads it.
  bool exact_index = f.verdict == ProofVerdict::PROVEN;
  auto base = pointers_.find(op.operands[0].id);
  if (base == pointers_.end()) return;
  int64_t element = ir::byte_size(ir::scalar(op.attrs.at("element").text));
  PointerValue p = base->second;
  Interval step = mul(meet(index->range, {0, index->range.hi}), Interval::exactly(element));
  Interval offset_range = model_.watch(add(p.offset.range, step));
  Poly offset_poly = exact_index ? p.offset.poly + scaled(index->poly, element) : atom("offset", offset_range);
  z3::expr wide_index = bits == int(model_.bits) ? index->sym : z3::zext(index->sym, model_.bits - bits);
  p.offset = Term{offset_range, p.offset.sym + wide_index * model_.number(element), offset_poly};
  p.multiple = gcd(p.multiple, capped(index->multiple * element));
  pointers_.insert_or_assign(result.id, p);
  // The lowering's `getelementptr inbounds`: the address stays inside the buffer (one past its end allowed).
  Finding& g = finding(op, "inbounds", llvm_value(result), {"inbounds", "nuw"});
  g.lowering_only = true;
  bool inside = p.offset.range.lo >= 0 && p.offset.range.hi <= p.view_bytes.range.lo;
  decide(g, inside, z3::slt(p.offset.sym, model_.number(0)) || z3::sgt(p.offset.sym, p.view_bytes.sym),
         {&op.operands[1]}, {p.offset.poly, p.view_bytes.poly - p.offset.poly});
}

void KernelWalk::memory_access(const ir::Op& op, const ir::Value& pointer, const ir::Type& accessed) {
  auto found = pointers_.find(pointer.id);
  Finding& f = finding(op, "bounds");
  if (found == pointers_.end()) {
    f.verdict = ProofVerdict::UNPROVEN;
    f.how = "the pointer %" + std::to_string(pointer.id) + " comes from no parameter or LDS array the prover follows";
    ++stats_.unproven;
    return;
  }
  const PointerValue& p = found->second;
  int64_t size = ir::byte_size(accessed);
  z3::expr end = p.offset.sym + model_.number(size);
  model_.watch(add(p.offset.range, Interval::exactly(size)));
  bool inside = p.offset.range.lo >= 0 && p.offset.range.hi + size <= p.view_bytes.range.lo;
  decide(f, inside, z3::slt(p.offset.sym, model_.number(0)) || z3::sgt(end, p.view_bytes.sym), {},
         {p.offset.poly, p.view_bytes.poly - p.offset.poly - Poly::constant(size)});
  int64_t align = op.attrs.at("align").integer;
  Finding& g = finding(op, "align");
  if (align > p.base_align) {
    g.verdict = ProofVerdict::REFUTED;
    g.how = "the access promises align " + std::to_string(align) + " but " + p.base + " is only promised align " +
            std::to_string(p.base_align);
    ++stats_.refuted;
    return;
  }
  decide(g, p.multiple % align == 0, z3::urem(p.offset.sym, model_.number(align)) != model_.number(0), {}, {},
         model_.relations.is_multiple(p.offset.poly, align));
}

void KernelWalk::loop_obligations(const ir::Op& op, const IntValue& lo, const IntValue& hi, const IntValue& step,
                                  const IntValue& iv) {
  z3::expr zero = ctx_.bv_val(0, 32);
  Finding& f = finding(op, "step");
  path_.push_back(z3::slt(lo.sym, hi.sym));
  decide(f, step.range.lo > 0, z3::sle(step.sym, zero), {&op.operands[0], &op.operands[1], &op.operands[2]},
         {step.poly - Poly::constant(1)});
  path_.pop_back();
  // The latch iv + step of every trip that runs (lo <= iv < hi) keeps its sign: the loop ends.
  // Without unsigned wrap too is the lowering's business alone (a `nuw` on `.next`).
  const ir::Value& iv_value = op.regions[0].args[0];
  path_.push_back(z3::sle(lo.sym, iv.sym) && z3::slt(iv.sym, hi.sym) && z3::sgt(step.sym, zero));
  Interval next = add(iv.range, step.range);
  Finding& g = finding(op, "latch nsw", llvm_value(iv_value, ".next"), {"nsw"});
  decide(g, next.within(Interval::signed_range(32)),
         z3::sext(iv.sym, 1) + z3::sext(step.sym, 1) != z3::sext(iv.sym + step.sym, 1),
         {&iv_value, &op.operands[2], &op.operands[1]}, type_bounds(iv.poly + step.poly, true, 32, iv.poly));
  Finding& h = finding(op, "latch nuw", llvm_value(iv_value, ".next"), {"nuw"});
  h.lowering_only = true;
  decide(h, iv.range.non_negative() && step.range.non_negative() && next.within(Interval::unsigned_range(32)),
         z3::zext(iv.sym, 1) + z3::zext(step.sym, 1) != z3::zext(iv.sym + step.sym, 1),
         {&iv_value, &op.operands[2], &op.operands[1]}, {iv.poly, step.poly, Poly::constant(UINT32_MAX) - iv.poly - step.poly});
  path_.pop_back();
}

void KernelWalk::lane_index(const ir::Op& op) {
  if (op.name == ir::OpKind::update_dpp) {
    int64_t ctrl = op.attrs.at("ctrl").integer;
    bool valid = (ctrl >= 0 && ctrl <= 0xFF) || (ctrl >= 0x111 && ctrl <= 0x11F) || (ctrl >= 0x121 && ctrl <= 0x12F);
    Finding& f = finding(op, "dpp control");
    f.verdict = valid ? ProofVerdict::PROVEN : ProofVerdict::REFUTED;
    f.how = valid ? "intervals" : "control " + std::to_string(ctrl) + " is no quad_perm, row_shr or row_ror";
    valid ? ++stats_.by_intervals : ++stats_.refuted;
    return;
  }
  int64_t index = op.attrs.at("index").integer;
  int lanes = ir::lanes(op.operands[0].type);
  Finding& f = finding(op, "lane index");
  bool valid = index >= 0 && index < lanes;
  f.verdict = valid ? ProofVerdict::PROVEN : ProofVerdict::REFUTED;
  f.how = valid ? "intervals" : "index " + std::to_string(index) + " of a vector of " + std::to_string(lanes) + " lanes";
  valid ? ++stats_.by_intervals : ++stats_.refuted;
}

// The questions asked of this compare: each a finding of the answers, never an obligation (the
// walk's own counts stay as they were).
void KernelWalk::compare_questions(const ir::Op& op, const std::string& name, const z3::expr& left,
                                   const z3::expr& right, const Interval& gap) {
  if (!questions_) return;
  unsigned bits = left.get_sort().bv_size();
  for (const auto& question : *questions_) {
    if (question.name != name) continue;
    ProofStats counts = stats_;
    Finding f;
    f.launch = model_.index;
    f.kernel = kernel_name_;
    f.kind = "differ " + std::to_string(question.differ);
    f.op = op_line(op);
    f.llvm_name = name;
    f.contract = model_.contract();
    bool apart = gap.within(Interval::signed_range(int(bits))) && (question.differ < gap.lo || question.differ > gap.hi);
    decide(f, apart, left - right == ctx_.bv_val(question.differ, bits), {&op.operands[0], &op.operands[1]});
    stats_ = counts;
    answers_->push_back({question, std::move(f)});
  }
}

}  // namespace kemit::proof

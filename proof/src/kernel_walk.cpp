#include "kernel_walk.h"

#include "kemit/ir/printer.h"

namespace kemit::proof {

int int_bits(const ir::Type& t) {
  if (t.kind != ir::TypeKind::scalar || !ir::is_int(t)) return 0;
  return ir::scalar_bits(t);
}

// The op's canonical line, without its indent; a loop's or an if's is its header.
std::string op_line(const ir::Op& op) {
  if (op.name == ir::OpKind::for_loop) {
    const ir::Value& iv = op.regions[0].args[0];
    return "for %" + std::to_string(iv.id) + " = %" + std::to_string(op.operands[0].id) + " to %" +
           std::to_string(op.operands[1].id) + " step %" + std::to_string(op.operands[2].id);
  }
  if (op.name == ir::OpKind::if_then) return "if %" + std::to_string(op.operands[0].id);
  return ir::op_text(op);
}

void set_limits(z3::solver& solver, z3::context& ctx, const ProverOptions& options) {
  z3::params params(ctx);
  params.set("rlimit", options.z3_rlimit);
  params.set("timeout", options.z3_timeout_ms);
  solver.set(params);
}

ObligationSolver::ObligationSolver(LaunchModel& model, const ProverOptions& options, ProofStats& stats)
    : model_(model), stats_(stats), solver_(model.ctx, "QF_BV") {
  set_limits(solver_, model.ctx, options);
  for (const auto& assumption : model.assumptions) solver_.add(assumption);
}

void ObligationSolver::decide(Finding& finding, const std::vector<z3::expr>& path, const z3::expr& violation,
                              const std::vector<std::pair<std::string, z3::expr>>& values) {
  solver_.push();
  for (const auto& condition : path) solver_.add(condition);
  solver_.add(violation);
  z3::check_result result = solver_.check();
  if (result == z3::unsat) {
    finding.verdict = ProofVerdict::PROVEN;
    finding.how = "z3";
    ++stats_.by_z3;
  } else if (result == z3::sat) {
    finding.verdict = ProofVerdict::REFUTED;
    finding.witness = model_.witness(solver_.get_model(), values);
    ++stats_.refuted;
  } else {
    finding.verdict = ProofVerdict::UNPROVEN;
    finding.how = "z3 decided nothing (" + solver_.reason_unknown() + ")";
    ++stats_.unproven;
  }
  solver_.pop();
}

KernelWalk::KernelWalk(LaunchModel& model, ObligationSolver& solver, ProofStats& stats, const ArchLimits& arch,
                       std::vector<Finding>& findings)
    : model_(model), solver_(solver), stats_(stats), arch_(arch), findings_(findings), ctx_(model.ctx) {}

void KernelWalk::walk(const ir::Kernel& kernel) {
  kernel_name_ = kernel.name;
  bind_params(kernel);
  saved_.emplace_back();
  walk_region(kernel.body);
}

void KernelWalk::bind_params(const ir::Kernel& kernel) {
  for (const auto& param : kernel.params) {
    const Binding* binding = model_.binding_of(param.name);
    if (param.value.type.kind == ir::TypeKind::pointer) {
      if (!binding || binding->kind == Binding::Kind::scalar) continue;  // unknown: the launch's own finding says why
      PointerValue p(model_.view_bytes(*binding), Term{Interval::exactly(0), model_.number(0), Poly::constant(0)});
      p.base = param.name;
      auto align = param.attrs.find("align");
      p.base_align = align == param.attrs.end() ? 1 : align->second.integer;
      pointers_.insert_or_assign(param.value.id, p);
      continue;
    }
    int bits = int_bits(param.value.type);
    if (!bits || !binding || binding->kind != Binding::Kind::scalar) {
      if (bits) set_int(param.value, unknown(param.value));
      continue;
    }
    Term term = model_.eval(binding->value);
    bool fits = term.range.within(Interval::signed_range(bits));
    Interval range = fits ? term.range : Interval::signed_range(bits);
    set_int(param.value, IntValue{range, 1, term.sym.extract(bits - 1, 0), fits ? term.poly : atom(param.name, range)});
  }
  for (const auto& lds : kernel.lds) {
    Int bytes = Int(lds.count) * ir::byte_size(lds.element);
    PointerValue p(Term{Interval::exactly(bytes), model_.number(bytes), Poly::constant(bytes)},
                   Term{Interval::exactly(0), model_.number(0), Poly::constant(0)});
    p.base = lds.name;
    p.lds = true;
    p.base_align = lds.align;
    pointers_.insert_or_assign(lds.value.id, p);
  }
}

void KernelWalk::walk_region(const ir::Region& region) {
  for (const auto& op : region.ops) walk_op(op);
}

void KernelWalk::walk_op(const ir::Op& op) {
  switch (op.name) {
    case ir::OpKind::for_loop: return walk_for(op);
    case ir::OpKind::if_then: return walk_if(op);
    case ir::OpKind::yield_values: return;
    case ir::OpKind::ptr_add: return ptr_add(op);
    // A loaded integer (and an atomic's old value) is an unknown of its type, kept below so that a
    // guard (`if 0 <= %v < n`) narrows it where it holds: a value read from memory can then be an index.
    case ir::OpKind::load: memory_access(op, op.operands[0], op.results[0].type); break;
    case ir::OpKind::store: return memory_access(op, op.operands[1], op.operands[0].type);
    // An atomic's address is proven like a store's.
    case ir::OpKind::atomic_add: memory_access(op, op.operands[0], op.operands[1].type); break;
    case ir::OpKind::extract_element:
    case ir::OpKind::insert_element:
    case ir::OpKind::update_dpp: lane_index(op); break;
    default: break;
  }
  flag_obligations(op);
  if (op.name == ir::OpKind::icmp && questions_) {
    IntValue a = int_or_unknown(op.operands[0]), b = int_or_unknown(op.operands[1]);
    compare_questions(op, "%v" + std::to_string(op.results[0].id), a.sym, b.sym, sub(a.range, b.range));
  }
  if (op.results.size() == 1 && op.results[0].type == ir::scalar(ir::ScalarKind::i1)) defs_[op.results[0].id] = &op;
  for (const auto& result : op.results)
    if (int_bits(result.type)) set_int(result, op.results.size() == 1 ? value_of(op) : unknown(result));
}

void KernelWalk::walk_for(const ir::Op& op) {
  IntValue lo = int_or_unknown(op.operands[0]), hi = int_or_unknown(op.operands[1]),
           step = int_or_unknown(op.operands[2]);
  const ir::Value& iv_value = op.regions[0].args[0];
  Interval range = meet({lo.range.lo, hi.range.hi - 1}, Interval::signed_range(32));
  bool fixed_steps = lo.range.lo == lo.range.hi && step.range.lo == step.range.hi && step.range.lo > 0;
  if (fixed_steps && range.lo <= range.hi)  // the last trip is the last multiple of the step below hi
    range.hi = range.lo + (range.hi - range.lo) / step.range.lo * step.range.lo;
  if (range.lo > range.hi) range = Interval::signed_range(32);  // a loop that never runs: any range is sound
  Int multiple = gcd(lo.multiple, step.multiple);
  int iv_atom = model_.relations.fresh("%" + std::to_string(iv_value.id), range, multiple);
  model_.relations.bound_below(iv_atom, lo.poly);
  model_.relations.bound_above(iv_atom, hi.poly - Poly::constant(1));
  IntValue iv{range, multiple, ctx_.bv_const(("v" + std::to_string(iv_value.id)).c_str(), 32), Poly::atom(iv_atom)};
  set_int(iv_value, iv);
  std::string loop = "%v" + std::to_string(iv_value.id);
  compare_questions(op, loop + ".guard", lo.sym, hi.sym, sub(lo.range, hi.range));
  loop_obligations(op, lo, hi, step, iv);
  for (size_t i = 1; i < op.regions[0].args.size(); ++i)
    if (int_bits(op.regions[0].args[i].type)) set_int(op.regions[0].args[i], unknown(op.regions[0].args[i]));
  // Every trip's iv is lo plus a whole number of steps (the latch does not wrap: its own obligation);
  // said only for a constant step, where it costs z3 little (a run-time step's remainder costs seconds).
  z3::expr trip = z3::sle(lo.sym, iv.sym) && z3::slt(iv.sym, hi.sym) && z3::sgt(step.sym, ctx_.bv_val(0, 32));
  if (step.range.lo == step.range.hi && step.range.lo > 1)
    trip = trip && z3::urem(iv.sym - lo.sym, step.sym) == ctx_.bv_val(0, 32);
  path_.push_back(trip);
  compare_questions(op, loop + ".again", iv.sym + step.sym, hi.sym, sub(add(iv.range, step.range), hi.range));
  saved_.emplace_back();
  walk_region(op.regions[0]);
  for (auto& [id, value] : saved_.back()) ints_.insert_or_assign(id, value);
  saved_.pop_back();
  path_.pop_back();
  for (const auto& result : op.results)
    if (int_bits(result.type)) set_int(result, unknown(result));
}

void KernelWalk::walk_if(const ir::Op& op) {
  IntValue cond = int_or_unknown(op.operands[0]);
  for (size_t branch = 0; branch < op.regions.size(); ++branch) {
    bool holds = branch == 0;
    path_.push_back(cond.sym == ctx_.bv_val(holds ? 1 : 0, 1));
    saved_.emplace_back();
    refine(op.operands[0], holds);
    walk_region(op.regions[branch]);
    for (auto& [id, value] : saved_.back()) ints_.insert_or_assign(id, value);
    saved_.pop_back();
    path_.pop_back();
  }
}

void KernelWalk::set_int(const ir::Value& v, IntValue value) { ints_.insert_or_assign(v.id, std::move(value)); }

const IntValue* KernelWalk::int_of(const ir::Value& v) const {
  auto found = ints_.find(v.id);
  return found == ints_.end() ? nullptr : &found->second;
}

IntValue KernelWalk::int_or_unknown(const ir::Value& v) {
  const IntValue* known = int_of(v);
  return known ? *known : unknown(v);
}

IntValue KernelWalk::unknown(const ir::Value& v) {
  int bits = int_bits(v.type);
  Interval range = bits == 1 ? Interval{0, 1} : Interval::signed_range(bits);
  return IntValue{range, 1, ctx_.bv_const(("v" + std::to_string(v.id)).c_str(), bits), atom("%" + std::to_string(v.id), range)};
}

}  // namespace kemit::proof

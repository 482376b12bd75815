#include "launch_obligations.h"

namespace kemit::proof {
namespace {

class LaunchChecker {
 public:
  LaunchChecker(LaunchModel& model, ObligationSolver& solver, const ProverOptions& options, ProofStats& stats,
                std::vector<Finding>& findings)
      : model_(model), solver_(solver), options_(options), stats_(stats), findings_(findings) {}

  Finding& finding(const std::string& kind) {
    Finding f;
    f.launch = model_.index;
    f.kernel = model_.launch.kernel;
    f.kind = kind;
    f.op = model_.launch.text;
    f.contract = model_.contract();
    findings_.push_back(std::move(f));
    ++stats_.obligations;
    return findings_.back();
  }
  // `by_relations`: the relations already show it (an offset whose polynomial keeps the alignment).
  void decide(Finding& f, bool by_intervals, const z3::expr& violation, const std::vector<Poly>& nonneg = {},
              bool by_relations = false) {
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
    solver_.decide(f, {}, violation, {});
  }
  void unproven(const std::string& kind, const std::string& why) {
    Finding& f = finding(kind);
    f.verdict = ProofVerdict::UNPROVEN;
    f.how = why;
    ++stats_.unproven;
  }

  // `lo <= term <= hi` for every launch: the violation is its negation.
  void within(const std::string& kind, const Term& term, Int lo, Int hi) {
    Finding& f = finding(kind);
    decide(f, term.range.within({lo, hi}), z3::slt(term.sym, model_.number(lo)) || z3::sgt(term.sym, model_.number(hi)),
           {term.poly - Poly::constant(lo), Poly::constant(hi) - term.poly});
  }

  void bindings(const ir::Kernel& kernel) {
    const auto& args = model_.launch.args;
    if (args.size() != kernel.params.size()) {
      return unproven("bindings", "the launch binds " + std::to_string(args.size()) + " params, kernel " + kernel.name +
                                      " has " + std::to_string(kernel.params.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const ir::Param& param = kernel.params[i];
      if (args[i].param != param.name)
        return unproven("bindings", "binding " + std::to_string(i) + " is '" + args[i].param + "', the param is '" +
                                        param.name + "'");
      binding(param, args[i]);
    }
  }

  void binding(const ir::Param& param, const Binding& b) {
    bool pointer = param.value.type.kind == ir::TypeKind::pointer;
    if (pointer == (b.kind == Binding::Kind::scalar))
      return unproven("bindings", "param '" + param.name + "' is bound to a " + (pointer ? "scalar" : "buffer"));
    if (b.kind == Binding::Kind::scalar) {
      int bits = int_bits(param.value.type);
      if (!bits) return unproven("bindings", "param '" + param.name + "' is no integer");
      Interval type = Interval::signed_range(bits);
      return within("scalar " + param.name, model_.eval(b.value), type.lo, type.hi);
    }
    if (b.kind != Binding::Kind::view) return;
    Term offset = model_.eval(b.offset), bytes = model_.eval(b.bytes);
    Term buffer = model_.eval(find_buffer(model_.plan, b.buffer)->bytes);
    model_.watch(add(offset.range, bytes.range));
    Finding& f = finding("view " + param.name);
    z3::expr zero = model_.number(0);
    bool inside = offset.range.lo >= 0 && bytes.range.lo >= 0 && offset.range.hi + bytes.range.hi <= buffer.range.lo;
    decide(f, inside, z3::slt(offset.sym, zero) || z3::slt(bytes.sym, zero) || z3::sgt(offset.sym + bytes.sym, buffer.sym),
           {offset.poly, bytes.poly, buffer.poly - offset.poly - bytes.poly});
    auto align_attr = param.attrs.find("align");
    int64_t align = align_attr == param.attrs.end() ? 1 : align_attr->second.integer;
    Finding& g = finding("view align " + param.name);
    bool aligned = offset.range.lo == offset.range.hi && offset.range.lo % align == 0;
    decide(g, aligned, z3::srem(offset.sym, model_.number(align)) != zero, {},
           model_.relations.is_multiple(offset.poly, align));
  }

  void limits(const ArchLimits& arch) {
    within("block",
           Term{Interval::exactly(model_.launch.block), model_.number(model_.launch.block),
                Poly::constant(model_.launch.block)},
           1,
           arch.max_block_lanes);
    for (int d = 0; d < 3; ++d) {
      Int lanes = d == 0 ? model_.launch.block : 1;
      const Term& g = model_.grid[d];
      within(std::string("grid ") + "xyz"[d],
             Term{model_.watch(mul(g.range, Interval::exactly(lanes))), g.sym * model_.number(lanes),
                  scaled(g.poly, lanes)},
             1, arch.max_grid_lanes);
    }
    within("lds",
           Term{Interval::exactly(model_.launch.lds), model_.number(model_.launch.lds), Poly::constant(model_.launch.lds)},
           0, arch.lds_bytes);
  }

  // C >= 1 under the sizes alone: the model assumes it for everything else.
  void chunk(const ChunkLevel& level) {
    Term by = model_.eval(level.by);
    Finding& f = finding("chunk");
    if (by.range.lo >= 1 || model_.relations.prove_nonneg(by.poly - Poly::constant(1))) {
      f.verdict = ProofVerdict::PROVEN;
      f.how = "intervals";
      ++stats_.by_intervals;
      return;
    }
    z3::solver alone(model_.ctx, "QF_BV");
    set_limits(alone, model_.ctx, options_);
    for (const auto& a : model_.size_assumptions) alone.add(a);
    alone.add(z3::slt(by.sym, model_.number(1)));
    z3::check_result r = alone.check();
    f.verdict = r == z3::unsat ? ProofVerdict::PROVEN : r == z3::sat ? ProofVerdict::REFUTED : ProofVerdict::UNPROVEN;
    if (r == z3::sat) f.witness = model_.witness(alone.get_model(), {});
    f.how = r == z3::unsat ? "z3" : r == z3::sat ? "" : "z3 decided nothing (" + alone.reason_unknown() + ")";
    r == z3::unsat ? ++stats_.by_z3 : r == z3::sat ? ++stats_.refuted : ++stats_.unproven;
  }

 private:
  LaunchModel& model_;
  ObligationSolver& solver_;
  const ProverOptions& options_;
  ProofStats& stats_;
  std::vector<Finding>& findings_;
};

}  // namespace

void launch_obligations(const ir::Kernel& kernel, LaunchModel& model, ObligationSolver& solver,
                        const ArchLimits& arch, const ProverOptions& options, ProofStats& stats,
                        std::vector<Finding>& findings) {
  LaunchChecker checker(model, solver, options, stats, findings);
  for (const auto& level : model.launch.chunks) checker.chunk(level);
  checker.limits(arch);
  checker.bindings(kernel);
}

}  // namespace kemit::proof

// The walk of one kernel at one launch: every integer value as an interval (with a known
// divisor) and a z3 term, every pointer as a base and a byte offset, the path condition of the
// enclosing ifs and loops, and the obligations of every op (docs/contracts.md "Proven").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <z3++.h>

#include "kemit/ir/builder.h"
#include "launch_model.h"

namespace kemit::proof {

struct IntValue {
  Interval range;         // signed
  Int multiple = 1;       // the value is a multiple of it (0: the value is 0)
  z3::expr sym;           // a bit-vector of the type's width
  Poly poly;              // its exact value over the launch's atoms (an atom of its own when none is known)
};

struct PointerValue {
  PointerValue(Term view, Term start) : view_bytes(std::move(view)), offset(std::move(start)) {}
  std::string base;        // the param or LDS array's name
  bool lds = false;
  int64_t base_align = 1;  // the promised alignment of the base
  Term view_bytes;         // the bytes the base may reach
  Term offset;             // bytes from the base (128-bit)
  Int multiple = 0;        // the offset is a multiple of it
};

// A solver's per-query limits (ProverOptions): the resource limit decides, the wall timeout guards.
void set_limits(z3::solver& solver, z3::context& ctx, const ProverOptions& options);

// The solver of the walk's obligations; one per launch, its base assertions the launch's assumptions.
class ObligationSolver {
 public:
  ObligationSolver(LaunchModel& model, const ProverOptions& options, ProofStats& stats);
  // `violation` under `path`: unsat is PROVEN, sat REFUTED (with a witness of `values`), unknown UNPROVEN.
  void decide(Finding& finding, const std::vector<z3::expr>& path, const z3::expr& violation,
              const std::vector<std::pair<std::string, z3::expr>>& values);
  void add_fact(const z3::expr& fact) { solver_.add(fact); }

 private:
  LaunchModel& model_;
  ProofStats& stats_;
  z3::solver solver_;
};

class KernelWalk {
 public:
  KernelWalk(LaunchModel& model, ObligationSolver& solver, ProofStats& stats, const ArchLimits& arch,
             std::vector<Finding>& findings);
  void walk(const ir::Kernel& kernel);
  // Also answer these questions (prover.h) into `answers` during the walk.
  void ask(const std::vector<CompareQuestion>& questions, std::vector<CompareAnswer>& answers) {
    questions_ = &questions;
    answers_ = &answers;
  }

 private:
  void bind_params(const ir::Kernel& kernel);
  void walk_region(const ir::Region& region);
  void walk_op(const ir::Op& op);
  void walk_for(const ir::Op& op);
  void walk_if(const ir::Op& op);
  // Values (kernel_values.cpp).
  IntValue value_of(const ir::Op& op);
  IntValue binary_value(const ir::Op& op, const IntValue& a, const IntValue& b, int bits);
  IntValue cast_value(const ir::Op& op, const IntValue& a, int bits);
  Interval chosen_range(const ir::Value& cond, bool holds, const ir::Value& v, const IntValue& value) const;
  std::vector<Poly> arm_bounds(const ir::Value& cond, bool holds, const ir::Value& v, const IntValue& value,
                               bool upper) const;
  void shared_bounds(int id, const ir::Op& select, const IntValue& a, const IntValue& b);
  IntValue quotient(const IntValue& a, const IntValue& b, Interval range, z3::expr sym);
  IntValue unknown(const ir::Value& v);
  IntValue fitted(Interval math, Int multiple, z3::expr sym, int bits, bool promised, const Poly& exact) const;
  Poly atom(const std::string& name, Interval range, Int multiple = 1) const;
  void set_int(const ir::Value& v, IntValue value);
  const IntValue* int_of(const ir::Value& v) const;
  IntValue int_or_unknown(const ir::Value& v);
  void narrow(const ir::Value& v, Interval range, const std::vector<Poly>& below = {},
              const std::vector<Poly>& above = {});
  void refine(const ir::Value& cond, bool holds);
  // Obligations (kernel_obligations.cpp).
  void flag_obligations(const ir::Op& op);
  void arith_flag(const ir::Op& op, const std::string& flag, const IntValue& a, const IntValue& b, int bits);
  void shift_amount(const ir::Op& op, const IntValue& b, int bits);
  void ptr_add(const ir::Op& op);
  void memory_access(const ir::Op& op, const ir::Value& pointer, const ir::Type& accessed);
  void loop_obligations(const ir::Op& op, const IntValue& lo, const IntValue& hi, const IntValue& step,
                        const IntValue& iv);
  void lane_index(const ir::Op& op);
  void compare_questions(const ir::Op& op, const std::string& name, const z3::expr& left, const z3::expr& right,
                         const Interval& gap);
  Finding& finding(const ir::Op& op, const std::string& kind, std::string llvm_name = "",
                   std::vector<std::string> llvm_flags = {});
  // Intervals, then the relations (every polynomial of `nonneg` >= 0 rules the violation out, or
  // `by_relations`: they show it otherwise), then z3.
  void decide(Finding& f, bool by_intervals, const z3::expr& violation, const std::vector<const ir::Value*>& shown,
              const std::vector<Poly>& nonneg = {}, bool by_relations = false);

  LaunchModel& model_;
  ObligationSolver& solver_;
  ProofStats& stats_;
  const ArchLimits& arch_;
  std::vector<Finding>& findings_;
  z3::context& ctx_;
  std::string kernel_name_;
  std::map<int, IntValue> ints_;
  std::map<int, PointerValue> pointers_;  // pointers of known origin only (a param or an LDS array)
  std::map<int, const ir::Op*> defs_;  // the op that defines each i1 condition, for refinement
  std::vector<z3::expr> path_;
  std::vector<std::map<int, IntValue>> saved_;  // intervals a refinement overwrote, per open region
  const std::vector<CompareQuestion>* questions_ = nullptr;
  std::vector<CompareAnswer>* answers_ = nullptr;
};

int int_bits(const ir::Type& t);  // 0 for anything but an integer scalar
std::string op_line(const ir::Op& op);

}  // namespace kemit::proof

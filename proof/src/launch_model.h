// One launch of a plan as the prover sees it: the contract's sizes, the chunk, the grid, the
// workgroup and the lane, each both as an interval and as a z3 bit-vector term, with the
// assumptions the contract makes (docs/contracts.md "What the contract promises").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <z3++.h>

#include "kemit/proof/interval.h"
#include "kemit/proof/plan.h"
#include "kemit/proof/poly.h"
#include "kemit/proof/prover.h"

namespace kemit::proof {

// Contract values are bit-vector terms of `bits` bits, read as signed: 64 where every value the
// launch forms stays below 2^62 in magnitude (its intervals say so: watch()), else 128. A 64-bit
// model that sees a larger value is thrown away and the launch proven again at 128 bits.
constexpr unsigned NARROW_BITS = 64;
constexpr unsigned WIDE_BITS = 128;

// A contract value: its interval, its z3 term and its exact polynomial over the launch's atoms.
struct Term {
  Interval range;
  z3::expr sym;
  Poly poly;
};

class LaunchModel {
 public:
  LaunchModel(z3::context& ctx, const Plan& plan, int index, unsigned bits);

  Term eval(const Expr& e) const;
  z3::expr number(Int value) const;
  // Notes a value the model's terms hold: past 2^62 a 64-bit model may wrap (too_narrow()).
  const Interval& watch(const Interval& range) const;
  bool too_narrow() const { return too_narrow_; }
  // Evaluates every expression of the launch's contract (bindings, buffers): true when one
  // already passes 2^62, so the launch is proven at 128 bits directly, never at 64 first.
  bool contract_too_narrow() const;
  // The buffer view a kernel parameter is bound to (bytes), nullptr when it is not a buffer.
  const Binding* binding_of(const std::string& param) const;
  Term view_bytes(const Binding& b) const;
  // `launch 0 ew_add_f32 (sizes n in 1..2147483647; chunks of n by 4096)`
  std::string contract() const;
  // The witness JSON of `model`, with the named values.
  std::string witness(const z3::model& model, const std::vector<std::pair<std::string, z3::expr>>& values) const;

  z3::context& ctx;
  unsigned bits;
  const Plan& plan;
  const Launch& launch;
  int index;
  std::vector<z3::expr> assumptions;
  std::vector<z3::expr> size_assumptions;  // the sizes' ranges alone
  Term grid[3];
  z3::expr workgroup[3];  // i32 each
  Interval workgroup_range[3];
  z3::expr lane;          // i32: the workitem id in x (the families' workgroups are one-dimensional)
  Interval lane_range;
  // The relational side: every size, the chunk, the grid, the ids and the walk's values as atoms.
  mutable Relations relations;
  Poly workgroup_poly[3];
  Poly lane_poly;

 private:
  void declare_sizes();
  void declare_chunk(const ChunkLevel& level, int depth);
  void declare_grid();
  Term eval_unwatched(const Expr& e) const;
  Term folded(const Expr& e, const Term& a, const Term& b) const;
  z3::expr floor_div_term(const z3::expr& a, const z3::expr& b) const;

  std::map<std::string, Term> names_;
  mutable bool too_narrow_ = false;
  // One atom per division, ceiling, min and max of the plan's text: its every use is the same value.
  mutable std::map<std::string, Term> folded_;
};

// The signed value of a bit-vector numeral.
Int signed_value(const z3::expr& numeral);
std::string json_int(Int value);

}  // namespace kemit::proof

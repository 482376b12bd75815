#include "launch_model.h"

namespace kemit::proof {

LaunchModel::LaunchModel(z3::context& ctx, const Plan& plan, int index, unsigned bits)
    : ctx(ctx),
      bits(bits),
      plan(plan),
      launch(plan.launches.at(index)),
      index(index),
      grid{Term{Interval{}, ctx.bv_val(0, bits), {}}, Term{Interval{}, ctx.bv_val(0, bits), {}},
           Term{Interval{}, ctx.bv_val(0, bits), {}}},
      workgroup{ctx.bv_const("workgroup_x", 32), ctx.bv_const("workgroup_y", 32), ctx.bv_const("workgroup_z", 32)},
      lane(ctx.bv_const("lane", 32)) {
  declare_sizes();
  for (size_t depth = 0; depth < launch.chunks.size(); ++depth) declare_chunk(launch.chunks[depth], int(depth));
  declare_grid();
}

z3::expr LaunchModel::number(Int value) const {
  watch(Interval::exactly(value));
  return ctx.bv_val(int_text(value).c_str(), bits);
}

const Interval& LaunchModel::watch(const Interval& range) const {
  Int limit = Int(1) << 62;
  if (bits < WIDE_BITS && (range.lo < -limit || range.hi > limit)) too_narrow_ = true;
  return range;
}

void LaunchModel::declare_sizes() {
  for (const auto& size : plan.sizes) {
    z3::expr sym = ctx.bv_const(("size_" + size.name).c_str(), bits);
    assumptions.push_back(z3::sle(number(size.lo), sym) && z3::sle(sym, number(size.hi)));
    size_assumptions.push_back(assumptions.back());
    Interval range{size.lo, size.hi};
    names_.emplace(size.name, Term{range, sym, Poly::atom(relations.fresh(size.name, range))});
  }
}

// The largest power of two (up to 2^30) every value of p is a multiple of: a chunk length's
// divisor, which its every `first` keeps (`X/Y*32`: the views of a chunk stay aligned).
namespace {
Int power_of_two_divisor(const Relations& relations, const Poly& p) {
  Int m = 1;
  while (m < (Int(1) << 30) && relations.is_multiple(p, m * 2)) m *= 2;
  return m;
}
}  // namespace

// Chunk i of S by C: first = i*C < S, count = min(C, S - first), under the level's names (a nested
// level's chunk is any one of its size, whichever chunk of the outer level runs). C >= 1 is the
// launch's own obligation.
void LaunchModel::declare_chunk(const ChunkLevel& level, int depth) {
  const Term& total = names_.at(level.size);
  Term by = eval(level.by);
  z3::expr i = ctx.bv_const(chunk_key(depth).c_str(), bits);
  z3::expr first = i * by.sym;
  z3::expr rest = total.sym - first;
  // i <= S / C keeps i * C within the sizes (C >= 1), so `first` never wraps.
  Int most_chunks = by.range.lo >= 1 ? total.range.hi / by.range.lo : total.range.hi;
  watch(mul({0, most_chunks}, by.range));
  assumptions.push_back(z3::sle(number(0), i) && z3::sle(i, number(most_chunks)) && z3::slt(first, total.sym) &&
                        z3::sle(number(1), by.sym));
  Int last_first = total.range.hi - 1;
  Interval first_range{0, last_first < 0 ? 0 : last_first};
  Int multiple = by.range.lo == by.range.hi ? by.range.lo : power_of_two_divisor(relations, by.poly);
  int first_atom = relations.fresh(level.first, first_range, multiple);
  relations.bound_above(first_atom, total.poly - Poly::constant(1));
  names_.emplace(level.first, Term{first_range, first, Poly::atom(first_atom)});
  Int most = std::min(by.range.hi, total.range.hi);
  Interval count_range{1, most < 1 ? 1 : most};
  int count_atom = relations.fresh(level.count, count_range);
  relations.bound_above(count_atom, by.poly);
  relations.bound_above(count_atom, total.poly - Poly::atom(first_atom));
  names_.emplace(level.count, Term{count_range, z3::ite(z3::slt(by.sym, rest), by.sym, rest), Poly::atom(count_atom)});
}

void LaunchModel::declare_grid() {
  static const char* const DIM_NAMES[] = {"grid_x", "grid_y", "grid_z"};
  for (int d = 0; d < 3; ++d) {
    const GridDim& dim = launch.grid[d];
    if (dim.is_range) {
      Term lo = eval(dim.lo), hi = eval(dim.hi);
      z3::expr sym = ctx.bv_const(DIM_NAMES[d], bits);
      assumptions.push_back(z3::sle(lo.sym, sym) && z3::sle(sym, hi.sym));
      Interval range{std::max(lo.range.lo, Int(1)), hi.range.hi};
      int atom = relations.fresh(DIM_NAMES[d], range);
      relations.bound_below(atom, lo.poly);
      relations.bound_above(atom, hi.poly);
      grid[d] = Term{range, sym, Poly::atom(atom)};
    } else {
      grid[d] = eval(dim.lo);
    }
    // A grid of no workgroups runs nothing, so every op runs with grid >= 1.
    assumptions.push_back(z3::sle(number(1), grid[d].sym));
    assumptions.push_back(z3::ult(z3::zext(workgroup[d], bits - 32), grid[d].sym));
    Int top = grid[d].range.hi - 1;
    workgroup_range[d] = {0, top < 0 ? 0 : top};
    int atom = relations.fresh(std::string("workgroup_") + "xyz"[d], workgroup_range[d]);
    relations.bound_above(atom, grid[d].poly - Poly::constant(1));
    workgroup_poly[d] = Poly::atom(atom);
  }
  assumptions.push_back(z3::ult(lane, ctx.bv_val(static_cast<uint64_t>(launch.block), 32)));
  lane_range = {0, launch.block - 1};
  lane_poly = Poly::atom(relations.fresh("lane", lane_range));
}

z3::expr LaunchModel::floor_div_term(const z3::expr& a, const z3::expr& b) const {
  z3::expr q = a / b;  // signed division, rounding toward zero
  z3::expr zero = number(0);
  z3::expr inexact = z3::srem(a, b) != zero;
  z3::expr signs_differ = z3::slt(a, zero) != z3::slt(b, zero);
  return z3::ite(inexact && signs_differ, q - number(1), q);
}

Term LaunchModel::eval(const Expr& e) const {
  Term t = eval_unwatched(e);
  watch(t.range);
  return t;
}

Term LaunchModel::eval_unwatched(const Expr& e) const {
  switch (e.kind) {
    case Expr::Kind::number: return Term{Interval::exactly(e.number), number(e.number), Poly::constant(e.number)};
    case Expr::Kind::name: {
      auto found = names_.find(e.name);
      if (found == names_.end()) throw PlanError("the name '" + e.name + "' has no value in launch " + std::to_string(index));
      return found->second;
    }
    default: break;
  }
  Term a = eval(e.args[0]), b = eval(e.args[1]);
  switch (e.kind) {
    case Expr::Kind::add: return Term{add(a.range, b.range), a.sym + b.sym, a.poly + b.poly};
    case Expr::Kind::sub: return Term{sub(a.range, b.range), a.sym - b.sym, a.poly - b.poly};
    case Expr::Kind::mul: return Term{mul(a.range, b.range), a.sym * b.sym, a.poly * b.poly};
    default: return folded(e, a, b);
  }
}

// min, max, floor and ceiling division: an atom of its own, bounded by its operands' polynomials
// (by the quotient's definition where the divisor is positive: `b q <= a < b q + b`).
Term LaunchModel::folded(const Expr& e, const Term& a, const Term& b) const {
  std::string text = expr_text(e);
  auto known = folded_.find(text);
  if (known != folded_.end()) return known->second;
  Term t{Interval{}, number(0), {}};
  switch (e.kind) {
    case Expr::Kind::min: t = Term{min(a.range, b.range), z3::ite(z3::slt(a.sym, b.sym), a.sym, b.sym), {}}; break;
    case Expr::Kind::max: t = Term{max(a.range, b.range), z3::ite(z3::slt(a.sym, b.sym), b.sym, a.sym), {}}; break;
    case Expr::Kind::div: t = Term{floor_div(a.range, b.range), floor_div_term(a.sym, b.sym), {}}; break;
    default: {  // ceil(a,b) = -floor(-a/b)
      z3::expr negated = number(0) - a.sym;
      t = Term{ceil_div(a.range, b.range), number(0) - floor_div_term(negated, b.sym), {}};
    }
  }
  int atom = relations.fresh(text, t.range);
  t.poly = Poly::atom(atom);
  if (e.kind == Expr::Kind::min) {
    relations.bound_above(atom, a.poly);
    relations.bound_above(atom, b.poly);
  } else if (e.kind == Expr::Kind::max) {
    relations.bound_below(atom, a.poly);
    relations.bound_below(atom, b.poly);
  } else if (b.range.lo >= 1) {  // a positive divisor, a constant or a run-time one (attention's chunk)
    relations.bound_quotient(atom, a.poly, b.poly, e.kind != Expr::Kind::div);
  }
  folded_.emplace(text, t);
  return t;
}

bool LaunchModel::contract_too_narrow() const {
  for (const auto& b : launch.args) {
    if (b.kind == Binding::Kind::scalar) eval(b.value);
    if (b.kind == Binding::Kind::view) watch(add(eval(b.offset).range, eval(b.bytes).range));
  }
  for (const auto& buffer : plan.buffers) eval(buffer.bytes);
  return too_narrow_;
}

const Binding* LaunchModel::binding_of(const std::string& param) const {
  for (const auto& b : launch.args)
    if (b.param == param) return &b;
  return nullptr;
}

Term LaunchModel::view_bytes(const Binding& b) const {
  return b.kind == Binding::Kind::view ? eval(b.bytes) : eval(find_buffer(plan, b.buffer)->bytes);
}

std::string LaunchModel::contract() const {
  std::string sizes;
  for (const auto& s : plan.sizes)
    sizes += (sizes.empty() ? "" : ", ") + s.name + " in " + int_text(s.lo) + ".." + int_text(s.hi);
  std::string text = "launch " + std::to_string(index) + " " + launch.kernel + " (" +
                     (sizes.empty() ? "no run-time sizes" : "sizes " + sizes);
  for (const auto& level : launch.chunks) text += "; chunks of " + level.size + " by " + expr_text(level.by);
  return text + ")";
}

Int signed_value(const z3::expr& numeral) {
  std::string digits = numeral.get_decimal_string(0);
  unsigned __int128 magnitude = 0;
  for (char c : digits) magnitude = magnitude * 10 + static_cast<unsigned>(c - '0');
  unsigned bits = numeral.get_sort().bv_size();
  if (bits >= 128) return static_cast<Int>(magnitude);  // two's complement, as the term holds it
  if (magnitude >= (static_cast<unsigned __int128>(1) << (bits - 1)))
    return static_cast<Int>(magnitude) - (Int(1) << bits);
  return static_cast<Int>(magnitude);
}

std::string json_int(Int value) { return int_text(value); }

std::string LaunchModel::witness(const z3::model& model,
                                 const std::vector<std::pair<std::string, z3::expr>>& values) const {
  auto value_of = [&](const z3::expr& e) { return json_int(signed_value(model.eval(e, true))); };
  std::string json = "{\"launch\": " + std::to_string(index) + ", \"sizes\": {";
  bool first = true;
  for (const auto& s : plan.sizes) {
    json += std::string(first ? "" : ", ") + "\"" + s.name + "\": " + value_of(names_.at(s.name).sym);
    first = false;
  }
  json += "}";
  for (size_t depth = 0; depth < launch.chunks.size(); ++depth)
    json += ", \"" + chunk_key(int(depth)) + "\": {\"first\": " + value_of(names_.at(launch.chunks[depth].first).sym) +
            ", \"count\": " + value_of(names_.at(launch.chunks[depth].count).sym) + "}";
  json += ", \"grid\": [" + value_of(grid[0].sym) + ", " + value_of(grid[1].sym) + ", " + value_of(grid[2].sym) + "]";
  auto unsigned_of = [&](const z3::expr& e) { return value_of(z3::zext(e, 32)); };
  json += ", \"workgroup\": [" + unsigned_of(workgroup[0]) + ", " + unsigned_of(workgroup[1]) + ", " +
          unsigned_of(workgroup[2]) + "]";
  json += ", \"lane\": " + unsigned_of(lane) + ", \"values\": {";
  first = true;
  for (const auto& [name, e] : values) {
    json += std::string(first ? "" : ", ") + "\"" + name + "\": " + value_of(e);
    first = false;
  }
  return json + "}}";
}

}  // namespace kemit::proof

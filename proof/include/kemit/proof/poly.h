// The relational domain of the prover: exact polynomials over atoms (sizes, chunk, grid, ids,
// loop variables, values the prover cannot follow), each atom with an interval, a divisor and
// symbolic bounds `scale * atom <= poly` / `>= poly` over atoms made before it. `prove_nonneg`
// decides `P >= 0` by eliminating the newest atom first (Fourier-Motzkin style substitution of
// the bound its coefficient's sign asks for) until intervals decide, so `iv < rows` bounds
// `iv * 1024` against `rows * 4096` and `first*524 + count*524` compares as `524*(first+count)`.
#pragma once
#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kemit/proof/interval.h"

namespace kemit::proof {

// Atom ids, sorted, repeated for powers; empty: the constant. Inline up to degree 4, and the terms
// in one sorted array (the order of std::map's, so every search goes as before): the prover builds
// and drops polynomials by the million, and a node and a vector per term were most of its time.
using Monomial = boost::container::small_vector<int, 4>;

struct Poly {
  boost::container::flat_map<Monomial, Int> terms;  // no zero coefficients

  static Poly constant(Int c);
  static Poly atom(int id);
  bool is_constant() const { return terms.empty() || (terms.size() == 1 && terms.begin()->first.empty()); }
  Int constant_part() const;
};

Poly operator+(const Poly& a, const Poly& b);
Poly operator-(const Poly& a, const Poly& b);
Poly operator*(const Poly& a, const Poly& b);
Poly scaled(const Poly& a, Int factor);

// A bound of an atom x: `scale * x <= rhs` (upper) or `scale * x >= rhs` (lower). The scale is a
// constant >= 1 or a polynomial over older atoms (a run-time divisor: `b * q <= a` for q = a / b),
// used only where its interval shows it >= 1.
struct AtomBound {
  Poly scale = Poly::constant(1);
  Poly rhs;
};

struct Atom {
  std::string name;  // for reading a failure, never for identity
  Interval range;
  Int multiple = 1;  // the atom is a multiple of it
  std::vector<AtomBound> upper, lower;
};

// `range` narrowed to the multiples of `multiple` it holds (unchanged for 0 or 1, or when it holds none).
Interval multiples_within(Interval range, Int multiple);

class Relations {
 public:
  // A new atom (newer than every other) with its interval and divisor (0/1: none known).
  int fresh(const std::string& name, Interval range, Int multiple = 1);
  void bound_above(int atom, Poly rhs, Int scale = 1) { bound_above(atom, std::move(rhs), Poly::constant(scale)); }
  void bound_below(int atom, Poly rhs, Int scale = 1) { bound_below(atom, std::move(rhs), Poly::constant(scale)); }
  void bound_above(int atom, Poly rhs, Poly scale);
  void bound_below(int atom, Poly rhs, Poly scale);
  // The quotient facts of q = a / b (rounded down, b >= 1): `b q <= a <= b q + b - 1`; rounded up
  // (ceiling): `b q - b + 1 <= a <= b q`. For a constant or a run-time b alike.
  void bound_quotient(int q, const Poly& a, const Poly& b, bool ceiling = false);
  // True when every value of `p` is a multiple of m >= 1: each term's coefficient times its atoms'
  // divisors is (an aligned view offset: `first*q_tiles*4096` keeps 16).
  bool is_multiple(const Poly& p, Int m) const;
  const Atom& atom(int id) const { return atoms_.at(id); }
  // The interval of `p` over its atoms' intervals (sound, not tight).
  Interval range_of(const Poly& p) const;
  // True when `p >= 0` follows from the atoms' intervals and bounds; false when not shown.
  bool prove_nonneg(const Poly& p) const;
  bool prove_all_nonneg(const std::vector<Poly>& polys) const;

 private:
  bool nonneg(const Poly& p, int& budget) const;
  std::vector<Atom> atoms_;
};

}  // namespace kemit::proof

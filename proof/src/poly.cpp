#include "kemit/proof/poly.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace kemit::proof {
namespace {

// Each proof explores at most this many substitutions; past it the obligation goes on to z3.
constexpr int SEARCH_BUDGET = 2000;
// A monomial past this degree is left to z3: substitution only ever multiplies.
constexpr size_t MAX_DEGREE = 6;

void add_term(Poly& p, const Monomial& m, Int c) {
  if (c == 0) return;
  Int& slot = p.terms[m];
  slot += c;
  if (slot == 0) p.terms.erase(m);
}

Int round_up(Int v, Int m) { return v >= 0 ? (v + m - 1) / m * m : -((-v) / m * m); }
Int round_down(Int v, Int m) { return v >= 0 ? v / m * m : -round_up(-v, m); }

// `x <= P` (or `>=`) for an x that is a multiple of m, where P's every other coefficient is one
// too: P's remainder is its constant's, so x keeps to the multiple of m at or inside P.
AtomBound to_multiple(const AtomBound& bound, Int m, bool upper) {
  if (m <= 1 || !bound.scale.is_constant() || bound.scale.constant_part() != 1) return bound;
  for (const auto& [mono, c] : bound.rhs.terms)
    if (!mono.empty() && c % m != 0) return bound;
  Int rest = ((bound.rhs.constant_part() % m) + m) % m;
  if (rest == 0) return bound;
  return {Poly::constant(1), bound.rhs + Poly::constant(upper ? -rest : m - rest)};
}

}  // namespace

Poly Poly::constant(Int c) {
  Poly p;
  add_term(p, {}, c);
  return p;
}

Poly Poly::atom(int id) {
  Poly p;
  p.terms[{id}] = 1;
  return p;
}

Int Poly::constant_part() const {
  auto found = terms.find({});
  return found == terms.end() ? 0 : found->second;
}

namespace {

using Terms = decltype(Poly::terms)::sequence_type;

// The polynomial of `terms`, which are in monomial order with no monomial twice and no zero
// coefficient: the array taken as it is (a term inserted at a time moves the array's tail).
Poly of_ordered(Terms&& terms) {
  Poly p;
  p.terms.adopt_sequence(boost::container::ordered_unique_range, std::move(terms));
  return p;
}

}  // namespace

// Both term arrays are in monomial order: one merge, like-terms summed, zero sums dropped.
Poly operator+(const Poly& a, const Poly& b) {
  Terms sum;
  sum.reserve(a.terms.size() + b.terms.size());
  auto i = a.terms.begin(), j = b.terms.begin();
  while (i != a.terms.end() || j != b.terms.end()) {
    if (j == b.terms.end() || (i != a.terms.end() && i->first < j->first)) {
      sum.push_back(*i++);
    } else if (i == a.terms.end() || j->first < i->first) {
      sum.push_back(*j++);
    } else {
      if (Int c = i->second + j->second; c != 0) sum.emplace_back(i->first, c);
      ++i, ++j;
    }
  }
  return of_ordered(std::move(sum));
}

Poly scaled(const Poly& a, Int factor) {
  Terms terms;
  terms.reserve(a.terms.size());
  for (const auto& [m, c] : a.terms)
    if (Int product = c * factor; product != 0) terms.emplace_back(m, product);
  return of_ordered(std::move(terms));
}

Poly operator-(const Poly& a, const Poly& b) { return a + scaled(b, -1); }

// Every pair of terms, sorted by monomial once, like-terms summed, zero sums dropped.
Poly operator*(const Poly& a, const Poly& b) {
  Terms products;
  products.reserve(a.terms.size() * b.terms.size());
  for (const auto& [ma, ca] : a.terms)
    for (const auto& [mb, cb] : b.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      products.emplace_back(std::move(m), ca * cb);
    }
  auto by_monomial = [](const auto& x, const auto& y) { return x.first < y.first; };
  if (!std::is_sorted(products.begin(), products.end(), by_monomial))
    std::sort(products.begin(), products.end(), by_monomial);
  Terms product;
  product.reserve(products.size());
  for (auto& [m, c] : products) {
    if (!product.empty() && product.back().first == m) product.back().second += c;
    else product.emplace_back(std::move(m), c);
  }
  product.erase(std::remove_if(product.begin(), product.end(), [](const auto& term) { return term.second == 0; }),
                product.end());
  return of_ordered(std::move(product));
}

Interval multiples_within(Interval range, Int multiple) {
  if (multiple <= 1 || range.lo > range.hi) return range;
  Interval rounded{round_up(range.lo, multiple), round_down(range.hi, multiple)};
  return rounded.lo <= rounded.hi ? rounded : range;
}

int Relations::fresh(const std::string& name, Interval range, Int multiple) {
  atoms_.push_back(Atom{name, multiples_within(range, multiple), multiple > 1 ? multiple : 1, {}, {}});
  return static_cast<int>(atoms_.size()) - 1;
}

void Relations::bound_above(int atom, Poly rhs, Poly scale) {
  atoms_.at(atom).upper.push_back({std::move(scale), std::move(rhs)});
}
void Relations::bound_below(int atom, Poly rhs, Poly scale) {
  atoms_.at(atom).lower.push_back({std::move(scale), std::move(rhs)});
}

void Relations::bound_quotient(int q, const Poly& a, const Poly& b, bool ceiling) {
  Poly slack = b - Poly::constant(1);
  if (ceiling) {
    bound_below(q, a, b);
    bound_above(q, a + slack, b);
  } else {
    bound_above(q, a, b);
    bound_below(q, a - slack, b);
  }
}

bool Relations::is_multiple(const Poly& p, Int m) const {
  for (const auto& [mono, c] : p.terms) {
    Int shared = gcd(c < 0 ? -c : c, m);  // gcd(x y, m) = gcd(gcd(x, m) y, m): no product overflows
    for (int id : mono) shared = gcd(shared * atoms_.at(id).multiple, m);
    if (shared != m) return false;
  }
  return true;
}

Interval Relations::range_of(const Poly& p) const {
  Interval sum = Interval::exactly(0);
  for (const auto& [m, c] : p.terms) {
    Interval term = Interval::exactly(c);
    for (int id : m) term = mul(term, atoms_.at(id).range);
    sum = add(sum, term);
  }
  return sum;
}

bool Relations::prove_nonneg(const Poly& p) const {
  int budget = SEARCH_BUDGET;
  return nonneg(p, budget);
}

bool Relations::prove_all_nonneg(const std::vector<Poly>& polys) const {
  for (const Poly& p : polys)
    if (!prove_nonneg(p)) return false;
  return true;
}

// An atom bounded above and below by one polynomial (a value a branch renamed) is that polynomial.
static const Poly* equal_to(const Atom& atom) {
  for (const auto& up : atom.upper)
    for (const auto& down : atom.lower)
      if (up.scale.terms == down.scale.terms && up.scale.is_constant() && up.scale.constant_part() == 1 &&
          up.rhs.terms == down.rhs.terms)
        return &up.rhs;
  return nullptr;
}

// p = c1 * x + c0 for its newest atom x: with c1 >= 0 a lower bound `s x >= L` gives
// s p >= c1 L + s c0, with c1 <= 0 an upper bound alike; either is p's sign when it is >= 0.
bool Relations::nonneg(const Poly& p, int& budget) const {
  if (--budget < 0) return false;
  Interval range = range_of(p);
  if (range.lo >= 0) return true;
  if (range.hi < 0 || p.is_constant()) return false;
  int x = -1;
  for (const auto& [m, c] : p.terms) {
    if (m.size() > MAX_DEGREE) return false;
    if (!m.empty()) x = std::max(x, m.back());
  }
  Poly c1, c0;
  for (const auto& [m, c] : p.terms) {
    auto count = std::count(m.begin(), m.end(), x);
    if (count > 1) return false;  // x squared: not linear in the atom it eliminates
    if (count == 0) {
      c0.terms[m] = c;
      continue;
    }
    Monomial rest = m;
    rest.erase(std::find(rest.begin(), rest.end(), x));
    c1.terms[rest] = c;
  }
  const Atom& atom = atoms_.at(x);
  Interval sign = range_of(c1);
  bool grows = sign.lo >= 0;
  if (!grows && sign.hi > 0) {  // a coefficient of either sign: only an equality eliminates x
    const Poly* same = equal_to(atom);
    return same && nonneg(c1 * *same + c0, budget);
  }
  // s p >= c1 L + s c0 (or <=, alike) shows p's sign only where s is positive.
  auto shown_by = [&](const AtomBound& candidate) {
    if (!candidate.scale.is_constant() && range_of(candidate.scale).lo < 1) return false;
    AtomBound bound = to_multiple(candidate, atom.multiple, !grows);
    return nonneg(c1 * bound.rhs + c0 * bound.scale, budget);
  };
  for (const auto& candidate : grows ? atom.lower : atom.upper)
    if (shown_by(candidate)) return true;
  return shown_by({Poly::constant(1), Poly::constant(grows ? atom.range.lo : atom.range.hi)});
}

}  // namespace kemit::proof

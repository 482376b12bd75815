// The builder: the only way to make IR. Mirrors py_engine/kemit/ir/builder.py.
//
// A kernel is params, LDS buffers, attributes and a body region of ops. Every value has an
// explicit id, given in creation order, so the canonical text never depends on naming. Control
// flow is structured: `for` (with loop-carried values) and `if`; no raw branches. Each op's
// exact lane-by-lane meaning is written in docs/ir.md.
//
// C++ evaluates call arguments in an unspecified order, and ids are given in creation order:
// a caller that nests builder calls must sequence them (one statement per op) to mirror Python.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/deque.hpp>
#include <boost/container/options.hpp>
#include <boost/container/small_vector.hpp>

#include "kemit/ir/types.h"

namespace kemit::ir {

// Malformed IR: the message names the op and what was expected.
struct BuildError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Value {
  int id = 0;
  Type type;
  bool operator==(const Value& other) const { return id == other.id && type == other.type; }
};

// An attribute value as Python holds it: True (a flag), an int, or a str.
struct Attr {
  enum class Kind { flag, integer, text };
  Kind kind = Kind::flag;
  int64_t integer = 0;
  std::string text;

  static Attr flag() { return Attr{}; }
  static Attr of(int64_t value) { return Attr{Kind::integer, value, ""}; }
  static Attr of(std::string value) { return Attr{Kind::text, 0, std::move(value)}; }
  bool operator==(const Attr& other) const {
    return kind == other.kind && integer == other.integer && text == other.text;
  }
};
// C++ only: an attribute's key is text that lives as long as the program (a string literal or a
// name from tables::), so an op holds a view of it and never copies it. Only those two can make
// one: a key can never point into a string that dies before the op.
class AttrKey {
 public:
  template <size_t N>
  constexpr AttrKey(const char (&literal)[N]) : text_(literal, N - 1) {}  // implicit: {"align", ...}
  // A name out of one of the generated tables (tables.h: static storage), e.g. an op's flag.
  static constexpr AttrKey from_table(std::string_view name) { return AttrKey(name, 0); }
  constexpr std::string_view text() const { return text_; }

 private:
  constexpr AttrKey(std::string_view name, int) : text_(name) {}
  std::string_view text_;
};

// Sorted by key, as every reader of an op's attributes sorts them (Python: a dict). C++ keeps
// them in one sorted list, held in place up to two items, with the part of std::map's interface
// the engine uses: an op has at most a few attributes, so building one allocates nothing and a
// lookup compares a few short keys in place.
class Attrs {
 public:
  using value_type = std::pair<std::string_view, Attr>;
  using Items = boost::container::small_vector<value_type, 2>;
  using const_iterator = Items::const_iterator;

  Attrs() = default;
  // As std::map's: sorted by key; of repeated keys the first one counts.
  Attrs(std::initializer_list<std::pair<AttrKey, Attr>> items) {
    items_.reserve(items.size());
    for (const auto& [key, value] : items) items_.emplace_back(key.text(), value);
    // Insertion sort (a few items; std::stable_sort would allocate), then drop repeats.
    for (size_t i = 1; i < items_.size(); ++i)
      for (size_t j = i; j > 0 && items_[j].first < items_[j - 1].first; --j) std::swap(items_[j], items_[j - 1]);
    items_.erase(std::unique(items_.begin(), items_.end(),
                             [](const value_type& a, const value_type& b) { return a.first == b.first; }),
                 items_.end());
  }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const_iterator find(std::string_view key) const {
    for (auto item = items_.begin(); item != items_.end(); ++item)
      if (item->first == key) return item;
    return items_.end();
  }
  size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  // Throws std::out_of_range for a missing key, as std::map::at does.
  const Attr& at(std::string_view key) const {
    auto found = find(key);
    if (found == end()) throw std::out_of_range("no attribute '" + std::string(key) + "'");
    return found->second;
  }
  // The value of `key`, inserted in key order when new.
  Attr& operator[](AttrKey key) {
    auto place = items_.begin();
    while (place != items_.end() && place->first < key.text()) ++place;
    if (place == items_.end() || place->first != key.text()) place = items_.emplace(place, key.text(), Attr{});
    return place->second;
  }
  bool operator==(const Attrs& other) const { return items_ == other.items_; }
  void reserve(size_t count) { items_.reserve(count); }

 private:
  Items items_;
};

struct Op;
// C++ only: a region's ops in blocks of 16, so adding one never moves the others (an op holds
// its values in place and is a few hundred bytes: a growing std::vector spent most of the build
// moving them). Reads like a std::vector: iteration, size, back, [i].
using Ops = boost::container::deque<Op, void, boost::container::deque_options_t<boost::container::block_size<16>>>;
struct Region {
  std::vector<Value> args;
  Ops ops;
};

using tables::OpKind;

// C++ only: an op's values, held in place up to N (every op but for and yield has at most three
// operands and one result), so building an op allocates nothing; they read like a std::vector.
template <size_t N>
using Values = boost::container::small_vector<Value, N>;

struct Op {
  OpKind name;  // Python's op.name; tables::op_name(name) is its text
  Values<1> results;
  Values<3> operands;
  Attrs attrs;
  std::vector<Region> regions;
};

struct Param {
  Value value;
  std::string name;
  Attrs attrs;
};

struct LdsBuffer {
  Value value;
  std::string name;
  Type element;
  int count = 0;
  int align = 0;
};

struct Kernel {
  std::string name;
  std::string arch;
  std::vector<std::pair<std::string, std::string>> attrs;  // insertion order, like a Python dict
  std::vector<Param> params;
  std::vector<LdsBuffer> lds;
  Region body;
};

// Python's INT_FLAGS, ICMP_PREDICATES and FCMP_PREDICATES are the flags and predicates columns of
// tables::OPS (tables/ops.json); its ATOMIC_ORDERS and ATOMIC_SCOPES the orders and scopes columns;
// its CAST_RULES are the cast columns.
extern const std::vector<std::string> DIMS;
// row_ror:1 .. row_ror:15; 0 to 0xFF are quad_perm controls.
constexpr int DPP_ROW_ROR_FIRST = 0x121;
constexpr int DPP_ROW_ROR_LAST = 0x12F;
// One canonical mma instruction: A and B fragment type, accumulator type, wave size.
struct MmaInstruction {
  std::string name;
  std::string operand;
  std::string accumulator;
  int wave_size;
};
// tables/mma_instructions.json, in its order; docs/ir.md gives each one's lane layout.
extern const std::vector<MmaInstruction> MMA_INSTRUCTIONS;

// C++ only: Python's repr() of a float ("1.0", "0.1", "1e-05", "inf"): the builder's error texts use it.
std::string float_repr(double value);
// The bit pattern of `value` in float type `t`; only exactly representable values.
uint32_t float_bits(const Type& t, double value);
bool is_power_of_two(int64_t n);

// C++ only: held in place ({"nuw", "nsw"} at a call allocates nothing); the builder keeps the
// table's spelling of each flag, not the caller's text.
using Flags = boost::container::small_vector<std::string_view, 2>;
// body(iv, iters) returns the next iters.
using LoopBody = std::function<std::vector<Value>(const Value& iv, const std::vector<Value>& iters)>;
using IfBody = std::function<void()>;

class Builder {
 public:
  Builder(const std::string& name, const std::string& arch);
  // The open-region stack points into this object: a builder stays where it was made.
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // ---- kernel interface ----
  void attr(const std::string& key, const std::string& value);
  Value param(const std::string& name, const Type& t, int64_t align = 0, bool noalias = false,
              bool nocapture = false, bool readonly = false, bool writeonly = false);
  Value lds(const std::string& name, const Type& element, int count, int align);
  // Moves the kernel out (C++ only: no copy of every op); the builder is spent afterwards.
  Kernel finish();

  // ---- constants and special registers ----
  Value const_int(const Type& t, int64_t value);
  Value const_float(const Type& t, double value);
  Value workitem_id(const std::string& dim);
  Value workgroup_id(const std::string& dim);
  Value num_workgroups(const std::string& dim);

  // ---- integer and float arithmetic ----
  Value add(const Value& a, const Value& b, const Flags& flags = {});
  Value sub(const Value& a, const Value& b, const Flags& flags = {});
  Value mul(const Value& a, const Value& b, const Flags& flags = {});
  Value udiv(const Value& a, const Value& b);
  Value urem(const Value& a, const Value& b);
  Value shl(const Value& a, const Value& b, const Flags& flags = {});
  Value lshr(const Value& a, const Value& b);
  Value bit_and(const Value& a, const Value& b);
  Value bit_or(const Value& a, const Value& b, const Flags& flags = {});
  Value fadd(const Value& a, const Value& b);
  Value fsub(const Value& a, const Value& b);
  Value fmul(const Value& a, const Value& b);
  Value fdiv(const Value& a, const Value& b);
  Value fmax(const Value& a, const Value& b);
  Value fmin(const Value& a, const Value& b);
  Value fma(const Value& a, const Value& b, const Value& c);
  Value fneg(const Value& a);
  Value exp(const Value& a);
  Value sqrt(const Value& a);
  Value icmp(const std::string& pred, const Value& a, const Value& b);
  Value fcmp(const std::string& pred, const Value& a, const Value& b);
  Value select(const Value& cond, const Value& a, const Value& b);

  // ---- casts ----
  Value zext(const Value& v, const Type& t, bool nneg = false);
  Value sext(const Value& v, const Type& t);
  Value trunc(const Value& v, const Type& t);
  Value fpext(const Value& v, const Type& t);
  Value fptrunc(const Value& v, const Type& t);
  Value sitofp(const Value& v, const Type& t);
  Value fptosi(const Value& v, const Type& t);

  // ---- memory ----
  // p + index * sizeof(element); index is an i32 known to be in [0, 2^31).
  Value ptr_add(const Value& p, const Value& index, const Type& element);
  Value load(const Type& t, const Value& p, int align);
  void store(const Value& v, const Value& p, int align);
  // Adds the i32 v to the i32 at p in one indivisible read-modify-write; returns the value p held
  // before. Atomic with the other atomics of `scope` to the same address (docs/ir.md).
  Value atomic_add(const Value& p, const Value& v, const std::string& order, const std::string& scope, int align);
  // Every wave of the workgroup arrives here; LDS writes before it are seen after it.
  void barrier();
  Value readfirstlane(const Value& v);

  // ---- vector element ops ----
  // Lane `index` of vector v, as a scalar.
  Value extract_element(const Value& v, int index);
  // v with lane `index` replaced by scalar s.
  Value insert_element(const Value& v, const Value& s, int index);
  // Lane i of the result is lane mask[i] of a ++ b (lanes of a first, then lanes of b).
  Value shuffle(const Value& a, const Value& b, const std::vector<int>& mask);

  // ---- cross-lane ops ----
  // Every lane reads v from lane (lane mod wave size) of its wave (ds_bpermute).
  Value bpermute(const Value& v, const Value& lane);
  // v from the lane a DPP control selects within the lane's row of 16 (old if that lane is off).
  Value update_dpp(const Value& old, const Value& v, int ctrl);

  // ---- matrix ops ----
  // c + a x b on the matrix cores, over the wave's fragments (layouts: docs/ir.md).
  Value mma(const std::string& instr, const Value& a, const Value& b, const Value& c);

  // ---- structured control flow ----
  // for iv = lo; iv < hi (signed); iv += step. Returns the loop's results: the final iters
  // (the inits when the loop runs zero times).
  std::vector<Value> for_loop(const Value& lo, const Value& hi, const Value& step,
                              const std::vector<Value>& inits, const LoopBody& body);
  void if_then(const Value& cond, const IfBody& then_body);
  void if_then_else(const Value& cond, const IfBody& then_body, const IfBody& else_body);

 private:
  using TypeCheck = bool (*)(const Type&);

  void _if(const Value& cond, std::initializer_list<const IfBody*> bodies);
  Region& _current();
  Value _new_value(const Type& t);
  std::optional<Value> _emit(OpKind name, std::initializer_list<Value> operands,
                             const std::optional<Type>& result_type, Attrs&& attrs);
  void _check_new_name(const std::string& name) const;
  static std::string _dim(const std::string& dim);
  static void _same_types(OpKind name, std::initializer_list<Value> values, TypeCheck predicate, const char* what);
  Value _int_binary(OpKind name, const Value& a, const Value& b, const Flags& flags);
  Value _float_op(OpKind name, std::initializer_list<Value> operands);
  Value _compare(OpKind name, const std::string& pred, const tables::Names& predicates, const Value& a,
                 const Value& b);
  Value _cast(OpKind name, const Value& v, const Type& t, Attrs&& attrs);
  static void _check_access(OpKind name, const Type& t, const Value& p, int align);
  static void _check_atomic(OpKind name, const Value& p, const Value& v, const std::string& order,
                            const std::string& scope, int align);
  static void _check_lane(OpKind name, const Type& t, int index);

  Kernel _kernel;
  int _next_id = 0;
  // Open regions, innermost last. A region's parent only grows after the region is closed,
  // so these pointers stay valid while they are on the stack.
  std::vector<Region*> _regions;
};

}  // namespace kemit::ir

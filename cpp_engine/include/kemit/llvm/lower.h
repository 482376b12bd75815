// Lowering: canonical IR -> LLVM IR text for one flavor. Mirrors py_engine/kemit/llvm/lower.py.
//
// Structured control flow becomes basic blocks and phis (loops are rotated: a guard, then a
// body that ends in the latch). Names are deterministic: `%v<id>` for IR values,
// `%v<id>.<role>` for the helper values an op needs, `<kind><n>.<role>` for blocks in order
// of appearance.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kemit/ir/builder.h"
#include "kemit/ir/text.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/spelling.h"

namespace kemit::llvm {

extern const std::map<std::string, std::string> KERNEL_ATTRIBUTES;
// Python's INT_OPCODES, FLOAT_OPCODES, FLOAT_INTRINSICS, CASTS and FLOAT_CASTS are the llvm and cast
// columns of tables::OPS (tables/ops.json); C++ reads them from the op's row.
// (workgroup size i16, grid size i32) offsets in the HSA dispatch packet.
extern const std::map<std::string, std::pair<int, int>> DISPATCH_OFFSETS;

struct LowerError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The flavor gate: "" when the flavor's LLVM knows the processor, else the refusal.
std::string processor_gate(const std::string& arch_name, const Flavor& flavor);
std::string lower_kernel(const ir::Kernel& kernel, const Flavor& flavor);
// One LLVM module holding every kernel in order: LDS globals, then one `define` per kernel, the
// declarations they share, and one attribute group per kernel (#0 for the first).
// lower_module({k}, f) == lower_kernel(k, f).
std::string lower_module(const std::vector<std::reference_wrapper<const ir::Kernel>>& kernels, const Flavor& flavor);

// C++ only: the pieces of a line as Python's f-strings spell them, appended in place to the
// lowering's text (no string built per piece, per operand or per line). A piece is text, a
// number, a type (spelled as llvm_type spells it), an attribute's value, a value's name, an
// operand as typed(v) spells it, or a call.

// A value's LLVM name, spelled when it is appended (Python keeps each name as a str in a dict).
// `text` is the name when it is not %v<id> (a param, an LDS buffer, a constant's literal), else
// empty; `suffix` is a helper value's role: %v<id><suffix>. Both views must outlive the emit.
// An integer constant's literal is its decimal number: is_number, spelled from `number`.
struct Name {
  int id = 0;
  std::string_view text;
  std::string_view suffix;
  bool is_number = false;
  int64_t number = 0;
};
struct Typed {
  ir::Type type;
  Name name;
};
// One argument of an intrinsic call: Python's (type text, operand text) pair.
struct Arg {
  std::string_view type;
  Name value;
};
// The arguments of a call, as a view of the caller's (an array, or the list call() was given).
struct Args {
  const Arg* data;
  size_t size;
};
// `call <result type> @<name>(<type> <operand>, ...)`: what Python's call() returns.
struct Call {
  std::string_view result_type;
  std::string_view name;
  Args args;
};
// The lane list "[0,1,4]" of a shuffle's mask attribute, spelled `i32 0, i32 1, i32 4`.
struct MaskLanes {
  std::string_view lanes;  // without the brackets
};

// C++ only: a piece of an f-string appended in place; Out is a std::string or an ir::TextBuffer.
template <typename Out>
[[gnu::always_inline]] inline void append_piece(Out& out, std::string_view text) {
  out.append(text.data(), text.size());
}
// A string literal: its size is known, no strlen.
template <typename Out, size_t N>
[[gnu::always_inline]] inline void append_piece(Out& out, const char (&text)[N]) {
  out.append(text, N - 1);
}
template <typename Out>
[[gnu::always_inline]] inline void append_piece(Out& out, char c) {
  out += c;
}
template <typename Out>
void append_piece(Out& out, int64_t number) {
  ir::TextBuffer::append_number(out, number);
}
template <typename Out>
void append_piece(Out& out, int number) {
  ir::TextBuffer::append_number(out, number);
}
template <typename Out>
void append_piece(Out& out, const ir::Type& t) {
  append_llvm_type(out, t);
}
// Python's f"{attrs[key]}": an integer's digits or the text.
template <typename Out>
void append_piece(Out& out, const ir::Attr& attr) {
  if (attr.kind == ir::Attr::Kind::text)
    append_piece(out, std::string_view(attr.text));
  else
    ir::TextBuffer::append_number(out, attr.integer);
}
// C++ only: an operand that is no value (a number, `false`): spelled as its text.
inline Name literal(std::string_view text) { return Name{-1, text, {}}; }

// C++ only: a Name, a typed operand, a call and a shuffle mask appended as Python's f-string shows them.
template <typename Out>
[[gnu::always_inline]] inline void append_piece(Out& out, const Name& name) {
  if (name.is_number) {
    ir::TextBuffer::append_number(out, name.number);
  } else if (!name.text.empty() || name.id < 0) {
    append_piece(out, name.text);
  } else {
    ir::TextBuffer::append_number(out, name.id, "%v");
    append_piece(out, name.suffix);
  }
}
template <typename Out>
void append_piece(Out& out, const Typed& operand) {
  append_llvm_type(out, operand.type);
  out += ' ';
  append_piece(out, operand.name);
}
template <typename Out>
void append_piece(Out& out, const Call& call) {
  out += "call ";
  append_piece(out, call.result_type);
  out += " @";
  append_piece(out, call.name);
  out += '(';
  for (size_t i = 0; i < call.args.size; ++i) {
    if (i) out += ", ";
    append_piece(out, call.args.data[i].type);
    out += ' ';
    append_piece(out, call.args.data[i].value);
  }
  out += ')';
}
template <typename Out>
void append_piece(Out& out, const MaskLanes& mask) {
  size_t start = 0;
  for (;;) {
    size_t comma = mask.lanes.find(',', start);
    if (start) out += ", ";
    out += "i32 ";
    append_piece(out, mask.lanes.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}
// C++ only: the pieces appended to out, one after the other.
template <typename Out, typename... Pieces>
void append_pieces(Out& out, const Pieces&... pieces) {
  (append_piece(out, pieces), ...);
}
// C++ only: Python's f"..." of the pieces, as one string (where a piece is kept, not emitted at once).
template <typename... Pieces>
std::string text_of(const Pieces&... pieces) {
  std::string out;
  (append_piece(out, pieces), ...);
  return out;
}

class Lowering {
 public:
  // index: the kernel's place in its module; its attribute group is #index. C++ only: `out` is
  // the module's text; function_lines writes the kernel's `define` straight into it.
  Lowering(const ir::Kernel& kernel, const Flavor& flavor, int index, ir::TextBuffer& out);

  // ---- module ----
  // Python returns lists of lines; C++ appends each line and its "\n" to `out` (the module's
  // text), from lds_lines to kernel_attributes.
  void lds_lines(ir::TextBuffer& out) const;
  // The kernel's `define`, from its signature to its closing brace.
  void function_lines();
  int index() const { return index_; }
  // One `declare` line; the intrinsic's name is text.substr(name_at, name_size).
  struct Declaration {
    std::string text;
    size_t name_at = 0;
    size_t name_size = 0;
    std::string_view name() const { return std::string_view(text).substr(name_at, name_size); }
  };
  // In the order first called (lower_module sorts them by name, as Python does).
  const std::vector<Declaration>& declared() const { return declarations; }
  void kernel_attributes(ir::TextBuffer& out) const;
  void param_text(const ir::Param& param, ir::TextBuffer& out);

  // ---- helpers ----
  // Python's emit(f"..."): C++ passes the f-string's pieces, appended to the line in place.
  template <typename... Pieces>
  void emit(const Pieces&... pieces) {
    lines += "  ";
    (append_piece(lines, pieces), ...);
    lines += '\n';
  }
  void start_block(const std::string& label);
  std::string new_block_prefix(std::string_view kind);
  void declare(std::string_view name, std::string_view result, Args args);
  // Declare and call an intrinsic; args are (type text, operand) pairs. The call is a piece for
  // emit: name, result_type and args must outlive the statement that emits it.
  Call call(std::string_view name, std::string_view result_type, Args args);
  Call call(std::string_view name, std::string_view result_type, std::initializer_list<Arg> args) {
    return call(name, result_type, Args{args.begin(), args.size()});
  }
  // Python returns the name's text; C++ returns it as a piece (valid while the lowering lives).
  Name value(const ir::Value& v) const {
    // Python: self.names[v.id] (a KeyError for a value never defined).
    size_t at = static_cast<size_t>(v.id);
    if (v.id < 0 || at >= names.size() || names[at] == NOT_NAMED) no_name(v);
    int slot = names[at];
    if (slot == DEFAULT_NAME) return Name{v.id, {}, {}};
    if (slot < 0) return Name{v.id, {}, {}, true, numbers[static_cast<size_t>(-1 - slot)]};
    return Name{v.id, custom_names[static_cast<size_t>(slot - CUSTOM)], {}};
  }
  Typed typed(const ir::Value& v) const { return Typed{v.type, value(v)}; }
  // The value's name (suffix empty: the name it is known by from now on) or a helper's name.
  Name define(const ir::Value& v, std::string_view suffix = {}) {
    if (suffix.empty()) name_slot(v.id) = DEFAULT_NAME;
    return Name{v.id, {}, suffix};
  }
  // C++ only: how value id is named (Python's self.names[id]), growing the table when id is new:
  // NOT_NAMED, DEFAULT_NAME (%v<id>), CUSTOM + an index into custom_names, or -1 - an index into
  // numbers (an integer constant).
  int& name_slot(int id) {
    size_t at = static_cast<size_t>(id);
    if (at >= names.size()) grow_names(at);
    return names[at];
  }
  // C++ only: names[id] = text, for the names that are not %v<id>.
  void set_name(int id, std::string text);
  // C++ only: names[id] = str(number), kept as the number (most constants are integers).
  void set_number(int id, int64_t number);

  // ---- ops ----
  using Handler = void (Lowering::*)(const ir::Op&);
  void lower_region(const ir::Region& region);
  Handler handler(ir::OpKind name) const;
  // C++ only: the handler of one op kind, or nullptr (handler() keeps them in a table).
  static Handler handler_of(ir::OpKind name);
  void lower_const(const ir::Op& op);
  void lower_workitem_id(const ir::Op& op);
  void lower_workgroup_id(const ir::Op& op);
  void lower_num_workgroups(const ir::Op& op);
  void lower_int_binary(const ir::Op& op);
  void lower_float_op(const ir::Op& op);
  void lower_icmp(const ir::Op& op);
  void lower_fcmp(const ir::Op& op);
  void lower_select(const ir::Op& op);
  void lower_cast(const ir::Op& op);
  void lower_cast_per_lane(const ir::Op& op);
  void lower_ptr_add(const ir::Op& op);
  void lower_load(const ir::Op& op);
  void lower_store(const ir::Op& op);
  // atomicrmw: the same spelling at every flavor (docs/ir.md, "Atomics", measured).
  void lower_atomic_add(const ir::Op& op);
  void lower_barrier(const ir::Op& op);
  void lower_readfirstlane(const ir::Op& op);

  // ---- vector element ops (lower_vector.cpp) ----
  void lower_extract_element(const ir::Op& op);
  void lower_insert_element(const ir::Op& op);
  void lower_shuffle(const ir::Op& op);

  // ---- cross-lane ops (lower_lanes.cpp) ----
  void lower_bpermute(const ir::Op& op);
  void lower_update_dpp(const ir::Op& op);
  // v as an i32 operand: itself, or an f32 bitcast into the helper value %v<result><role>.
  Name word_of(const ir::Value& v, const ir::Value& result, std::string_view role);
  // Define result from an i32-returning call (bitcast back for an f32 result).
  void finish_word(const ir::Value& result, const Call& call_text);

  // ---- matrix ops (lower_mma.cpp) ----
  void lower_mma(const ir::Op& op);

  // ---- structured control flow ----
  void lower_for(const ir::Op& op);
  void lower_if(const ir::Op& op);

  static constexpr int NOT_NAMED = 0;
  static constexpr int DEFAULT_NAME = 1;
  static constexpr int CUSTOM = 2;

 private:
  [[noreturn]] static void no_name(const ir::Value& v);
  void grow_names(size_t at);

  const ir::Kernel& kernel;
  const Flavor& flavor;
  // Python's `names` dict, by value id (ids are dense from 0): most values are named %v<id>, which
  // is spelled from the id when it is appended; only the others keep a text (custom_names). A
  // deque: growing it moves no string, so a Name's view of one stays valid.
  std::vector<int> names;
  std::deque<std::string> custom_names;
  std::vector<int64_t> numbers;
  std::vector<Declaration> declarations;
  // Python's `lines`: the body after "entry:". C++ writes it straight into the module's text, each
  // line ending in "\n" (emit appends a line's pieces in place) instead of a list joined later.
  ir::TextBuffer& lines;
  ir::TextBuffer declaration_scratch{256};  // C++ only: call() spells each declaration here
  ir::TextBuffer phi_scratch{256};          // C++ only: lower_for spells its phis here
  std::string block = "entry";
  int blocks_made = 0;
  int index_ = 0;
};

}  // namespace kemit::llvm

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
// number, a type (spelled as llvm_type spells it) or an operand as typed(v) spells it.
struct Typed {
  const ir::Type& type;
  const std::string& name;
};
// Out is a std::string or an ir::TextBuffer.
template <typename Out>
[[gnu::always_inline]] inline void append_piece(Out& out, std::string_view text) {
  out.append(text.data(), text.size());
}
template <typename Out>
void append_piece(Out& out, char c) {
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
template <typename Out>
void append_piece(Out& out, const Typed& operand) {
  append_llvm_type(out, operand.type);
  out += ' ';
  append_piece(out, operand.name);
}
// Python's f"..." of the pieces, as one string (where a piece is kept, not emitted at once).
template <typename... Pieces>
std::string text_of(const Pieces&... pieces) {
  std::string out;
  (append_piece(out, pieces), ...);
  return out;
}

class Lowering {
 public:
  // index: the kernel's place in its module; its attribute group is #index.
  Lowering(const ir::Kernel& kernel, const Flavor& flavor, int index = 0);

  // ---- module ----
  std::vector<std::string> lds_lines() const;
  // The kernel's `define`, from its signature to its closing brace. C++ returns the lines as
  // one text, each line ending in "\n" (lower_module appends it to its output as is).
  std::string function_lines();
  int index() const { return index_; }
  const std::map<std::string, std::string>& declared() const { return declarations; }
  std::string kernel_attributes() const;
  std::string param_text(const ir::Param& param);

  // ---- helpers ----
  // Python's emit(f"..."): C++ passes the f-string's pieces, appended to the line in place.
  template <typename... Pieces>
  void emit(const Pieces&... pieces) {
    lines += "  ";
    (append_piece(lines, pieces), ...);
    lines += '\n';
  }
  void start_block(const std::string& label);
  std::string new_block_prefix(const std::string& kind);
  void declare(const std::string& name, const std::string& result, const std::vector<std::string>& args);
  // Declare and call an intrinsic; args are (type text, operand text) pairs.
  std::string call(const std::string& name, const std::string& result_type,
                   const std::vector<std::pair<std::string, std::string>>& args);
  const std::string& value(const ir::Value& v) const;
  // Python returns the text; C++ returns the operand as a piece for emit (text_of spells it).
  Typed typed(const ir::Value& v) const;
  // The value's name (suffix empty: the name it is known by from now on) or a helper's name.
  std::string define(const ir::Value& v, std::string_view suffix = "");
  // names[id], growing the table when id is new (C++ only: names is a deque, not a dict).
  std::string& name_slot(int id);

  // ---- ops ----
  using Handler = void (Lowering::*)(const ir::Op&);
  void lower_region(const ir::Region& region);
  Handler handler(ir::OpKind name) const;
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
  std::string word_of(const ir::Value& v, const ir::Value& result, const std::string& role);
  // Define result from an i32-returning call (bitcast back for an f32 result).
  void finish_word(const ir::Value& result, const std::string& call_text);

  // ---- matrix ops (lower_mma.cpp) ----
  void lower_mma(const ir::Op& op);

  // ---- structured control flow ----
  void lower_for(const ir::Op& op);
  void lower_if(const ir::Op& op);

 private:
  const ir::Kernel& kernel;
  const Flavor& flavor;
  // By value id ("" = not named yet); ids are dense from 0. A deque, not a vector: growing it
  // keeps every reference value() and typed() handed out valid. In `emit(define(r), ..., value(v))`
  // the arguments are evaluated in no fixed order, so value(v)'s reference may be taken before
  // define(r) grows the table; a vector reallocated under it (AddressSanitizer found it).
  std::deque<std::string> names;
  std::map<std::string, std::string> declarations;  // sorted by name, as the module prints them
  // Python's `lines`: the body after "entry:", one text with each line ending in "\n" (emit
  // appends a line's pieces to it in place) instead of a list of lines joined later.
  ir::TextBuffer lines;
  std::string declaration_scratch;  // C++ only: call() spells each declaration here (kept capacity)
  std::string block = "entry";
  int blocks_made = 0;
  int index_ = 0;
};

}  // namespace kemit::llvm

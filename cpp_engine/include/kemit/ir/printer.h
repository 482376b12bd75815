// The canonical printer: flavor-free text with explicit value ids and sorted attributes.
// Mirrors py_engine/kemit/ir/printer.py. The text is the contract between the engines'
// builders: both must print the same bytes before any lowering happens (grammar: docs/ir.md).
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"
#include "kemit/ir/text.h"

namespace kemit::ir {

extern const char* const HEADER;

std::string print_kernel(const Kernel& kernel);
// A module of kernels (a family may build more than one): the header once, then each kernel's
// block in order. print_module({k}) == print_kernel(k).
std::string print_module(const std::vector<Kernel>& kernels);
// Python returns a list of lines; C++ appends each line and its "\n" to `lines` (the module's
// one text, never joined).
void kernel_lines(const Kernel& kernel, TextBuffer& lines);
std::string attrs_text(const Attrs& attrs);
// C++ only: `%<id>` of one value, appended to out (a std::string or a TextBuffer).
template <typename Out>
[[gnu::always_inline]] inline void append_id(Out& out, const Value& v) {
  TextBuffer::append_number(out, v.id, "%");
}
// C++ only: values_text appended to out; values is any container of Values (begin/end).
template <typename Out, typename Values>
void append_values(Out& out, const Values& values) {
  bool first = true;
  for (const Value& v : values) {
    if (!first) out += ", ";
    first = false;
    append_id(out, v);
  }
}
template <typename Values>
std::string values_text(const Values& values) {
  std::string out;
  append_values(out, values);
  return out;
}
inline std::string values_text(std::initializer_list<Value> values) {
  std::string out;
  append_values(out, values);
  return out;
}
void print_region(const Region& region, int depth, TextBuffer& lines);
std::string op_text(const Op& op);
void print_for(const Op& op, int depth, TextBuffer& lines);
void print_if(const Op& op, int depth, TextBuffer& lines);

}  // namespace kemit::ir

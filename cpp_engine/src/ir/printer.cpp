// The canonical printer: flavor-free text with explicit value ids and sorted attributes.
// Mirrors py_engine/kemit/ir/printer.py.
#include "kemit/ir/printer.h"

#include <algorithm>

#include "kemit/ir/text.h"

namespace kemit::ir {

const char* const HEADER = "; kemit canonical IR 1\n";

namespace {

// C++ only: attrs_text and op_text append to the text being printed through these, instead of
// building a string for each piece (same text, fewer allocations). Out is a std::string or a
// TextBuffer.
template <typename Out>
void append_attrs(Out& out, const Attrs& attrs) {
  if (attrs.empty()) return;
  out += " {";
  bool first = true;
  for (const auto& [key, value] : attrs) {  // Attrs iterates in sorted key order
    if (!first) out += ", ";
    first = false;
    out += key;
    if (value.kind == Attr::Kind::integer) {
      out += '=';
      TextBuffer::append_number(out, value.integer);
    }
    if (value.kind == Attr::Kind::text) {
      out += '=';
      out += value.text;
    }
  }
  out += '}';
}

template <typename Out>
void append_op_text(Out& out, const Op& op) {
  if (!op.results.empty()) {
    append_values(out, op.results);
    out += " = ";
  }
  out += tables::op_name(op.name);
  if (!op.operands.empty()) {
    out += ' ';
    append_values(out, op.operands);
  }
  append_attrs(out, op.attrs);
  if (!op.results.empty()) {
    out += " : ";
    append_type_text(out, op.results[0].type);
  }
}

// Python's "  " * depth, appended (a copy of the spaces it needs; deeper than these: one by one).
void indent(TextBuffer& lines, int depth) {
  static constexpr std::string_view SPACES = "                                ";
  size_t width = 2 * static_cast<size_t>(depth);
  if (width <= SPACES.size())
    lines += SPACES.substr(0, width);
  else
    lines.append(width, ' ');
}

}  // namespace

std::string print_kernel(const Kernel& kernel) {
  TextBuffer lines;
  lines += HEADER;
  kernel_lines(kernel, lines);
  return lines.str();
}

std::string print_module(const std::vector<Kernel>& kernels) {
  // C++ only: one text per thread, kept from one module to the next (no regrowth while printing).
  thread_local TextBuffer lines(1 << 16);
  lines.clear();
  lines += HEADER;
  for (const auto& kernel : kernels) kernel_lines(kernel, lines);
  return lines.str();
}

void kernel_lines(const Kernel& kernel, TextBuffer& lines) {
  lines += "kernel @";
  lines += kernel.name;
  lines += " {\n  arch ";
  lines += kernel.arch;
  lines += '\n';
  std::vector<const std::pair<std::string, std::string>*> attrs;  // sorted by key
  for (const auto& attr : kernel.attrs) attrs.push_back(&attr);
  std::sort(attrs.begin(), attrs.end(), [](const auto* a, const auto* b) { return *a < *b; });
  for (const auto* attr : attrs) {
    lines += "  attr ";
    lines += attr->first;
    lines += ' ';
    lines += attr->second;
    lines += '\n';
  }
  for (const auto& param : kernel.params) {
    lines += "  param ";
    append_id(lines, param.value);
    lines += ' ';
    lines += param.name;
    lines += " : ";
    append_type_text(lines, param.value.type);
    append_attrs(lines, param.attrs);
    lines += '\n';
  }
  for (const auto& buffer : kernel.lds) {
    lines += "  lds ";
    append_id(lines, buffer.value);
    lines += ' ';
    lines += buffer.name;
    lines += " : ";
    append_type_text(lines, buffer.element);
    lines += '[';
    TextBuffer::append_number(lines, buffer.count);
    lines += "] {align=";  // attrs_text({"align": buffer.align})
    TextBuffer::append_number(lines, buffer.align);
    lines += "}\n";
  }
  print_region(kernel.body, 1, lines);
  lines += "}\n";
}

std::string attrs_text(const Attrs& attrs) {
  std::string out;
  append_attrs(out, attrs);
  return out;
}

// values_text: a template in printer.h (any container of values).

void print_region(const Region& region, int depth, TextBuffer& lines) {
  for (const auto& op : region.ops) {
    if (op.name == OpKind::for_loop)
      print_for(op, depth, lines);
    else if (op.name == OpKind::if_then)
      print_if(op, depth, lines);
    else {
      indent(lines, depth);
      append_op_text(lines, op);  // op_text(op), written in place
      lines += '\n';
    }
  }
}

std::string op_text(const Op& op) {
  std::string text;
  append_op_text(text, op);
  return text;
}

void print_for(const Op& op, int depth, TextBuffer& lines) {
  const auto& operands = op.operands;
  const auto& args = op.regions[0].args;
  // Python builds the head as one f-string; C++ appends its pieces to the line in place.
  indent(lines, depth);
  if (!op.results.empty()) {
    append_values(lines, op.results);
    lines += " = ";
  }
  lines += "for ";
  append_id(lines, args[0]);
  lines += " = ";
  append_id(lines, operands[0]);
  lines += " to ";
  append_id(lines, operands[1]);
  lines += " step ";
  append_id(lines, operands[2]);
  if (args.size() > 1) {
    lines += " iter(";
    // zip(iters, inits): stops at the shorter of the two, as Python's zip does.
    for (size_t i = 1; i < args.size() && i + 2 < operands.size(); ++i) {
      if (i > 1) lines += ", ";
      append_id(lines, args[i]);
      lines += " = ";
      append_id(lines, operands[i + 2]);
      lines += " : ";
      append_type_text(lines, operands[i + 2].type);
    }
    lines += ')';
  }
  lines += " {\n";
  print_region(op.regions[0], depth + 1, lines);
  indent(lines, depth);
  lines += "}\n";
}

void print_if(const Op& op, int depth, TextBuffer& lines) {
  indent(lines, depth);
  lines += "if ";
  append_id(lines, op.operands[0]);
  lines += " {\n";
  print_region(op.regions[0], depth + 1, lines);
  if (op.regions.size() == 2) {
    indent(lines, depth);
    lines += "} else {\n";
    print_region(op.regions[1], depth + 1, lines);
  }
  indent(lines, depth);
  lines += "}\n";
}

}  // namespace kemit::ir

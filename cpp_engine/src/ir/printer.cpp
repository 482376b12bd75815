// The canonical printer: flavor-free text with explicit value ids and sorted attributes.
// Mirrors py_engine/kemit/ir/printer.py.
#include "kemit/ir/printer.h"

#include <algorithm>

#include "kemit/ir/text.h"

namespace kemit::ir {

const char* const HEADER = "; kemit canonical IR 1\n";

namespace {

std::string id_text(const Value& v) { return "%" + std::to_string(v.id); }

std::string pad_text(int depth) { return std::string(2 * depth, ' '); }

// C++ only: attrs_text, values_text and op_text append to the text being printed through
// these, instead of building a string for each piece (same text, fewer allocations). Out is a
// std::string or a TextBuffer.
template <typename Out>
void append_id(Out& out, const Value& v) {
  out += '%';
  TextBuffer::append_number(out, v.id);
}

template <typename Out, typename Values>  // Values: a std::vector or an op's in-place list
void append_values(Out& out, const Values& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    append_id(out, values[i]);
  }
}

template <typename Out>
void append_attrs(Out& out, const Attrs& attrs) {
  if (attrs.empty()) return;
  out += " {";
  bool first = true;
  for (const auto& [key, value] : attrs) {  // a std::map iterates in sorted key order
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

// Python's lines.append(text): C++ appends the line and its "\n" to the one output text.
void add_line(TextBuffer& lines, std::string_view text) {
  lines += text;
  lines += '\n';
}

}  // namespace

std::string print_kernel(const Kernel& kernel) {
  std::string out = HEADER;
  out += kernel_lines(kernel);
  return out;
}

std::string print_module(const std::vector<Kernel>& kernels) {
  std::string out = HEADER;
  for (const auto& kernel : kernels) out += kernel_lines(kernel);
  return out;
}

std::string kernel_lines(const Kernel& kernel) {
  TextBuffer lines;
  add_line(lines, "kernel @" + kernel.name + " {");
  add_line(lines, "  arch " + kernel.arch);
  auto attrs = kernel.attrs;
  std::sort(attrs.begin(), attrs.end());
  for (const auto& [key, value] : attrs) add_line(lines, "  attr " + key + " " + value);
  for (const auto& param : kernel.params)
    add_line(lines, "  param " + id_text(param.value) + " " + param.name + " : " + type_text(param.value.type) +
                        attrs_text(param.attrs));
  for (const auto& buffer : kernel.lds)
    add_line(lines, "  lds " + id_text(buffer.value) + " " + buffer.name + " : " + type_text(buffer.element) + "[" +
                        std::to_string(buffer.count) + "]" + attrs_text({{"align", Attr::of(int64_t{buffer.align})}}));
  print_region(kernel.body, 1, lines);
  add_line(lines, "}");
  return lines.str();
}

std::string attrs_text(const Attrs& attrs) {
  std::string out;
  append_attrs(out, attrs);
  return out;
}

std::string values_text(const std::vector<Value>& values) {
  std::string out;
  append_values(out, values);
  return out;
}

void print_region(const Region& region, int depth, TextBuffer& lines) {
  for (const auto& op : region.ops) {
    if (op.name == OpKind::for_loop)
      print_for(op, depth, lines);
    else if (op.name == OpKind::if_then)
      print_if(op, depth, lines);
    else {
      lines.append(2 * static_cast<size_t>(depth), ' ');
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
  lines.append(2 * static_cast<size_t>(depth), ' ');
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
  lines.append(2 * static_cast<size_t>(depth), ' ');
  add_line(lines, "}");
}

void print_if(const Op& op, int depth, TextBuffer& lines) {
  std::string pad = pad_text(depth);
  lines += pad;
  lines += "if ";
  append_id(lines, op.operands[0]);
  lines += " {\n";
  print_region(op.regions[0], depth + 1, lines);
  if (op.regions.size() == 2) {
    add_line(lines, pad + "} else {");
    print_region(op.regions[1], depth + 1, lines);
  }
  add_line(lines, pad + "}");
}

}  // namespace kemit::ir

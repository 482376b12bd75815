// The canonical printer: flavor-free text with explicit value ids and sorted attributes.
// Mirrors py_engine/kemit/ir/printer.py.
#include "kemit/ir/printer.h"

#include <algorithm>

namespace kemit::ir {

const char* const HEADER = "; kemit canonical IR 1\n";

namespace {

std::string id_text(const Value& v) { return "%" + std::to_string(v.id); }

std::string pad_text(int depth) { return std::string(2 * depth, ' '); }

// C++ only: attrs_text, values_text and op_text append to the line being printed through
// these, instead of building a string for each piece (same text, fewer allocations).
void append_id(std::string& out, const Value& v) {
  out += '%';
  out += std::to_string(v.id);
}

void append_values(std::string& out, const std::vector<Value>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    append_id(out, values[i]);
  }
}

void append_attrs(std::string& out, const Attrs& attrs) {
  if (attrs.empty()) return;
  out += " {";
  bool first = true;
  for (const auto& [key, value] : attrs) {  // a std::map iterates in sorted key order
    if (!first) out += ", ";
    first = false;
    out += key;
    if (value.kind == Attr::Kind::integer) {
      out += '=';
      out += std::to_string(value.integer);
    }
    if (value.kind == Attr::Kind::text) {
      out += '=';
      out += value.text;
    }
  }
  out += '}';
}

void append_type(std::string& out, const Type& t) { append_type_text(out, t); }

void append_op_text(std::string& out, const Op& op) {
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
    append_type(out, op.results[0].type);
  }
}

// Python's lines.append(text): C++ appends the line and its "\n" to the one output text.
void add_line(std::string& lines, const std::string& text) {
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
  std::string lines;
  lines.reserve(4096);
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
  return lines;
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

void print_region(const Region& region, int depth, std::string& lines) {
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

void print_for(const Op& op, int depth, std::string& lines) {
  std::string pad = pad_text(depth);
  const auto& operands = op.operands;
  const auto& args = op.regions[0].args;
  std::string head = op.results.empty() ? "" : values_text(op.results) + " = ";
  head += "for " + id_text(args[0]) + " = " + id_text(operands[0]) + " to " + id_text(operands[1]) + " step " +
          id_text(operands[2]);
  if (args.size() > 1) {
    std::string pairs;
    // zip(iters, inits): stops at the shorter of the two, as Python's zip does.
    for (size_t i = 1; i < args.size() && i + 2 < operands.size(); ++i)
      pairs += (pairs.empty() ? "" : ", ") + id_text(args[i]) + " = " + id_text(operands[i + 2]) + " : " +
               type_text(operands[i + 2].type);
    head += " iter(" + pairs + ")";
  }
  add_line(lines, pad + head + " {");
  print_region(op.regions[0], depth + 1, lines);
  add_line(lines, pad + "}");
}

void print_if(const Op& op, int depth, std::string& lines) {
  std::string pad = pad_text(depth);
  add_line(lines, pad + "if " + id_text(op.operands[0]) + " {");
  print_region(op.regions[0], depth + 1, lines);
  if (op.regions.size() == 2) {
    add_line(lines, pad + "} else {");
    print_region(op.regions[1], depth + 1, lines);
  }
  add_line(lines, pad + "}");
}

}  // namespace kemit::ir

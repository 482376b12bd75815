// The canonical printer: flavor-free text with explicit value ids and sorted attributes.
// Mirrors py_engine/kemit/ir/printer.py. The text is the contract between the engines'
// builders: both must print the same bytes before any lowering happens (grammar: docs/ir.md).
#pragma once
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
// C++ keeps "lines" as one text, each line ending in "\n" (appended once, never joined).
std::string kernel_lines(const Kernel& kernel);
std::string attrs_text(const Attrs& attrs);
std::string values_text(const std::vector<Value>& values);
void print_region(const Region& region, int depth, TextBuffer& lines);
std::string op_text(const Op& op);
void print_for(const Op& op, int depth, TextBuffer& lines);
void print_if(const Op& op, int depth, TextBuffer& lines);

}  // namespace kemit::ir

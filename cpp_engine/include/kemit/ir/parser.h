// The canonical parser: canonical IR text (docs/ir.md) back into a Kernel.
// Mirrors py_engine/kemit/ir/parser.py function for function, with the same error texts.
//
// The parser drives the builder, so a parsed kernel passes every operand check a built one does
// and its value ids are the builder's own (an id out of creation order is an error). The text
// must then be exactly what the printer writes for the kernel, so
// print_kernel(parse_kernel(text)) == text byte for byte; anything else is a ParseError whose
// message starts with `line N: ` (the header is line 1).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"

namespace kemit::ir {

// Text that is not canonical IR: the message starts with `line N: `. Python: ParseError.
struct ParseError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The kernel whose canonical text is `text`; ParseError (`line N: ...`) otherwise.
Kernel parse_kernel(const std::string& text);
// The kernels of a module's canonical text (the header once, then each kernel's block).
std::vector<Kernel> parse_module(const std::string& text);
// The text must be the printer's own: the first line that differs is an error.
void check_canonical(const std::vector<Kernel>& kernels, const std::string& text);

}  // namespace kemit::ir

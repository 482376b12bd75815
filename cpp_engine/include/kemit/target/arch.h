// The arch table: the processors kemit emits for, and the facts the families need.
// Mirrors py_engine/kemit/target/arch.py.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kemit/tables.h"

namespace kemit::target {

// A processor: one member per column of tables/archs.json, generated into kemit/tables.h from the
// table's schema (each column's meaning is its doc there).
using Arch = tables::Arch;

const std::vector<Arch>& archs();

// `reason` is the whole refusal text (what() would end it at a NUL byte of the name).
struct UnknownArch : std::invalid_argument {
  explicit UnknownArch(const std::string& text) : std::invalid_argument(text), reason(text) {}
  std::string reason;
};

std::vector<std::string> arch_names();
// Throws UnknownArch.
const Arch& find_arch(std::string_view name);

}  // namespace kemit::target

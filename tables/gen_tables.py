#!/usr/bin/python3
"""Generate the C++ side of the IR tables: tables/*.json -> <out>/kemit/tables.h.

The JSON files beside this script are the one source of truth for the IR's ops, scalar types,
address spaces, archs, flavors and mma instructions. The C++ engine and the interpreter include
the header this writes (CMake runs it at build time, into the build tree; nothing generated is
committed); the Python engine reads the same files at import (py_engine/kemit/tables.py).

    gen_tables.py --out DIR        write DIR/kemit/tables.h
    gen_tables.py --check FILE     exit 1 unless FILE is what the tables generate now

Exit codes: 0 ok, 1 FILE is stale, 2 a table is malformed (the message names the file, the row
and what to fix).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CPP_KEYWORDS = {"const", "for", "if", "private", "public", "and", "or", "not", "int", "float"}

# table -> {column: (type, required)}; a column not listed here is an error (a typo is caught).
COLUMNS = {
    "scalar_types": {"name": (str, True), "bits": (int, True), "class": (str, True), "llvm": (str, True)},
    "address_spaces": {"name": (str, True), "ident": (str, False), "llvm": (int, True),
                       "pointer_bytes": (int, True)},
    "archs": {"name": (str, True), "wave_size": (int, True), "lds_bytes": (int, True),
              "oldest_flavor": (str, True), "mma": (str, True)},
    "flavors": {"name": (str, True), "major": (int, True), "datalayout": (str, True),
                "or_disjoint": (bool, True), "zext_nneg": (bool, True), "gep_nuw": (bool, True),
                "splat_constants": (bool, True), "captures_attr": (bool, True),
                "readfirstlane_mangled": (bool, True), "vector_bf16_casts": (bool, True),
                "wmma_operand_mangled": (bool, True)},
    "mma_instructions": {"name": (str, True), "operand": (str, True), "accumulator": (str, True),
                         "wave_size": (int, True), "oldest_flavor": (str, True), "intrinsic": (str, True),
                         "operand_form": (str, True), "call_form": (str, True)},
    "ops": {"name": (str, True), "ident": (str, True), "group": (str, True), "operands": ((int, type(None)), True),
            "attrs": (list, False), "flags": (list, False), "llvm": (str, False), "llvm_form": (str, False),
            "cast": (dict, False), "predicates": (list, False)},
}
CHOICES = {
    ("scalar_types", "class"): ("int", "float"),
    ("mma_instructions", "operand_form"): ("native", "i16"),
    ("mma_instructions", "call_form"): ("mfma", "wmma", "wmma_mods"),
    ("ops", "group"): ("constant", "special_register", "int_binary", "float_math", "compare", "select", "cast",
                       "memory", "sync", "cross_lane", "vector", "matrix", "control"),
    ("ops", "llvm_form"): ("opcode", "intrinsic"),
}
CAST_CHOICES = {"from": ("int", "float"), "to": ("int", "float"), "widths": ("widens", "narrows", "any")}


class TableError(Exception):
    pass


def load_table(name, tables_dir=HERE):
    """The rows of tables/<name>.json, each checked against COLUMNS and CHOICES."""
    path = os.path.join(tables_dir, name + ".json")
    shown = os.path.relpath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as error:
        raise TableError(f"{shown}: cannot read the table ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise TableError(f"{shown}: not JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise TableError(f"{shown}: expected an object with a \"rows\" list")
    seen = set()
    for index, row in enumerate(data["rows"]):
        check_row(shown, name, index, row)
        if row["name"] in seen:
            raise TableError(f"{shown}: row {index} ({row['name']}): the name is already in the table")
        seen.add(row["name"])
    return data["rows"]


def check_row(shown, table, index, row):
    where = f"{shown}: row {index}" + (f" ({row['name']})" if isinstance(row, dict) and "name" in row else "")
    if not isinstance(row, dict):
        raise TableError(f"{where}: a row must be an object")
    for column in row:
        if column not in COLUMNS[table]:
            raise TableError(f"{where}: unknown column '{column}' (known: {', '.join(COLUMNS[table])})")
    for column, (kind, required) in COLUMNS[table].items():
        if column not in row:
            if required:
                raise TableError(f"{where}: missing column '{column}'")
            continue
        value = row[column]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TableError(f"{where}: column '{column}' has the wrong type (got {json.dumps(value)})")
        allowed = CHOICES.get((table, column))
        if allowed and value not in allowed:
            raise TableError(f"{where}: column '{column}' must be one of {', '.join(allowed)} (got {value})")
    for key, allowed in CAST_CHOICES.items():
        if "cast" in row and row["cast"].get(key) not in allowed:
            raise TableError(f"{where}: cast.{key} must be one of {', '.join(allowed)}")


def load_all(tables_dir=HERE):
    tables = {name: load_table(name, tables_dir) for name in COLUMNS}
    flavors = {row["name"] for row in tables["flavors"]}
    for table in ("archs", "mma_instructions"):
        for row in tables[table]:
            if row["oldest_flavor"] not in flavors:
                raise TableError(f"tables/{table}.json: {row['name']}: oldest_flavor {row['oldest_flavor']} is not "
                                 f"in tables/flavors.json")
    return tables


def ident(row):
    name = row.get("ident", row["name"])
    if name in CPP_KEYWORDS or not name.isidentifier():
        raise TableError(f"{row['name']}: '{name}' cannot name a C++ enumerator: give the row an ident")
    return name


def text(value):
    return json.dumps(value)  # a JSON string literal is a valid C++ string literal here (ASCII)


def names_array(name, items):
    if not items:
        return f"inline constexpr Names {name}{{nullptr, 0}};"
    return (f"inline constexpr std::string_view {name}_ITEMS[] = {{{', '.join(text(i) for i in items)}}};\n"
            f"inline constexpr Names {name}{{{name}_ITEMS, {len(items)}}};")


def enum(name, rows):
    return f"enum class {name} : uint8_t {{ {', '.join(ident(row) for row in rows)} }};"


def generate(tables):
    out = [HEADER]
    out.append(enum("ScalarKind", tables["scalar_types"]))
    out.append("struct ScalarRow { std::string_view name; int bits; bool is_float; std::string_view llvm; };")
    out.append("inline constexpr ScalarRow SCALAR_TYPES[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['bits']}, {str(r['class'] == 'float').lower()}, {text(r['llvm'])}}},\n"
        for r in tables["scalar_types"]) + "};")
    out.append(enum("AddressSpace", tables["address_spaces"]))
    out.append("struct AddressSpaceRow { std::string_view name; int llvm; int pointer_bytes; };")
    out.append("inline constexpr AddressSpaceRow ADDRESS_SPACES[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['llvm']}, {r['pointer_bytes']}}},\n" for r in tables["address_spaces"]) + "};")
    out.append("struct ArchRow { std::string_view name; int wave_size; int lds_bytes; std::string_view oldest_flavor; "
               "std::string_view mma; };")
    out.append("inline constexpr ArchRow ARCHS[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['wave_size']}, {r['lds_bytes']}, {text(r['oldest_flavor'])}, {text(r['mma'])}}},\n"
        for r in tables["archs"]) + "};")
    bools = [c for c, (kind, _) in COLUMNS["flavors"].items() if kind is bool]
    out.append("struct FlavorRow { std::string_view name; int major; std::string_view datalayout; "
               + " ".join(f"bool {c};" for c in bools) + " };")
    out.append("inline constexpr FlavorRow FLAVORS[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['major']}, {text(r['datalayout'])}, "
        + ", ".join(str(r[c]).lower() for c in bools) + "},\n" for r in tables["flavors"]) + "};")
    out.append("struct MmaRow { std::string_view name; std::string_view operand; std::string_view accumulator; "
               "int wave_size; std::string_view oldest_flavor; std::string_view intrinsic; "
               "std::string_view operand_form; std::string_view call_form; };")
    out.append("inline constexpr MmaRow MMA_INSTRUCTIONS[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {text(r['operand'])}, {text(r['accumulator'])}, {r['wave_size']}, "
        f"{text(r['oldest_flavor'])}, {text(r['intrinsic'])}, {text(r['operand_form'])}, {text(r['call_form'])}}},\n"
        for r in tables["mma_instructions"]) + "};")
    out.extend(ops_section(tables["ops"]))
    out.append(FOOTER)
    return "\n\n".join(out) + "\n"


def ops_section(ops):
    groups = CHOICES[("ops", "group")]
    out = [enum("OpKind", ops),
           f"enum class OpGroup : uint8_t {{ {', '.join(groups)} }};",
           "enum class CastWidths : uint8_t { widens, narrows, any };"]
    for row in ops:
        for column in ("attrs", "flags", "predicates"):
            out.append(names_array(f"OP_{column.upper()}_{ident(row)}", row.get(column, [])))
    rows = []
    for row in ops:
        cast = row.get("cast", {"from": "int", "to": "int", "widths": "any"})
        operands = -1 if row["operands"] is None else row["operands"]
        rows.append(f"    {{{text(row['name'])}, OpKind::{ident(row)}, OpGroup::{row['group']}, {operands}, "
                    f"OP_ATTRS_{ident(row)}, OP_FLAGS_{ident(row)}, OP_PREDICATES_{ident(row)}, "
                    f"{text(row.get('llvm', ''))}, {str(row.get('llvm_form') == 'intrinsic').lower()}, "
                    f"{str(cast['from'] == 'float').lower()}, {str(cast['to'] == 'float').lower()}, "
                    f"CastWidths::{cast['widths']}}},\n")
    out.append("// operands -1: any number (the structured ops). The cast columns mean something for casts only.\n"
               "struct OpRow { std::string_view name; OpKind kind; OpGroup group; int operands; Names attrs; "
               "Names flags; Names predicates; std::string_view llvm; bool llvm_intrinsic; bool cast_from_float; "
               "bool cast_to_float; CastWidths cast_widths; };")
    out.append("inline constexpr OpRow OPS[] = {\n" + "".join(rows) + "};")
    return out


HEADER = """// Generated by tables/gen_tables.py from tables/*.json at build time: do not edit; change the
// tables and rebuild. Row i of each table is enumerator i of its enum.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kemit::tables {

// A fixed list of names (an op's attribute keys, flags or predicates).
struct Names {
  const std::string_view* items;
  size_t size;
  const std::string_view* begin() const { return items; }
  const std::string_view* end() const { return items + size; }
  bool contains(std::string_view name) const {
    for (auto item : *this)
      if (item == name) return true;
    return false;
  }
};"""

FOOTER = """template <typename Row, size_t N>
constexpr size_t row_count(const Row (&)[N]) { return N; }

inline const OpRow& op_row(OpKind kind) { return OPS[static_cast<size_t>(kind)]; }
inline std::string_view op_name(OpKind kind) { return op_row(kind).name; }
// The op named `name`, or nullptr.
inline const OpRow* find_op(std::string_view name) {
  for (const auto& row : OPS)
    if (row.name == name) return &row;
  return nullptr;
}

}  // namespace kemit::tables"""


def write(path, content):
    # Always written (never skipped when equal), so the output is newer than the tables that made it.
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(content)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", help="directory to write kemit/tables.h into")
    mode.add_argument("--check", help="a generated tables.h to compare with what the tables generate now")
    parser.add_argument("--tables", default=HERE, help="the folder of the JSON tables (default: beside this script)")
    args = parser.parse_args(argv)
    try:
        content = generate(load_all(args.tables))
    except TableError as error:
        print(f"gen_tables: {error}; fix the table and rebuild", file=sys.stderr)
        return 2
    if args.out:
        write(os.path.join(args.out, "kemit", "tables.h"), content)
        return 0
    try:
        with open(args.check, encoding="utf-8") as f:
            current = f.read()
    except OSError as error:
        print(f"gen_tables: cannot read {args.check} ({error.strerror}); build the kemit target first", file=sys.stderr)
        return 2
    if current != content:
        print(f"gen_tables: {args.check} is stale: it differs from what tables/*.json generate; rebuild", file=sys.stderr)
        return 1
    print(f"gen_tables: {args.check} matches tables/*.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Generate the C++ side of the IR tables: tables/*.json -> <out>/kemit/tables.h.

The JSON files beside this script are the one source of truth for the IR's ops, scalar types,
address spaces, archs, flavors and the matrix cores' instructions, shapes and layouts, each with its
schema (every column's type and meaning). The C++ engine and the interpreter include
the header this writes (CMake runs it at build time, into the build tree; nothing generated is
committed); the Python engine reads the same files at import (py_engine/kemit/tables.py).
tables/occupancy.json is the harness's (the LLVM lane's occupancy rules, compiled into the lane by
llvm_lane/CMakeLists.txt), and so is tables/arch_peaks.json (the processors' published peaks, for the
static roofline): checked here like every table, generated into no engine.

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
# The tables, in the order they are loaded; each file holds its own schema ("columns": each column's
# type and meaning), so a new column is a JSON edit. What a column may say of itself:
#   type      str, int, int64 (an int C++ holds in 64 bits), bool, count (an int or null), figure (a number or null), names (strings), ints, pairs ([string, string]),
#             int_pairs ([int, int]), object (its keys and their choices in "fields")
#   doc       what the column means (required: the generated types carry it)
#   required  false: a row may leave it out (then "default" is its value in the generated types)
#   choices   the strings a str column (or each item of names) may hold
#   refers    a table (its row names) or table.column (that column's values) each value must name;
#             for pairs, the first item of each pair
# A table with a "record" has a generated type the engines hold its rows in (the C++ struct in
# tables.h, the Python dataclass built by py_engine/kemit/tables.py): every column, then the
# record's "derived" fields (what the engines compute from other tables, same keys as a column).
TABLES = ("flavors", "archs", "scalar_types", "address_spaces", "mma_instructions", "mma_shapes", "mma_layouts",
          "ops", "occupancy", "arch_peaks")
TYPES = {"str": str, "int": int, "int64": int, "bool": bool, "count": (int, type(None)), "names": list, "ints": list,
         "pairs": list, "int_pairs": list, "object": dict, "figure": (int, float, type(None))}
DESCRIPTOR_KEYS = ("type", "doc", "required", "choices", "default", "refers", "fields")
RECORD_KEYS = ("name", "doc", "derived")


class TableError(Exception):
    pass


def load_table(name, tables_dir=HERE):
    """tables/<name>.json: its columns (each descriptor checked) and its rows (each checked against them)."""
    path = os.path.join(tables_dir, name + ".json")
    shown = os.path.relpath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as error:
        raise TableError(f"{shown}: cannot read the table ({error.strerror})") from None
    except json.JSONDecodeError as error:
        raise TableError(f"{shown}: not JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or not isinstance(data.get("columns"), dict):
        raise TableError(f"{shown}: expected an object with a \"columns\" object and a \"rows\" list")
    if "name" not in data["columns"]:
        raise TableError(f"{shown}: every table needs a column 'name' (its rows are looked up by it)")
    for column, descriptor in data["columns"].items():
        check_descriptor(f"{shown}: column '{column}'", descriptor)
    if "record" in data:
        check_record(shown, data["record"], data["columns"])
    seen = set()
    for index, row in enumerate(data["rows"]):
        check_row(shown, data["columns"], index, row)
        if row["name"] in seen:
            raise TableError(f"{shown}: row {index} ({row['name']}): the name is already in the table")
        seen.add(row["name"])
    return data


def check_descriptor(where, descriptor, derived=False):
    """A column's (or a record's derived field's) descriptor: a known type and a meaning."""
    if not isinstance(descriptor, dict):
        raise TableError(f"{where}: describe it with an object (type, doc)")
    for key in descriptor:
        if key not in DESCRIPTOR_KEYS:
            raise TableError(f"{where}: unknown key '{key}' (known: {', '.join(DESCRIPTOR_KEYS)})")
    if descriptor.get("type") not in TYPES:
        raise TableError(f"{where}: type must be one of {', '.join(TYPES)} (got {json.dumps(descriptor.get('type'))})")
    if not isinstance(descriptor.get("doc"), str) or not descriptor["doc"].strip():
        raise TableError(f"{where}: say what it means in \"doc\"")
    kind = descriptor["type"]
    if not isinstance(descriptor.get("required", True), bool):
        raise TableError(f"{where}: required is true or false")
    if "choices" in descriptor and (kind not in ("str", "names") or not is_strings(descriptor["choices"])):
        raise TableError(f"{where}: choices must be a list of strings, for a str or names column only")
    if "fields" in descriptor and (kind != "object" or not isinstance(descriptor["fields"], dict)
                                   or not all(is_strings(v) for v in descriptor["fields"].values())):
        raise TableError(f"{where}: fields (key -> its choices) belong to an object column only")
    if "refers" in descriptor and (kind not in ("str", "names", "pairs") or not isinstance(descriptor["refers"], str)):
        raise TableError(f"{where}: refers names a table or table.column, for a str, names or pairs column only")
    if derived and set(descriptor) - {"type", "doc"}:
        raise TableError(f"{where}: a derived field has a type and a doc only")
    if "default" in descriptor:
        if descriptor.get("required", True):
            raise TableError(f"{where}: only a column with \"required\": false has a default")
        # the default stands for "left out", so it need not be one of the choices
        check_value(where, {"type": descriptor["type"]}, descriptor["default"], "default")


def check_record(shown, record, columns):
    where = f"{shown}: record"
    if not isinstance(record, dict) or set(record) - set(RECORD_KEYS) or not str(record.get("name", "")).isidentifier():
        raise TableError(f"{where}: expected an object with a type name, a doc and optionally derived fields")
    if not isinstance(record.get("doc"), str) or not record["doc"].strip():
        raise TableError(f"{where}: say what a {record['name']} is in \"doc\"")
    for field, descriptor in record.get("derived", {}).items():
        if field in columns:
            raise TableError(f"{where}: derived field '{field}' is also a column")
        check_descriptor(f"{where}: derived field '{field}'", descriptor, derived=True)
    for column, descriptor in columns.items():
        if not descriptor.get("required", True) and "default" not in descriptor:
            raise TableError(f"{shown}: column '{column}': a column a record holds needs a default when it is "
                             f"not required")


def is_strings(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def check_row(shown, columns, index, row):
    where = f"{shown}: row {index}" + (f" ({row['name']})" if isinstance(row, dict) and "name" in row else "")
    if not isinstance(row, dict):
        raise TableError(f"{where}: a row must be an object")
    for column in row:
        if column not in columns:
            raise TableError(f"{where}: unknown column '{column}' (known: {', '.join(columns)})")
    for column, descriptor in columns.items():
        if column not in row:
            if descriptor.get("required", True):
                raise TableError(f"{where}: missing column '{column}'")
            continue
        check_value(where, descriptor, row[column], f"column '{column}'")


def check_value(where, descriptor, value, what):
    kind = descriptor["type"]
    items = {"names": str, "ints": int, "pairs": list, "int_pairs": list}.get(kind)
    well_typed = isinstance(value, TYPES[kind]) and not (isinstance(value, bool) and kind in ("int", "int64", "count"))
    if items is not None:
        well_typed = well_typed and all(isinstance(item, items) and not isinstance(item, bool) for item in value)
    if kind == "pairs":
        well_typed = well_typed and all(len(item) == 2 and is_strings(item) for item in value)
    if kind == "int_pairs":
        well_typed = well_typed and all(
            len(item) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in item) for item in value)
    if not well_typed:
        raise TableError(f"{where}: {what} has the wrong type (got {json.dumps(value)}; want {kind})")
    allowed = descriptor.get("choices")
    for item in (value if kind == "names" else [value] if kind == "str" else []):
        if allowed and item not in allowed:
            raise TableError(f"{where}: {what} must be one of {', '.join(allowed)} (got {item})")
    for key, allowed in descriptor.get("fields", {}).items():
        if value.get(key) not in allowed:
            raise TableError(f"{where}: {what}.{key} must be one of {', '.join(allowed)}")


def load_all(tables_dir=HERE):
    for file in sorted(os.listdir(tables_dir)):
        if file.endswith(".json") and file[:-len(".json")] not in TABLES:
            raise TableError(f"{os.path.relpath(os.path.join(tables_dir, file))}: not a known table (the Python "
                             f"engine would load it unchecked): add it to TABLES in tables/gen_tables.py, with "
                             f"its C++ rows")
    tables = {name: load_table(name, tables_dir) for name in TABLES}
    for name, row_type in ROW_TYPES.items():
        for column, descriptor in tables[name]["columns"].items():
            if descriptor["type"] not in ROW_MEMBERS:
                raise TableError(f"tables/{name}.json: column '{column}': the {row_type} rows hold "
                                 f"{', '.join(ROW_MEMBERS)} only (got {descriptor['type']})")
    for name, data in tables.items():
        for column, descriptor in data["columns"].items():
            if "refers" in descriptor:
                check_refers(tables, name, column, descriptor)
    return tables


def check_refers(tables, name, column, descriptor):
    """Every value of the column names a row (or a value of a column) of another table."""
    target, _, target_column = descriptor["refers"].partition(".")
    if target not in tables:
        raise TableError(f"tables/{name}.json: column '{column}' refers to {target}, which is no table")
    known = [row.get(target_column or "name") for row in tables[target]["rows"]]
    for row in tables[name]["rows"]:
        value = row.get(column, [])
        values = [value] if descriptor["type"] == "str" else [v[0] for v in value] if descriptor["type"] == "pairs" else value
        for item in values:
            if item not in known:
                raise TableError(f"tables/{name}.json: {row['name']}: {column} {item} is not in tables/{target}.json"
                                 + (f" ({target_column})" if target_column else ""))


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


# The tables whose C++ rows are generated column by column: table -> the row struct's name.
ROW_TYPES = {"archs": "ArchRow", "flavors": "FlavorRow", "mma_instructions": "MmaRow", "mma_shapes": "MmaShapeRow",
             "mma_layouts": "MmaLayoutRow"}
ROW_MEMBERS = {"str": "std::string_view", "int": "int", "int64": "int64_t", "bool": "bool", "names": "Names", "ints": "Ints",
               "pairs": "Pairs"}
RECORD_MEMBERS = {"str": "std::string", "int": "int", "int64": "int64_t", "bool": "bool", "names": "std::vector<std::string>",
                  "ints": "std::vector<int>", "pairs": "std::vector<std::pair<std::string, std::string>>"}


def generate(tables):
    rows = {name: data["rows"] for name, data in tables.items()}
    out = [HEADER]
    out.append(enum("ScalarKind", rows["scalar_types"]))
    out.append("struct ScalarRow { std::string_view name; int bits; bool is_float; std::string_view llvm; };")
    out.append("inline constexpr ScalarRow SCALAR_TYPES[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['bits']}, {str(r['class'] == 'float').lower()}, {text(r['llvm'])}}},\n"
        for r in rows["scalar_types"]) + "};")
    out.append(enum("AddressSpace", rows["address_spaces"]))
    out.append("struct AddressSpaceRow { std::string_view name; int llvm; int pointer_bytes; };")
    out.append("inline constexpr AddressSpaceRow ADDRESS_SPACES[] = {\n" + "".join(
        f"    {{{text(r['name'])}, {r['llvm']}, {r['pointer_bytes']}}},\n" for r in rows["address_spaces"]) + "};")
    for name, row_type in ROW_TYPES.items():
        out.extend(row_section(name, row_type, tables[name]))
        if "record" in tables[name]:
            out.extend(record_section(row_type, tables[name]))
    out.extend(ops_section(tables["ops"]))
    out.append(FOOTER)
    return "\n\n".join(out) + "\n"


def comment(doc):
    return "// " + doc.replace("\n", " ")


def row_section(name, row_type, data):
    """The constexpr rows of a table, one member per column in the file's order (a left-out column
    holds its default, or the empty value of its type)."""
    columns, array = data["columns"], name.upper()
    out, values = [], []
    for index, row in enumerate(data["rows"]):
        fields = []
        for column, descriptor in columns.items():
            value = row.get(column, descriptor.get("default", EMPTY[descriptor["type"]]))
            fields.append(cpp_value(f"{array}_{index}_{column.upper()}", descriptor["type"], value, out))
        values.append("    {" + ", ".join(fields) + "},\n")
    members = "".join(f"  {ROW_MEMBERS[d['type']]} {c};  {comment(d['doc'])}\n" for c, d in columns.items())
    out.append(f"// A row of tables/{name}.json. {comment(data['comment'])[3:]}\nstruct {row_type} {{\n{members}}};")
    out.append(f"inline constexpr {row_type} {array}[] = {{\n" + "".join(values) + "};")
    return out


EMPTY = {"str": "", "int": 0, "int64": 0, "bool": False, "names": [], "ints": [], "pairs": []}


def cpp_value(array_name, kind, value, out):
    """The C++ initializer of one value; a list's items go into an array of their own, added to out."""
    if kind == "str":
        return text(value)
    if kind == "bool":
        return str(value).lower()
    if kind in ("int", "int64"):
        return str(value)
    if not value:
        return "{nullptr, 0}"
    item_type = {"names": "std::string_view", "ints": "int", "pairs": "NamePair"}[kind]
    items = ", ".join(text(v) if kind == "names" else str(v) if kind == "ints" else f"{{{text(v[0])}, {text(v[1])}}}"
                      for v in value)
    out.append(f"inline constexpr {item_type} {array_name}[] = {{{items}}};")
    return f"{{{array_name}, {len(value)}}}"


def record_section(row_type, data):
    """The type the engines hold a row in (owning strings and lists): every column, then the derived
    fields; to_record fills the columns from a row, visit_fields walks every field by name."""
    record = data["record"]
    fields = list(data["columns"].items()) + list(record.get("derived", {}).items())
    members = "".join(f"  {RECORD_MEMBERS[d['type']]} {f};  {comment(d['doc'])}\n" for f, d in fields)
    copies = "".join(record_copy(d["type"], c) for c, d in data["columns"].items())
    visits = "".join(f"  visit(\"{f}\", record.{f});\n" for f, _ in fields)
    name = record["name"]
    return [f"// {record['doc'][0].upper()}{record['doc'][1:]}.\nstruct {name} {{\n{members}}};",
            f"// The columns of a row; the derived fields are left empty for the engine to fill.\n"
            f"inline {name} to_record(const {row_type}& row) {{\n  {name} record;\n{copies}  return record;\n}}",
            f"// visit(field name, value) for every field, in order.\ntemplate <typename Visit>\n"
            f"void visit_fields(const {name}& record, Visit&& visit) {{\n{visits}}}"]


def record_copy(kind, column):
    """The statement that copies a row's column into the record."""
    if kind == "pairs":
        return (f"  for (const auto& pair : row.{column}) record.{column}.emplace_back(pair.first, pair.second);\n")
    value = {"str": f"std::string(row.{column})", "int": f"row.{column}", "int64": f"row.{column}", "bool": f"row.{column}"}.get(
        kind, f"{{row.{column}.begin(), row.{column}.end()}}")
    return f"  record.{column} = {value};\n"


def ops_section(data):
    ops, groups = data["rows"], data["columns"]["group"]["choices"]
    out = [enum("OpKind", ops),
           f"enum class OpGroup : uint8_t {{ {', '.join(groups)} }};",
           "enum class CastWidths : uint8_t { widens, narrows, any };"]
    for row in ops:
        for column in ("attrs", "flags", "predicates", "orders", "scopes"):
            out.append(names_array(f"OP_{column.upper()}_{ident(row)}", row.get(column, [])))
    rows = []
    for row in ops:
        cast = row.get("cast", {"from": "int", "to": "int", "widths": "any"})
        operands = -1 if row["operands"] is None else row["operands"]
        rows.append(f"    {{{text(row['name'])}, OpKind::{ident(row)}, OpGroup::{row['group']}, {operands}, "
                    f"OP_ATTRS_{ident(row)}, OP_FLAGS_{ident(row)}, OP_PREDICATES_{ident(row)}, OP_ORDERS_{ident(row)}, "
                    f"OP_SCOPES_{ident(row)}, "
                    f"{text(row.get('llvm', ''))}, {str(row.get('llvm_form') == 'intrinsic').lower()}, "
                    f"{str(cast['from'] == 'float').lower()}, {str(cast['to'] == 'float').lower()}, "
                    f"CastWidths::{cast['widths']}}},\n")
    out.append("// operands -1: any number (the structured ops). The cast columns mean something for casts only.\n"
               "struct OpRow { std::string_view name; OpKind kind; OpGroup group; int operands; Names attrs; "
               "Names flags; Names predicates; Names orders; Names scopes; std::string_view llvm; bool llvm_intrinsic; bool cast_from_float; "
               "bool cast_to_float; CastWidths cast_widths; };")
    out.append("inline constexpr OpRow OPS[] = {\n" + "".join(rows) + "};")
    return out


HEADER = """// Generated by tables/gen_tables.py from tables/*.json at build time: do not edit; change the
// tables and rebuild. Row i of each table is enumerator i of its enum.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
};
// A fixed list of numbers.
struct Ints {
  const int* items;
  size_t size;
  const int* begin() const { return items; }
  const int* end() const { return items + size; }
};
struct NamePair {
  std::string_view first, second;
};
// A fixed list of name pairs.
struct Pairs {
  const NamePair* items;
  size_t size;
  const NamePair* begin() const { return items; }
  const NamePair* end() const { return items + size; }
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

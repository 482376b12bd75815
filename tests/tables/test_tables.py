"""The IR tables: tables/*.json are the one source of truth, tables/gen_tables.py turns them into
the C++ header every build uses, and the Python engine reads them at import."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = os.path.join(ROOT, "tables")
GENERATOR = os.path.join(TABLES, "gen_tables.py")
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(ROOT, "build"))
BUILT_HEADER = os.path.join(BUILD, "generated", "kemit", "tables.h")

# The engine and interpreter sources where an op is named. The families are left out: they build
# IR only through the builder's methods, and their spec vocabulary reuses some words (elementwise
# `"op": "add"`, reduce_rows' `"bpermute"` strategy, gemm_mma's `mma` field).
SCANNED = ["cpp_engine/src", "cpp_engine/include", "py_engine/kemit", "interp", "bindings"]
NOT_SCANNED = ("/families/",)
# (file, literal) pairs that are not op names, with the reason.
NOT_OP_NAMES = {("bindings/tables_bindings.cpp", "mma"): "the Arch field `mma` (matrix-core kind)",
                ("cpp_engine/src/serve.cpp", "mma"): "hello's arch_facts key `mma` (matrix-core kind)",
                ("py_engine/kemit/serve.py", "mma"): "hello's arch_facts key `mma` (matrix-core kind)",
                ("py_engine/kemit/__init__.py", "add"): "elementwise's spec word in the docstring's example"}


def run_generator(*args, tables=TABLES):
    return subprocess.run([sys.executable, GENERATOR, "--tables", tables, *args], capture_output=True, text=True)


def op_names():
    with open(os.path.join(TABLES, "ops.json"), encoding="utf-8") as f:
        return [row["name"] for row in json.load(f)["rows"]]


def op_name_literals(root, folders, names):
    """(file, line, literal) for each string literal in the sources that is exactly an op name."""
    pattern = re.compile(r"""["'](%s)["']""" % "|".join(map(re.escape, names)))
    found = []
    for folder in folders:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for file in sorted(files):
                path = os.path.join(directory, file)
                shown = os.path.relpath(path, root)
                if not file.endswith((".py", ".cpp", ".h")) or any(part in "/" + shown for part in NOT_SCANNED):
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        found += [(shown, number, m.group(1)) for m in pattern.finditer(line)
                                  if (shown, m.group(1)) not in NOT_OP_NAMES]
    return found


def test_the_built_header_matches_the_tables():
    assert os.path.exists(BUILT_HEADER), f"{BUILT_HEADER} is missing: build the kemit target first"
    result = run_generator("--check", BUILT_HEADER)
    assert result.returncode == 0, result.stderr


def test_a_stale_header_is_reported(tmp_path):
    stale = tmp_path / "tables.h"
    with open(BUILT_HEADER, encoding="utf-8") as f:
        stale.write_text(f.read().replace('"fptosi"', '"fptosi_old"'))
    result = run_generator("--check", str(stale))
    assert result.returncode == 1
    assert "is stale" in result.stderr and "rebuild" in result.stderr


def test_the_generator_is_deterministic(tmp_path):
    for out in ("a", "b"):
        assert run_generator("--out", str(tmp_path / out)).returncode == 0
    first = (tmp_path / "a" / "kemit" / "tables.h").read_bytes()
    assert first == (tmp_path / "b" / "kemit" / "tables.h").read_bytes()
    with open(BUILT_HEADER, "rb") as f:
        assert f.read() == first


@pytest.mark.parametrize("table, edit, message", [
    ("ops", lambda rows: rows[4].pop("group"), "row 4 (add): missing column 'group'"),
    ("ops", lambda rows: rows[4].update(grup="int_binary"), "row 4 (add): unknown column 'grup'"),
    ("ops", lambda rows: rows[4].update(group="integer"), "column 'group' must be one of"),
    ("ops", lambda rows: rows.insert(5, dict(rows[4])), "row 5 (add): the name is already in the table"),
    ("archs", lambda rows: rows[0].update(oldest_flavor="llvm15"), "oldest_flavor llvm15 is not in tables/flavors.json"),
    ("flavors", lambda rows: rows[0].update(major="16"), "column 'major' has the wrong type"),
])
def test_a_malformed_table_is_refused_with_its_file_and_row(tmp_path, table, edit, message):
    copy = tmp_path / "tables"
    shutil.copytree(TABLES, copy)
    with open(copy / f"{table}.json", encoding="utf-8") as f:
        data = json.load(f)
    edit(data["rows"])
    (copy / f"{table}.json").write_text(json.dumps(data))
    result = run_generator("--out", str(tmp_path / "out"), tables=str(copy))
    assert result.returncode == 2
    assert f"{table}.json" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_a_table_the_generator_does_not_know_is_refused(tmp_path):
    copy = tmp_path / "tables"
    shutil.copytree(TABLES, copy)
    shutil.copy(copy / "mma_shapes.json", copy / "mma_scratch.json")
    result = run_generator("--out", str(tmp_path / "out"), tables=str(copy))
    assert result.returncode == 2 and "mma_scratch.json: not a known table" in result.stderr, result.stderr


def test_a_table_that_is_not_json_is_refused(tmp_path):
    copy = tmp_path / "tables"
    shutil.copytree(TABLES, copy)
    (copy / "scalar_types.json").write_text("{ not json")
    result = run_generator("--out", str(tmp_path / "out"), tables=str(copy))
    assert result.returncode == 2 and "scalar_types.json: not JSON (line 1" in result.stderr


def test_each_op_name_is_written_in_the_ops_table_alone():
    assert op_name_literals(ROOT, SCANNED, op_names()) == []


def test_the_scan_finds_a_planted_op_name(tmp_path):
    planted = tmp_path / "py_engine" / "kemit" / "ir"
    planted.mkdir(parents=True)
    (planted / "builder.py").write_text('def fptosi(self, v, t):\n    return self._cast("fptosi", v, t, {})\n')
    (tmp_path / "cpp_engine" / "src").mkdir(parents=True)
    (tmp_path / "cpp_engine" / "src" / "lower.cpp").write_text('if (op.name == "yield") continue;\n')
    (tmp_path / "py_engine" / "kemit" / "families").mkdir()
    (tmp_path / "py_engine" / "kemit" / "families" / "elementwise.py").write_text('OPS = ("add",)\n')
    assert op_name_literals(str(tmp_path), SCANNED, op_names()) == [
        ("cpp_engine/src/lower.cpp", 1, "yield"), ("py_engine/kemit/ir/builder.py", 2, "fptosi")]


def test_the_python_engine_reads_the_same_rows():
    sys.path.insert(0, os.path.join(ROOT, "py_engine"))
    from kemit import tables
    from kemit.target.arch import ARCHS
    for name in ("ops", "scalar_types", "address_spaces", "archs", "flavors", "mma_instructions", "mma_shapes",
                 "mma_layouts"):
        with open(os.path.join(TABLES, f"{name}.json"), encoding="utf-8") as f:
            assert getattr(tables, name.upper()) == json.load(f)["rows"]
    assert [a.name for a in ARCHS] == [row["name"] for row in tables.ARCHS]
    assert tables.OP.fptosi == "fptosi" and tables.OP.for_loop == "for" and tables.OP.yield_values == "yield"


def edited_copy(tmp_path, table, edit):
    """A copy of tables/ with tables/<table>.json changed by edit(data)."""
    copy = tmp_path / "tables"
    shutil.copytree(TABLES, copy)
    with open(copy / f"{table}.json", encoding="utf-8") as f:
        data = json.load(f)
    edit(data)
    (copy / f"{table}.json").write_text(json.dumps(data))
    return copy


def add_column(table, column, descriptor, value):
    def edit(data):
        data["columns"][column] = descriptor
        for row in data["rows"]:
            row[column] = value
    return edit


@pytest.mark.parametrize("table, edit, message", [
    ("flavors", add_column("flavors", "scratch_rule", {"type": "bool"}, True),
     "column 'scratch_rule': say what it means in \"doc\""),
    ("flavors", add_column("flavors", "scratch_rule", {"type": "float", "doc": "d"}, 1.5),
     "column 'scratch_rule': type must be one of str, int, int64, bool"),
    ("flavors", add_column("flavors", "scratch_rule", {"type": "bool", "doc": "d", "choice": [1]}, True),
     "column 'scratch_rule': unknown key 'choice'"),
    ("flavors", add_column("flavors", "scratch_rule", {"type": "bool", "doc": "d", "required": False}, True),
     "column 'scratch_rule': a column a record holds needs a default"),
    ("flavors", add_column("flavors", "scratch_rule", {"type": "bool", "doc": "d"}, "yes"),
     "row 0 (llvm16): column 'scratch_rule' has the wrong type (got \"yes\"; want bool)"),
    ("flavors", lambda data: data["columns"].update(scratch_rule={"type": "bool", "doc": "d"}),
     "row 0 (llvm16): missing column 'scratch_rule'"),
    ("flavors", lambda data: data["record"]["derived"].update(major={"type": "int", "doc": "d"}),
     "record: derived field 'major' is also a column"),
    ("mma_shapes", lambda data: data["rows"][0].update(kinds=["mfma", "wmma_gfx13"]),
     "mfma_32x32x8: kinds wmma_gfx13 is not in tables/archs.json (mma)"),
    ("mma_layouts", lambda data: data["rows"][4].update(piece_offsets=[0, "8"]),
     "row 4 (wmma_gfx12): column 'piece_offsets' has the wrong type"),
    ("archs", lambda data: data["rows"][2].update(extra_mma=[["mfma_16x16x64", "bf16"]]),
     "gfx950: extra_mma mfma_16x16x64 is not in tables/mma_shapes.json"),
    ("archs", lambda data: data["rows"][1].update(fp8_format="e4m3"), "column 'fp8_format' must be one of fnuz, ocp"),
    ("mma_shapes", lambda data: data.pop("columns"), "expected an object with a \"columns\" object"),
    ("flavors", add_column("flavors", "scratch_rule", {"type": "count", "doc": "d"}, 1),
     "column 'scratch_rule': the FlavorRow rows hold str, int, int64, bool, names, ints, pairs only (got count)"),
])
def test_a_malformed_schema_or_new_column_is_refused(tmp_path, table, edit, message):
    copy = edited_copy(tmp_path, table, edit)
    result = run_generator("--out", str(tmp_path / "out"), tables=str(copy))
    assert result.returncode == 2
    assert f"{table}.json" in result.stderr and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


SCRATCH = {"type": "bool", "doc": "a scratch rule only this test knows"}


def test_a_new_flavor_column_appears_in_the_generated_struct(tmp_path):
    """The C++ Flavor (kemit/tables.h) follows the schema: the column is a member with its doc, copied
    by to_record and visited by visit_fields; the header compiles and the member holds the row's value."""
    copy = edited_copy(tmp_path, "flavors", add_column("flavors", "scratch_rule", SCRATCH, True))
    assert run_generator("--out", str(tmp_path / "out"), tables=str(copy)).returncode == 0
    header = (tmp_path / "out" / "kemit" / "tables.h").read_text()
    flavor = header[header.index("struct Flavor {"):header.index("};", header.index("struct Flavor {"))]
    assert "  bool scratch_rule;  // a scratch rule only this test knows\n" in flavor
    assert "record.scratch_rule = row.scratch_rule;" in header and 'visit("scratch_rule", record.scratch_rule);' in header
    program = tmp_path / "use.cpp"
    program.write_text('#include "kemit/tables.h"\n'
                       "int main() { return kemit::tables::to_record(kemit::tables::FLAVORS[0]).scratch_rule ? 0 : 1; }\n")
    compiled = subprocess.run(["c++", "-std=c++20", "-I", str(tmp_path / "out"), str(program), "-o", str(tmp_path / "use")],
                              capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    assert subprocess.run([str(tmp_path / "use")]).returncode == 0


def test_a_new_flavor_column_appears_in_the_python_dataclass(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "py_engine"))
    import dataclasses
    from kemit import tables
    copy = edited_copy(tmp_path, "flavors", add_column("flavors", "scratch_rule", SCRATCH, True))
    data = tables.load_table("flavors", str(copy))
    flavor_type = tables.record_type(data)
    fields = {field.name: field for field in dataclasses.fields(flavor_type)}
    assert list(fields) == list(data["columns"]) + list(data["record"]["derived"])
    assert fields["scratch_rule"].type is bool and fields["scratch_rule"].metadata["doc"] == SCRATCH["doc"]
    flavor = tables.to_record(flavor_type, data["rows"][0], processors=(), mma_instructions=())
    assert flavor.scratch_rule is True


def test_the_engines_record_types_follow_the_schema():
    """Both records hold exactly the columns, then the derived fields, of their tables."""
    sys.path.insert(0, os.path.join(ROOT, "py_engine"))
    import dataclasses
    from kemit import tables
    from kemit.llvm.flavors import Flavor
    from kemit.target.arch import Arch
    for record, table in ((Flavor, "flavors"), (Arch, "archs")):
        data = tables.TABLES[table]
        assert [f.name for f in dataclasses.fields(record)] == \
            list(data["columns"]) + list(data["record"].get("derived", {}))
    with open(BUILT_HEADER, encoding="utf-8") as f:
        header = f.read()
    for record, table in (("Flavor", "flavors"), ("Arch", "archs")):
        body = header[header.index(f"struct {record} {{"):header.index("};", header.index(f"struct {record} {{"))]
        members = re.findall(r"^  \S.* (\w+);", body, re.M)
        data = tables.TABLES[table]
        assert members == list(data["columns"]) + list(data["record"].get("derived", {}))

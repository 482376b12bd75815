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
    for name in ("ops", "scalar_types", "address_spaces", "archs", "flavors", "mma_instructions"):
        with open(os.path.join(TABLES, f"{name}.json"), encoding="utf-8") as f:
            assert getattr(tables, name.upper()) == json.load(f)["rows"]
    assert [a.name for a in ARCHS] == [row["name"] for row in tables.ARCHS]
    assert tables.OP.fptosi == "fptosi" and tables.OP.for_loop == "for" and tables.OP.yield_values == "yield"

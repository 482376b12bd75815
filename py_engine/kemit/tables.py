"""The tables of the IR, read once at import from tables/*.json at the top of the repository.

Those files are the one source of truth for the ops, scalar types, address spaces, archs,
flavors, mma instructions, shapes and layouts; the C++ engine and the interpreter get the same rows
through the header tables/gen_tables.py generates at build time (which checks every table against
its schema). Each file holds its schema: each column's type and meaning. A table with a "record"
(archs: Arch, flavors: Flavor) is held in a dataclass built here from that schema, as the C++
struct is generated from it, so a new column needs no hand-written field on either side.

`OP` names every op by its code name (`OP.fptosi`, `OP.constant`, `OP.for_loop`): the engine's
code compares op names through it, so an op's name is written in ops.json alone.
"""
import dataclasses
import json
import os
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
# In a checkout: the repository's tables/ beside py_engine/. Installed (`pip install .`, setup.py):
# the copy packaged as kemit/table_data/.
TABLES_DIR = next((d for d in (os.path.join(HERE, os.pardir, os.pardir, "tables"), os.path.join(HERE, "table_data"))
                   if os.path.isdir(d)), os.path.join(HERE, os.pardir, os.pardir, "tables"))


class TableError(RuntimeError):
    """A table is missing or malformed (tables/gen_tables.py checks them at build time)."""


def load_table(name, tables_dir=None):
    """The whole table: its comment, columns (schema), record (if any) and rows."""
    path = os.path.normpath(os.path.join(tables_dir or TABLES_DIR, name + ".json"))
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data.get("rows"), list) or not isinstance(data.get("columns"), dict):
            raise ValueError("no \"columns\" object and \"rows\" list")
        return data
    except (OSError, ValueError, AttributeError) as error:
        raise TableError(f"{path}: cannot load the {name} table ({error}); the Python engine needs the "
                         f"repository's tables/ folder beside py_engine/") from None


# every table of the folder, by its file name
TABLES = {name: load_table(name) for name in sorted(os.path.splitext(file)[0] for file in os.listdir(TABLES_DIR)
                                                    if file.endswith(".json"))}
SCALAR_TYPES = TABLES["scalar_types"]["rows"]
ADDRESS_SPACES = TABLES["address_spaces"]["rows"]
ARCHS = TABLES["archs"]["rows"]
FLAVORS = TABLES["flavors"]["rows"]
MMA_INSTRUCTIONS = TABLES["mma_instructions"]["rows"]
MMA_SHAPES = TABLES["mma_shapes"]["rows"]
MMA_LAYOUTS = TABLES["mma_layouts"]["rows"]
OPS = TABLES["ops"]["rows"]

# the Python type of a column's value in a record: lists become tuples (a record is frozen)
FIELD_TYPES = {"str": str, "int": int, "int64": int, "bool": bool, "names": tuple, "ints": tuple, "pairs": tuple}


def record_type(data):
    """The frozen dataclass of a table's record: every column (a left-out column holds its default),
    then the record's derived fields; each field's meaning is its metadata "doc"."""
    record = data["record"]
    fields = []
    for name, column in data["columns"].items():
        default = {} if column.get("required", True) else {"default": frozen(column["default"])}
        fields.append((name, FIELD_TYPES[column["type"]], dataclasses.field(metadata={"doc": column["doc"]}, **default)))
    for name, derived in record.get("derived", {}).items():
        fields.append((name, FIELD_TYPES[derived["type"]], dataclasses.field(metadata={"doc": derived["doc"]})))
    made = dataclasses.make_dataclass(record["name"], fields, frozen=True, kw_only=True)
    made.__doc__ = record["doc"]
    return made


def to_record(kind, row, **derived):
    """A row as the record type `kind` (its lists as tuples), with the derived fields given."""
    return kind(**{name: frozen(value) for name, value in row.items()}, **derived)


def frozen(value):
    return tuple(frozen(item) for item in value) if isinstance(value, list) else value

OP = SimpleNamespace(**{row["ident"]: row["name"] for row in OPS})
OP_ROWS = {row["name"]: row for row in OPS}


def ops_in(group):
    """The rows of the ops of one group, in table order."""
    return [row for row in OPS if row["group"] == group]

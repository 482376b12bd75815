"""The tables of the IR, read once at import from tables/*.json at the top of the repository.

Those files are the one source of truth for the ops, scalar types, address spaces, archs,
flavors and mma instructions; the C++ engine and the interpreter get the same rows through the
header tables/gen_tables.py generates at build time.

`OP` names every op by its code name (`OP.fptosi`, `OP.constant`, `OP.for_loop`): the engine's
code compares op names through it, so an op's name is written in ops.json alone.
"""
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


def load_rows(name):
    path = os.path.normpath(os.path.join(TABLES_DIR, name + ".json"))
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)["rows"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise TableError(f"{path}: cannot load the {name} table ({error}); the Python engine needs the "
                         f"repository's tables/ folder beside py_engine/") from None


SCALAR_TYPES = load_rows("scalar_types")
ADDRESS_SPACES = load_rows("address_spaces")
ARCHS = load_rows("archs")
FLAVORS = load_rows("flavors")
MMA_INSTRUCTIONS = load_rows("mma_instructions")
OPS = load_rows("ops")

OP = SimpleNamespace(**{row["ident"]: row["name"] for row in OPS})
OP_ROWS = {row["name"]: row for row in OPS}


def ops_in(group):
    """The rows of the ops of one group, in table order."""
    return [row for row in OPS if row["group"] == group]

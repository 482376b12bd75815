"""The flavor table: what each supported LLVM version accepts, spells and knows.

Every row was measured on Debian's llvm-16, llvm-19 and llvm-22 (see docs/flavors.md).
A flavor is always an argument; nothing here reads the environment.
"""
from .. import tables

# a flavor: one field per column of tables/flavors.json, then its processors and mma instructions
# (the record's derived fields there; each field's meaning is its doc)
Flavor = tables.record_type(tables.TABLES["flavors"])


def oldest_major(row):
    return next(flavor["major"] for flavor in tables.FLAVORS if flavor["name"] == row["oldest_flavor"])


def flavor_of(row):
    """A flavor from its row of tables/flavors.json: its processors are the archs (tables/archs.json,
    in table order) and its mma instructions the instructions (tables/mma_instructions.json, by
    oldest flavor, then in table order) whose oldest flavor is not newer."""
    processors = tuple(arch["name"] for arch in tables.ARCHS if oldest_major(arch) <= row["major"])
    known = sorted((instr for instr in tables.MMA_INSTRUCTIONS if oldest_major(instr) <= row["major"]),
                   key=oldest_major)
    return tables.to_record(Flavor, row, processors=processors, mma_instructions=tuple(instr["name"] for instr in known))


FLAVORS = tuple(flavor_of(row) for row in tables.FLAVORS)


class UnknownFlavor(ValueError):
    pass


def flavor_names():
    return [f.name for f in FLAVORS]


def newest_flavor():
    return FLAVORS[-1]


def find_flavor(name):
    """The flavor with exactly this canonical name."""
    for flavor in FLAVORS:
        if flavor.name == name:
            return flavor
    raise UnknownFlavor("unknown flavor '{name}' (known: {known})".format(name=name, known=", ".join(flavor_names())))


def resolve_flavor(name):
    """(flavor, note): a known name, or a newer `llvmN` aliased to the newest flavor with a note."""
    for flavor in FLAVORS:
        if flavor.name == name:
            return flavor, ""
    newest = newest_flavor()
    digits = name[4:] if name.startswith("llvm") else ""
    if digits.isascii() and digits.isdigit() and int(digits) > newest.major:
        return newest, ("note: flavor {name} is not in the table; using {newest}, "
                        "the newest (add a row when LLVM {major} is measured)").format(
                            name=name, newest=newest.name, major=int(digits))
    raise UnknownFlavor("unknown flavor '{name}' (known: {known}; a newer llvmN resolves to {newest})".format(
        name=name, known=", ".join(flavor_names()), newest=newest.name))

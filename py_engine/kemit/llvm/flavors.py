"""The flavor table: what each supported LLVM version accepts, spells and knows.

Every row was measured on Debian's llvm-16, llvm-19 and llvm-22 (see docs/flavors.md).
A flavor is always an argument; nothing here reads the environment.
"""
from dataclasses import dataclass

from .. import tables


@dataclass(frozen=True)
class Flavor:
    name: str
    major: int
    datalayout: str
    or_disjoint: bool        # `or disjoint`
    zext_nneg: bool          # `zext nneg`
    gep_nuw: bool            # `getelementptr inbounds nuw`
    splat_constants: bool    # `splat (float 1.0)` vector constants
    captures_attr: bool      # `captures(none)` instead of `nocapture`
    readfirstlane_mangled: bool  # `llvm.amdgcn.readfirstlane.i32` instead of the unmangled name
    vector_bf16_casts: bool      # llc selects fpext/fptrunc between <N x bfloat> and <N x float> (16 aborts)
    processors: tuple
    wmma_operand_mangled: bool = False  # wmma names carry the operand type too (`.v8f32.v16f16`, not `.v8f32`)
    mma_instructions: tuple = ()        # the canonical mma instructions (ir/builder.py) this LLVM knows


def oldest_major(row):
    return next(flavor["major"] for flavor in tables.FLAVORS if flavor["name"] == row["oldest_flavor"])


def flavor_of(row):
    """A flavor from its row of tables/flavors.json: its processors are the archs (tables/archs.json,
    in table order) and its mma instructions the instructions (tables/mma_instructions.json, by
    oldest flavor, then in table order) whose oldest flavor is not newer."""
    processors = tuple(arch["name"] for arch in tables.ARCHS if oldest_major(arch) <= row["major"])
    known = sorted((instr for instr in tables.MMA_INSTRUCTIONS if oldest_major(instr) <= row["major"]),
                   key=oldest_major)
    return Flavor(**row, processors=processors, mma_instructions=tuple(instr["name"] for instr in known))


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

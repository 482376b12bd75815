"""IR types: scalars, vectors of scalars, and pointers by address space.

Types are values: two types are equal when they print the same. The canonical spelling
(`i32`, `<4 x f16>`, `ptr.global`) is flavor-free; llvm/lower.py spells them for LLVM.
"""
from dataclasses import dataclass

from .. import tables

SCALAR_BITS = {row["name"]: row["bits"] for row in tables.SCALAR_TYPES}
FLOAT_SCALARS = frozenset(row["name"] for row in tables.SCALAR_TYPES if row["class"] == "float")
INT_SCALARS = frozenset(row["name"] for row in tables.SCALAR_TYPES if row["class"] == "int")
ADDRESS_SPACES = tuple(row["name"] for row in tables.ADDRESS_SPACES)
POINTER_BYTES = {row["name"]: row["pointer_bytes"] for row in tables.ADDRESS_SPACES}


class TypeError_(ValueError):
    """A type was misused (the builder's operand checks raise this)."""


@dataclass(frozen=True)
class Type:
    kind: str        # "scalar", "vector" or "pointer"
    name: str = ""   # scalar name, or the element's name for a vector
    count: int = 0   # vector lanes
    space: str = ""  # pointer address space


def scalar(name):
    if name not in SCALAR_BITS:
        raise TypeError_("unknown scalar type '{name}' (known: {known})".format(
            name=name, known=", ".join(SCALAR_BITS)))
    return Type("scalar", name)


def vector(element, count):
    if element.kind != "scalar":
        raise TypeError_("vector elements must be scalars (got {type})".format(type=type_text(element)))
    if count < 2 or count > 16:
        raise TypeError_("vector length must be between 2 and 16 (got {count})".format(count=count))
    return Type("vector", element.name, count)


def pointer(space):
    if space not in ADDRESS_SPACES:
        raise TypeError_("unknown address space '{space}' (known: {known})".format(
            space=space, known=", ".join(ADDRESS_SPACES)))
    return Type("pointer", space=space)


def with_lanes(element, count):
    """`element` itself for one lane, else a vector of `count` lanes."""
    return element if count == 1 else vector(element, count)


def element_type(t):
    return scalar(t.name) if t.kind == "vector" else t


def lanes(t):
    return t.count if t.kind == "vector" else 1


def is_float(t):
    return t.kind != "pointer" and t.name in FLOAT_SCALARS


def is_int(t):
    return t.kind != "pointer" and t.name in INT_SCALARS


def scalar_bits(t):
    return SCALAR_BITS[t.name]


def byte_size(t):
    if t.kind == "pointer":
        return POINTER_BYTES[t.space]
    return max(1, scalar_bits(t) // 8) * lanes(t)


def type_text(t):
    if t.kind == "scalar":
        return t.name
    if t.kind == "vector":
        return f"<{t.count} x {t.name}>"
    return f"ptr.{t.space}"


def parse_type(text):
    """The inverse of type_text."""
    if text.startswith("ptr."):
        return pointer(text[4:])
    if text.startswith("<") and text.endswith(">") and " x " in text:
        count, name = text[1:-1].split(" x ", 1)
        if not count.isdigit():
            raise TypeError_("malformed vector type '{text}'".format(text=text))
        return vector(scalar(name), int(count))
    return scalar(text)

"""How IR types and constants are spelled in LLVM text at a flavor."""
import struct

from .. import tables
from ..ir.types import element_type, lanes

ADDRESS_SPACE_NUMBERS = {row["name"]: row["llvm"] for row in tables.ADDRESS_SPACES}
SCALAR_NAMES = {row["name"]: row["llvm"] for row in tables.SCALAR_TYPES}


def llvm_type(t):
    if t.kind == "pointer":
        return f"ptr addrspace({ADDRESS_SPACE_NUMBERS[t.space]})"
    if t.kind == "vector":
        return f"<{t.count} x {SCALAR_NAMES[t.name]}>"
    return SCALAR_NAMES[t.name]


def mangle(t):
    """The overload suffix of an intrinsic name: f32, v4f32, i32."""
    return f"v{t.count}{t.name}" if t.kind == "vector" else t.name


def scalar_literal(t, value):
    """A scalar constant: decimal integers, LLVM's hex forms for floats (exact, never rounded)."""
    if t.name == "i1":
        return "true" if value else "false"
    if t.name.startswith("i"):
        return str(value)
    bits = int(value, 16)
    if t.name == "f16":
        return f"0xH{bits:04X}"
    if t.name == "bf16":
        return f"0xR{bits:04X}"
    as_double = struct.unpack("<d", struct.pack("<d", struct.unpack("<f", struct.pack("<I", bits))[0]))[0]
    return f"0x{struct.unpack('<Q', struct.pack('<d', as_double))[0]:016X}"


def constant_literal(t, value, flavor):
    """A constant operand; vectors are splats (`splat (...)` where the flavor reads it)."""
    element = element_type(t)
    text = scalar_literal(element, value)
    if t.kind != "vector":
        return text
    if flavor.splat_constants:
        return f"splat ({llvm_type(element)} {text})"
    return "<" + ", ".join([f"{llvm_type(element)} {text}"] * lanes(t)) + ">"

"""The builder: the only way to make IR.

A kernel is params, LDS buffers, attributes and a body region of ops. Every value has an
explicit id, given in creation order, so the canonical text never depends on naming. Control
flow is structured: `for` (with loop-carried values) and `if`; no raw branches. Each op's exact
lane-by-lane meaning is written in docs/ir.md.
"""
import re
import struct
from dataclasses import dataclass, field

from .. import tables
from ..tables import OP
from .types import (Type, byte_size, is_float, is_int, lanes, scalar, type_text, with_lanes,
                    element_type, scalar_bits)


class BuildError(ValueError):
    """Malformed IR: the message names the op and what was expected."""


@dataclass(frozen=True)
class Value:
    id: int
    type: Type


@dataclass
class Region:
    args: list = field(default_factory=list)
    ops: list = field(default_factory=list)


@dataclass
class Op:
    name: str
    results: list
    operands: list
    attrs: dict
    regions: list = field(default_factory=list)


@dataclass
class Param:
    value: Value
    name: str
    attrs: dict


@dataclass
class LdsBuffer:
    value: Value
    name: str
    element: Type
    count: int
    align: int


@dataclass
class Kernel:
    name: str
    arch: str
    attrs: dict
    params: list
    lds: list
    body: Region


INT_FLAGS = {row["name"]: tuple(row.get("flags", ())) for row in tables.ops_in("int_binary")}
ICMP_PREDICATES = tuple(tables.OP_ROWS[OP.icmp]["predicates"])
FCMP_PREDICATES = tuple(tables.OP_ROWS[OP.fcmp]["predicates"])
ATOMIC_ORDERS = tuple(tables.OP_ROWS[OP.atomic_add]["orders"])
ATOMIC_SCOPES = tuple(tables.OP_ROWS[OP.atomic_add]["scopes"])
DIMS = ("x", "y", "z")
DPP_ROW_SHR = (0x111, 0x11F)  # row_shr:1 .. row_shr:15 (lanes past the row's start keep old)
DPP_ROW_ROR = (0x121, 0x12F)  # row_ror:1 .. row_ror:15; 0 to 0xFF are quad_perm controls
# canonical mma instruction -> (A and B fragment type, accumulator type, wave size), from
# tables/mma_instructions.json; docs/ir.md gives each one's lane layout, llvm/lower_mma.py its
# intrinsic at each flavor.
MMA_INSTRUCTIONS = {row["name"]: (row["operand"], row["accumulator"], row["wave_size"])
                    for row in tables.MMA_INSTRUCTIONS}
# cast -> (source check, target check, widths check), from the cast columns of tables/ops.json.
CLASS_CHECKS = {"int": is_int, "float": is_float}
WIDTH_CHECKS = {"widens": lambda a, b: a < b, "narrows": lambda a, b: a > b, "any": lambda a, b: True}
CAST_RULES = {row["name"]: (CLASS_CHECKS[row["cast"]["from"]], CLASS_CHECKS[row["cast"]["to"]],
                            WIDTH_CHECKS[row["cast"]["widths"]]) for row in tables.ops_in("cast")}
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")
_RESERVED_NAME = re.compile(r"v[0-9]+\Z")


def float_bits(t, value):
    """The bit pattern of `value` in float type `t`; only exactly representable values."""
    try:
        f32 = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # finite but beyond f32's range
        raise BuildError("constant {value} is not exact in {dtype}".format(value=repr(value), dtype=t.name)) from None
    if struct.unpack("<f", struct.pack("<I", f32))[0] != value:
        raise BuildError("constant {value} is not exact in {dtype}".format(value=repr(value), dtype=t.name))
    if t.name == "f32":
        return f32
    if t.name == "bf16":
        if f32 & 0xFFFF:
            raise BuildError("constant {value} is not exact in bf16".format(value=repr(value)))
        return f32 >> 16
    sign, exponent, mantissa = f32 >> 31, (f32 >> 23) & 0xFF, f32 & 0x7FFFFF
    if exponent == 0 and mantissa == 0:
        return sign << 15
    if not -14 <= exponent - 127 <= 15 or mantissa & 0x1FFF:
        raise BuildError("constant {value} is not exact in f16".format(value=repr(value)))
    return (sign << 15) | ((exponent - 127 + 15) << 10) | (mantissa >> 13)


def is_power_of_two(n):
    return n >= 1 and n & (n - 1) == 0


class Builder:
    def __init__(self, name, arch):
        if not _NAME.match(name):
            raise BuildError("kernel name '{name}' must match [a-z_][a-z0-9_]*".format(name=name))
        self._kernel = Kernel(name, arch, {}, [], [], Region())
        self._next_id = 0
        self._regions = [self._kernel.body]

    # ---- kernel interface -------------------------------------------------------------
    def attr(self, key, value):
        if not _NAME.match(key) or not re.match(r"[A-Za-z0-9_.,:-]+\Z", value):
            raise BuildError("kernel attribute {key}={value} has characters outside the canonical set".format(
                key=key, value=value))
        self._kernel.attrs[key] = value

    def param(self, name, t, align=0, noalias=False, nocapture=False, readonly=False,
              writeonly=False):
        self._check_new_name(name)
        if self._next_id != len(self._kernel.params):
            raise BuildError("param '{name}' must be declared before LDS buffers and ops".format(name=name))
        flags = {"noalias": noalias, "nocapture": nocapture, "readonly": readonly,
                 "writeonly": writeonly}
        if t.kind != "pointer" and (align or any(flags.values())):
            raise BuildError("param '{name}': align and memory flags need a pointer (got {type})".format(
                name=name, type=type_text(t)))
        if align and not is_power_of_two(align):
            raise BuildError("param '{name}': align must be a power of two (got {align})".format(
                name=name, align=align))
        attrs = {key: True for key, on in flags.items() if on}
        if align:
            attrs["align"] = align
        value = self._new_value(t)
        self._kernel.params.append(Param(value, name, attrs))
        return value

    def lds(self, name, element, count, align):
        self._check_new_name(name)
        if element.kind == "pointer" or count < 1:
            raise BuildError("LDS buffer '{name}' needs a scalar or vector element and a count >= 1".format(name=name))
        if not is_power_of_two(align):
            raise BuildError("LDS buffer '{name}': align must be a power of two (got {align})".format(
                name=name, align=align))
        value = self._new_value(Type("pointer", space="lds"))
        self._kernel.lds.append(LdsBuffer(value, name, element, count, align))
        return value

    def finish(self):
        if len(self._regions) != 1:
            raise BuildError("finish() inside an open region")
        return self._kernel

    # ---- constants and special registers ----------------------------------------------
    def const_int(self, t, value):
        if not is_int(t):
            raise BuildError("const_int needs an integer type (got {type})".format(type=type_text(t)))
        bits = scalar_bits(element_type(t))
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise BuildError("constant {value} does not fit {type}".format(value=value, type=type_text(t)))
        return self._emit(OP.constant, [], t, {"value": value})

    def const_float(self, t, value):
        if not is_float(t):
            raise BuildError("const_float needs a float type (got {type})".format(type=type_text(t)))
        bits = float_bits(element_type(t), value)
        digits = scalar_bits(element_type(t)) // 4
        return self._emit(OP.constant, [], t, {"value": f"0x{bits:0{digits}X}"})

    def workitem_id(self, dim):
        return self._emit(OP.workitem_id, [], scalar("i32"), {"dim": self._dim(dim)})

    def workgroup_id(self, dim):
        return self._emit(OP.workgroup_id, [], scalar("i32"), {"dim": self._dim(dim)})

    def num_workgroups(self, dim):
        return self._emit(OP.num_workgroups, [], scalar("i32"), {"dim": self._dim(dim)})

    # ---- integer and float arithmetic -------------------------------------------------
    def add(self, a, b, flags=()):
        return self._int_binary(OP.add, a, b, flags)

    def sub(self, a, b, flags=()):
        return self._int_binary(OP.sub, a, b, flags)

    def mul(self, a, b, flags=()):
        return self._int_binary(OP.mul, a, b, flags)

    def udiv(self, a, b):
        return self._int_binary(OP.udiv, a, b, ())

    def urem(self, a, b):
        return self._int_binary(OP.urem, a, b, ())

    def shl(self, a, b, flags=()):
        return self._int_binary(OP.shl, a, b, flags)

    def lshr(self, a, b):
        return self._int_binary(OP.lshr, a, b, ())

    def bit_and(self, a, b):
        return self._int_binary(OP.bit_and, a, b, ())

    def bit_or(self, a, b, flags=()):
        return self._int_binary(OP.bit_or, a, b, flags)

    def fadd(self, a, b):
        return self._float_op(OP.fadd, [a, b])

    def fsub(self, a, b):
        return self._float_op(OP.fsub, [a, b])

    def fmul(self, a, b):
        return self._float_op(OP.fmul, [a, b])

    def fdiv(self, a, b):
        return self._float_op(OP.fdiv, [a, b])

    def fmax(self, a, b):
        return self._float_op(OP.fmax, [a, b])

    def fmin(self, a, b):
        return self._float_op(OP.fmin, [a, b])

    def fma(self, a, b, c):
        return self._float_op(OP.fma, [a, b, c])

    def fneg(self, a):
        return self._float_op(OP.fneg, [a])

    def exp(self, a):
        return self._float_op(OP.exp, [a])

    def sqrt(self, a):
        return self._float_op(OP.sqrt, [a])

    def icmp(self, pred, a, b):
        self._same_types(OP.icmp, [a, b], is_int, "integer")
        return self._compare(OP.icmp, pred, ICMP_PREDICATES, a, b)

    def fcmp(self, pred, a, b):
        self._same_types(OP.fcmp, [a, b], is_float, "float")
        return self._compare(OP.fcmp, pred, FCMP_PREDICATES, a, b)

    def select(self, cond, a, b):
        if a.type != b.type or element_type(cond.type) != scalar("i1") or (
                cond.type.kind == "vector" and lanes(cond.type) != lanes(a.type)):
            raise BuildError("select needs an i1 condition per lane and equal arms (got {cond}, {a}, {b})".format(
                cond=type_text(cond.type), a=type_text(a.type), b=type_text(b.type)))
        return self._emit(OP.select, [cond, a, b], a.type, {})

    # ---- casts --------------------------------------------------------------------------
    def zext(self, v, t, nneg=False):
        return self._cast(OP.zext, v, t, {"nneg": True} if nneg else {})

    def sext(self, v, t):
        return self._cast(OP.sext, v, t, {})

    def trunc(self, v, t):
        return self._cast(OP.trunc, v, t, {})

    def fpext(self, v, t):
        return self._cast(OP.fpext, v, t, {})

    def fptrunc(self, v, t):
        return self._cast(OP.fptrunc, v, t, {})

    def sitofp(self, v, t):
        return self._cast(OP.sitofp, v, t, {})

    def fptosi(self, v, t):
        return self._cast(OP.fptosi, v, t, {})

    # ---- memory -------------------------------------------------------------------------
    def ptr_add(self, p, index, element):
        """p + index * sizeof(element); index is an i32 known to be in [0, 2^31), or, into global or
        constant memory (8-byte pointers), an i64 known to be in [0, 2^63): a row offset past 2^31."""
        wide = p.type.kind == "pointer" and byte_size(p.type) == 8 and index.type == scalar("i64")
        if p.type.kind != "pointer" or (index.type != scalar("i32") and not wide) or element.kind == "pointer":
            raise BuildError("ptr_add needs a pointer, an i32 index (or an i64 one into global or constant memory) "
                             "and a non-pointer element (got {p}, {index}, {element})".format(
                                 p=type_text(p.type), index=type_text(index.type), element=type_text(element)))
        return self._emit(OP.ptr_add, [p, index], p.type, {"element": type_text(element)})

    def load(self, t, p, align):
        self._check_access(OP.load, t, p, align)
        return self._emit(OP.load, [p], t, {"align": align})

    def store(self, v, p, align):
        self._check_access(OP.store, v.type, p, align)
        self._emit(OP.store, [v, p], None, {"align": align})

    def atomic_add(self, p, v, order, scope, align):
        """Adds the i32 v to the i32 at p in one indivisible read-modify-write; returns the value
        p held before. Atomic with the other atomics of `scope` to the same address (docs/ir.md)."""
        self._check_atomic(OP.atomic_add, p, v, order, scope, align)
        return self._emit(OP.atomic_add, [p, v], v.type, {"align": align, "order": order, "scope": scope})

    def barrier(self):
        """Every wave of the workgroup arrives here; LDS writes before it are seen after it."""
        self._emit(OP.barrier, [], None, {})

    def readfirstlane(self, v):
        if v.type != scalar("i32"):
            raise BuildError("readfirstlane needs an i32 (got {type})".format(type=type_text(v.type)))
        return self._emit(OP.readfirstlane, [v], v.type, {})

    # ---- structured control flow --------------------------------------------------------
    def for_loop(self, lo, hi, step, inits, body):
        """for iv = lo; iv < hi (signed); iv += step. body(iv, iters) returns the next iters.

        Returns the loop's results: the final iters (the inits when the loop runs zero times).
        """
        if not (lo.type == hi.type == step.type == scalar("i32")):
            raise BuildError("for_loop bounds and step must be i32")
        iv = self._new_value(scalar("i32"))
        region = Region([iv] + [self._new_value(v.type) for v in inits])
        op = Op(OP.for_loop, [], [lo, hi, step] + list(inits), {}, [region])
        self._current().ops.append(op)
        self._regions.append(region)
        yields = list(body(iv, region.args[1:]))
        self._regions.pop()
        if [v.type for v in yields] != [v.type for v in inits]:
            raise BuildError("for_loop body must yield {count} values of the init types".format(count=len(inits)))
        region.ops.append(Op(OP.yield_values, [], yields, {}))
        op.results = [self._new_value(v.type) for v in inits]
        return op.results

    def if_then(self, cond, then_body):
        self._if(cond, [then_body])

    def if_then_else(self, cond, then_body, else_body):
        self._if(cond, [then_body, else_body])

    # ---- internals ----------------------------------------------------------------------
    def _if(self, cond, bodies):
        if cond.type != scalar("i1"):
            raise BuildError("if needs an i1 condition (got {type})".format(type=type_text(cond.type)))
        op = Op(OP.if_then, [], [cond], {}, [Region() for _ in bodies])
        self._current().ops.append(op)
        for region, body in zip(op.regions, bodies):
            self._regions.append(region)
            body()
            self._regions.pop()

    def _current(self):
        return self._regions[-1]

    def _new_value(self, t):
        value = Value(self._next_id, t)
        self._next_id += 1
        return value

    def _emit(self, name, operands, result_type, attrs):
        results = [] if result_type is None else [self._new_value(result_type)]
        self._current().ops.append(Op(name, results, list(operands), attrs))
        return results[0] if results else None

    def _check_new_name(self, name):
        taken = [p.name for p in self._kernel.params] + [b.name for b in self._kernel.lds]
        taken += ["entry", self._kernel.name]  # the entry block's label and the kernel's symbol
        if not _NAME.match(name) or _RESERVED_NAME.match(name) or name in taken:
            raise BuildError("name '{name}' must match [a-z_][a-z0-9_]*, not look like v<N>, "
                             "not be 'entry' or the kernel's name, and be unique".format(name=name))

    @staticmethod
    def _dim(dim):
        if dim not in DIMS:
            raise BuildError("dimension must be one of x, y, z (got {dim})".format(dim=dim))
        return dim

    @staticmethod
    def _same_types(name, values, predicate, what):
        types = [v.type for v in values]
        if any(t != types[0] for t in types) or not predicate(types[0]):
            raise BuildError("{name} operands must be {what} values of one type (got {got})".format(
                name=name, what=what, got=", ".join(type_text(t) for t in types)))

    def _int_binary(self, name, a, b, flags):
        self._same_types(name, [a, b], is_int, "integer")
        for flag in flags:
            if flag not in INT_FLAGS[name]:
                raise BuildError("{name} does not take flag '{flag}'".format(name=name, flag=flag))
        return self._emit(name, [a, b], a.type, {flag: True for flag in flags})

    def _float_op(self, name, operands):
        self._same_types(name, operands, is_float, "float")
        return self._emit(name, operands, operands[0].type, {})

    def _compare(self, name, pred, predicates, a, b):
        if pred not in predicates:
            raise BuildError("{name} predicate must be one of {known} (got {pred})".format(
                name=name, known=", ".join(predicates), pred=pred))
        return self._emit(name, [a, b], with_lanes(scalar("i1"), lanes(a.type)), {"pred": pred})

    def _cast(self, name, v, t, attrs):
        from_ok, to_ok, widths_ok = CAST_RULES[name]
        if (not from_ok(v.type) or not to_ok(t) or lanes(v.type) != lanes(t)
                or not widths_ok(scalar_bits(element_type(v.type)), scalar_bits(element_type(t)))):
            raise BuildError("{name} cannot convert {source} to {target}".format(
                name=name, source=type_text(v.type), target=type_text(t)))
        return self._emit(name, [v], t, attrs)

    @staticmethod
    def _check_access(name, t, p, align):
        if p.type.kind != "pointer" or t.kind == "pointer":
            raise BuildError("{name} needs a pointer operand and a non-pointer value type".format(name=name))
        if not is_power_of_two(align) or align > byte_size(t):
            raise BuildError("{name} align must be a power of two up to {most} (got {align})".format(
                name=name, most=byte_size(t), align=align))

    @staticmethod
    def _check_atomic(name, p, v, order, scope, align):
        if v.type != scalar("i32") or p.type.kind != "pointer" or p.type.space not in ("global", "lds"):
            raise BuildError("{name} needs a global or LDS pointer and an i32 value (got {pointer}, {value})".format(
                name=name, pointer=type_text(p.type), value=type_text(v.type)))
        if order not in ATOMIC_ORDERS:
            raise BuildError("{name} order must be one of {known} (got {order})".format(
                name=name, known=", ".join(ATOMIC_ORDERS), order=order))
        if scope not in ATOMIC_SCOPES:
            raise BuildError("{name} scope must be one of {known} (got {scope})".format(
                name=name, known=", ".join(ATOMIC_SCOPES), scope=scope))
        if p.type.space == "lds" and scope != "workgroup":
            raise BuildError("{name} on LDS takes scope workgroup: only the workgroup's waves share it (got {scope})".format(
                name=name, scope=scope))
        if align != byte_size(v.type):
            raise BuildError("{name} align must be {size}: an atomic is naturally aligned (got {align})".format(
                name=name, size=byte_size(v.type), align=align))

    # ---- vector element ops -----------------------------------------------------------
    def extract_element(self, v, index):
        """Lane `index` of vector v, as a scalar."""
        self._check_lane(OP.extract_element, v.type, index)
        return self._emit(OP.extract_element, [v], element_type(v.type), {"index": index})

    def insert_element(self, v, s, index):
        """v with lane `index` replaced by scalar s."""
        self._check_lane(OP.insert_element, v.type, index)
        if s.type != element_type(v.type):
            raise BuildError("insert_element needs a {lane} lane value (got {type})".format(
                lane=type_text(element_type(v.type)), type=type_text(s.type)))
        return self._emit(OP.insert_element, [v, s], v.type, {"index": index})

    def shuffle(self, a, b, mask):
        """Lane i of the result is lane mask[i] of a ++ b (lanes of a first, then lanes of b)."""
        if a.type != b.type or a.type.kind != "vector":
            raise BuildError("shuffle needs two vectors of one type (got {a}, {b})".format(
                a=type_text(a.type), b=type_text(b.type)))
        mask = list(mask)
        if not 2 <= len(mask) <= 16 or any(not 0 <= m < 2 * a.type.count for m in mask):
            raise BuildError("shuffle mask must have 2 to 16 lanes, each in [0, {lanes}) (got [{mask}])".format(
                lanes=2 * a.type.count, mask=",".join(str(m) for m in mask)))
        text = "[" + ",".join(str(m) for m in mask) + "]"
        return self._emit(OP.shuffle, [a, b], with_lanes(element_type(a.type), len(mask)), {"mask": text})

    @staticmethod
    def _check_lane(name, t, index):
        if t.kind != "vector" or not 0 <= index < t.count:
            raise BuildError("{name} needs a vector and a lane index in range (got {type}, {index})".format(
                name=name, type=type_text(t), index=index))

    # ---- cross-lane ops -----------------------------------------------------------------
    def bpermute(self, v, lane):
        """Every lane reads v from lane (lane mod wave size) of its wave (ds_bpermute)."""
        if v.type not in (scalar("i32"), scalar("f32")) or lane.type != scalar("i32"):
            raise BuildError("bpermute needs an i32 or f32 value and an i32 lane (got {value}, {lane})".format(
                value=type_text(v.type), lane=type_text(lane.type)))
        return self._emit(OP.bpermute, [v, lane], v.type, {})

    def update_dpp(self, old, v, ctrl):
        """v from the lane a DPP control selects within the lane's row of 16 (old if that lane is off)."""
        if old.type != v.type or v.type not in (scalar("i32"), scalar("f32")):
            raise BuildError("update_dpp needs two i32 or two f32 values (got {old}, {value})".format(
                old=type_text(old.type), value=type_text(v.type)))
        if not (0 <= ctrl <= 0xFF or DPP_ROW_SHR[0] <= ctrl <= DPP_ROW_SHR[1]
                or DPP_ROW_ROR[0] <= ctrl <= DPP_ROW_ROR[1]):
            raise BuildError("update_dpp control must be a quad_perm (0 to 255), a row_shr ({shr_first} to "
                             "{shr_last}) or a row_ror ({ror_first} to {ror_last}) (got {ctrl})".format(
                                 shr_first=DPP_ROW_SHR[0], shr_last=DPP_ROW_SHR[1], ror_first=DPP_ROW_ROR[0],
                                 ror_last=DPP_ROW_ROR[1], ctrl=ctrl))
        return self._emit(OP.update_dpp, [old, v], v.type, {"ctrl": ctrl})

    # ---- matrix ops ---------------------------------------------------------------------
    def mma(self, instr, a, b, c):
        """c + a x b on the matrix cores, over the wave's fragments (layouts: docs/ir.md)."""
        if instr not in MMA_INSTRUCTIONS:
            raise BuildError("unknown mma instruction '{instr}' (known: {known})".format(
                instr=instr, known=", ".join(MMA_INSTRUCTIONS)))
        operand, accumulator, _ = MMA_INSTRUCTIONS[instr]
        got = [type_text(v.type) for v in (a, b, c)]
        if got != [operand, operand, accumulator]:
            raise BuildError("mma {instr} needs {operand}, {operand}, {accumulator} (got {got})".format(
                instr=instr, operand=operand, accumulator=accumulator, got=", ".join(got)))
        return self._emit(OP.mma, [a, b, c], c.type, {"instr": instr})

"""Run a canonical-IR kernel lane by lane, for kernels whose lanes never talk to each other.

A small executor of docs/ir.md's per-lane meaning (no barrier, LDS, cross-lane or matrix ops): every
lane of the grid runs the body on its own, in order, against numpy buffers. It checks what a kernel
computes on small shapes (the conv tests compare it with the numpy references); it is not the
project's reference interpreter, which also has to model waves.
"""
import struct

import numpy as np

from kemit.ir.types import element_type, parse_type

FLOATS = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}


def bf16_round(x):
    """Round float32 values to bfloat16 (nearest even), kept as float32."""
    bits = np.atleast_1d(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)
    rounded = (bits + np.uint64(0x7FFF) + ((bits >> np.uint64(16)) & np.uint64(1))) & np.uint64(0xFFFF0000)
    out = rounded.astype(np.uint32).view(np.float32)
    return out if np.ndim(x) else out[0]


def to_type(x, t):
    """x (numbers) as the values of float type t."""
    name = element_type(t).name
    if name == "bf16":
        return bf16_round(np.asarray(x, dtype=np.float32))
    return np.asarray(x, dtype=np.float64).astype(FLOATS[name])


def wrap(value, bits):
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def run_grid(kernel, buffers, groups, block):
    """buffers: param name -> flat numpy array (float32 for f16/bf16 tensors, rounded on store)."""
    params = {p.value.id: ("ptr", p.name, 0) for p in kernel.params}
    for group in range(groups):
        for item in range(block):
            values = dict(params)
            run_region(kernel.body, values, buffers, (group, item))


def run_region(region, values, buffers, lane):
    for op in region.ops:
        if op.name == "yield":
            return [values[v.id] for v in op.operands]
        if op.name == "for":
            run_for(op, values, buffers, lane)
        elif op.name == "if":
            if values[op.operands[0].id]:
                run_region(op.regions[0], values, buffers, lane)
            elif len(op.regions) == 2:
                run_region(op.regions[1], values, buffers, lane)
        else:
            result = run_op(op, [values[v.id] for v in op.operands], buffers, lane)
            if op.results:
                values[op.results[0].id] = result
    return []


def run_for(op, values, buffers, lane):
    lo, hi, step, *inits = [values[v.id] for v in op.operands]
    iv, *iters = op.regions[0].args
    carried = inits
    i = lo
    while i < hi:
        values[iv.id] = i
        for arg, value in zip(iters, carried):
            values[arg.id] = value
        carried = run_region(op.regions[0], values, buffers, lane)
        i += step
    for result, value in zip(op.results, carried):
        values[result.id] = value


def run_op(op, args, buffers, lane):
    t = op.results[0].type if op.results else None
    name, attrs = op.name, op.attrs
    if name == "const":
        return const_value(t, attrs["value"])
    if name in ("workgroup_id", "workitem_id"):
        return lane[0] if name == "workgroup_id" else lane[1]
    if name in ("add", "sub", "mul"):
        a, b = args
        return wrap(a + b if name == "add" else a - b if name == "sub" else a * b, 32)
    if name in ("udiv", "urem"):
        a, b = (x & 0xFFFFFFFF for x in args)
        return wrap(a // b if name == "udiv" else a % b, 32)
    if name == "bit_and":
        return args[0] and args[1] if t.name == "i1" else wrap(args[0] & args[1], 32)
    if name == "icmp":
        return compare(attrs["pred"], *args)
    if name == "select":
        return args[1] if args[0] else args[2]
    if name in ("fpext", "fptrunc"):
        return to_type(np.asarray(args[0], dtype=np.float32), t)
    if name == "fma":
        a, b, c = (np.asarray(x, dtype=np.float64) for x in args)
        return (a * b + c).astype(np.float32)
    if name == "shuffle":
        both = np.concatenate([args[0], args[1]])
        return both[[int(m) for m in attrs["mask"][1:-1].split(",")]]
    if name == "insert_element":
        out = np.array(args[0], copy=True)
        out[attrs["index"]] = args[1]
        return out
    if name == "extract_element":
        return args[0][attrs["index"]]
    if name == "ptr_add":
        kind, buffer, offset = args[0]
        return (kind, buffer, offset + args[1] * element_bytes(parse_type(attrs["element"])))
    if name == "load":
        return load(buffers, args[0], t)
    if name == "store":
        store(buffers, args[1], args[0], op.operands[0].type)
        return None
    raise NotImplementedError(f"lane_serial does not run '{name}'")


def const_value(t, value):
    if element_type(t).name.startswith("i"):
        return bool(value) if t.name == "i1" else value
    bits = int(value, 16)
    if element_type(t).name == "f16":
        scalar = np.array([bits], dtype=np.uint16).view(np.float16)[0]
    else:
        scalar = struct.unpack("<f", struct.pack("<I", bits << (16 if element_type(t).name == "bf16" else 0)))[0]
    return to_type(np.full(t.count, scalar) if t.kind == "vector" else scalar, t)


def compare(pred, a, b):
    if pred.startswith("u"):
        a, b = a & 0xFFFFFFFF, b & 0xFFFFFFFF
    return {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b,
            "ult": a < b, "ule": a <= b, "ugt": a > b, "uge": a >= b}[pred]


def element_bytes(t):
    return {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}[element_type(t).name]


def load(buffers, pointer, t):
    _, name, offset = pointer
    array = buffers[name]
    first, count = offset // element_bytes(t), t.count if t.kind == "vector" else 1
    if offset % element_bytes(t) or not 0 <= first <= len(array) - count:
        raise IndexError(f"load of {count} at element {offset / element_bytes(t)} outside '{name}' ({len(array)})")
    values = to_type(array[first:first + count], t)
    return values if t.kind == "vector" else values[0]


def store(buffers, pointer, value, t):
    _, name, offset = pointer
    array = buffers[name]
    first, count = offset // element_bytes(t), t.count if t.kind == "vector" else 1
    if offset % element_bytes(t) or not 0 <= first <= len(array) - count:
        raise IndexError(f"store of {count} at element {offset / element_bytes(t)} outside '{name}' ({len(array)})")
    array[first:first + count] = np.atleast_1d(value)

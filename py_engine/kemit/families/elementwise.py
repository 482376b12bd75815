"""Family `elementwise`: y = op(a [, b [, c]]) over n elements (n at run time).

A grid-stride loop walks vectors of `vec` elements; the n % vec tail runs as scalars on the
first lanes of the grid. f16 and bf16 are computed in f32 and rounded back once.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from ..plan import batch_plan
from .spec import first_reason, one_of, parse_fields

FAMILY = "elementwise"
FIELDS = (("op", "str", "add"), ("dtype", "str", "f32"), ("vec", "int", 1),
          ("block", "int", 256), ("waves_per_eu", "int", 0))
ARITY = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "fma": 3, "relu": 1, "silu": 1}
DTYPES = ("f16", "bf16", "f32")
VECS = (1, 2, 4, 8)
MAX_BLOCK = 1024
MAX_WAVES_PER_EU = 8
INPUT_NAMES = ("a", "b", "c")
PARAM_ALIGN = 16  # what the kernel promises of its buffers; no access claims more


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    name = f"ew_{spec['op']}_{spec['dtype']}_v{spec['vec']}_b{spec['block']}"
    return name + (f"_w{spec['waves_per_eu']}" if spec["waves_per_eu"] else "")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = (
        lambda: one_of("op", spec["op"], tuple(ARITY)),
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("vec", spec["vec"], VECS),
        lambda: "" if spec["block"] > 0 and spec["block"] % arch.wave_size == 0 else
        "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})".format(
            wave_size=arch.wave_size, arch=arch.name, block=spec["block"]),
        lambda: "" if spec["block"] <= MAX_BLOCK else
        "block must be at most {max_block} (got {block})".format(max_block=MAX_BLOCK, block=spec["block"]),
        lambda: "" if 0 <= spec["waves_per_eu"] <= MAX_WAVES_PER_EU else
        "waves_per_eu must be between 0 and {max_waves} (got {waves})".format(
            max_waves=MAX_WAVES_PER_EU, waves=spec["waves_per_eu"]),
    )
    return first_reason(checks)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: n elements per operand, launched in chunks of at most half the
    buffer range per view, so that a chunk's count plus the grid's lanes (the latch `iv + stride`,
    `wg * block + tid`) stays an i32; the caller picks the grid, up to one vector per lane."""
    kernel = build(spec, arch)
    unit = byte_size(scalar(spec["dtype"]))
    buffers = {name: unit for name in INPUT_NAMES[:ARITY[spec["op"]]] + ("y",)}
    return batch_plan([kernel], [(kernel, spec["block"] * spec["vec"], 1)], "n", buffers, {}, buffer_range,
                      arch.max_grid_lanes, "element")


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    if spec["waves_per_eu"]:
        b.attr("waves_per_eu", str(spec["waves_per_eu"]))
    dtype, vec = scalar(spec["dtype"]), spec["vec"]
    i32 = scalar("i32")
    align = min(byte_size(dtype) * vec, PARAM_ALIGN)
    inputs = [b.param(name, pointer("global"), align=PARAM_ALIGN, noalias=True, nocapture=True, readonly=True)
              for name in INPUT_NAMES[:ARITY[spec["op"]]]]
    y = b.param("y", pointer("global"), align=PARAM_ALIGN, noalias=True, nocapture=True, writeonly=True)
    n = b.param("n", i32)
    block = b.const_int(i32, spec["block"])
    gid = b.add(b.mul(b.workgroup_id("x"), block, ("nuw", "nsw")), b.workitem_id("x"), ("nuw", "nsw"))
    stride = b.mul(b.num_workgroups("x"), block, ("nuw", "nsw"))
    shift = b.const_int(i32, vec.bit_length() - 1)
    vectors = b.lshr(n, shift) if vec > 1 else n

    def vector_body(i, iters):
        first = b.shl(i, shift, ("nuw", "nsw")) if vec > 1 else i
        element_step(b, spec, inputs, y, first, with_lanes(dtype, vec), align)
        return []

    b.for_loop(gid, vectors, stride, [], vector_body)
    if vec > 1:
        done = b.shl(vectors, shift, ("nuw", "nsw"))
        tail = b.sub(n, done, ("nuw", "nsw"))
        b.if_then(b.icmp("slt", gid, tail), lambda: element_step(
            b, spec, inputs, y, b.add(done, gid, ("nuw", "nsw")), dtype, byte_size(dtype)))
    return b.finish()


def element_step(b, spec, inputs, y, first, t, align):
    """Load t-sized operands at element `first`, apply the op in f32, store the result."""
    f32 = with_lanes(scalar("f32"), 1 if t.kind == "scalar" else t.count)
    operands = []
    for pointer in inputs:
        loaded = b.load(t, b.ptr_add(pointer, first, scalar(spec["dtype"])), align)
        operands.append(loaded if spec["dtype"] == "f32" else b.fpext(loaded, f32))
    result = apply_op(b, spec["op"], operands, f32)
    if spec["dtype"] != "f32":
        result = b.fptrunc(result, t)
    b.store(result, b.ptr_add(y, first, scalar(spec["dtype"])), align)


def apply_op(b, op, x, f32):
    if op == "add":
        return b.fadd(x[0], x[1])
    if op == "sub":
        return b.fsub(x[0], x[1])
    if op == "mul":
        return b.fmul(x[0], x[1])
    if op == "max":
        return b.fmax(x[0], x[1])
    if op == "min":
        return b.fmin(x[0], x[1])
    if op == "fma":
        return b.fma(x[0], x[1], x[2])
    if op == "relu":
        return b.fmax(x[0], b.const_float(f32, 0.0))
    # silu: x / (1 + exp(-x))
    return b.fdiv(x[0], b.fadd(b.const_float(f32, 1.0), b.exp(b.fneg(x[0]))))

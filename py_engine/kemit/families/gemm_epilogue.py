"""Family `gemm_epilogue`: c = act(a x b + bias) + residual on the matrix cores, in one kernel.

a is m x k, b is k x n (f16 or bf16, row-major), or with fp8 / bf8 operands (E4M3 / E5M2, on the
processors whose mfma reads them: gfx942 as FNUZ, gfx950 as OCP 8-bit floats) a is m x k and b_t
is b transposed, n x k (row-major, k a multiple of 8); bias is n f32 values (one per column), residual
and c are m x n (row-major) in out_dtype (f32, f16 or bf16); n and k at run time. The product is
the gemm core's (gemm_core.py: tiling, staging, fragment layouts); each f32 accumulator element
then gets, in this order and still in f32: + bias[column], the activation (relu; gelu_tanh, the
tanh approximation of gelu; silu), + residual[row, column], and is rounded once to out_dtype and
stored. bias, activation and residual can each be left out, but not all three (that is gemm_mma).
Launch contract: m, n, k are multiples of tile_m, tile_n, tile_k; the grid is
(n / tile_n, m / tile_m) workgroups.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar
from . import gemm_core as core
from .spec import first_reason, one_of, parse_fields

FAMILY = "gemm_epilogue"
FIELDS = core.CORE_FIELDS + (("bias", "bool", True), ("activation", "str", "relu"),
                             ("residual", "bool", False), ("out_dtype", "str", "f32"))
ACTIVATIONS = ("none", "relu", "gelu_tanh", "silu")
OUT_DTYPES = ("f32", "f16", "bf16")
# gelu_tanh(x) = 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + GELU_CUBIC x^3), computed as
# x / (1 + exp(GELU_EXP_SCALE (x + GELU_CUBIC x^3))) with GELU_EXP_SCALE = -2 sqrt(2 / pi); both
# constants are the f32 nearest to 0.044715 and to -2 sqrt(2 / pi), written exactly
GELU_CUBIC = 0.044714998453855515
GELU_EXP_SCALE = -1.5957691669464111


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    fused = ("_bias" if spec["bias"] else "") + (
        f"_{spec['activation']}" if spec["activation"] != "none" else "") + ("_res" if spec["residual"] else "")
    return (f"gemm_ep_{spec['mma']}_{spec['dtype']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves']}{fused}_{spec['out_dtype']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = core.core_checks(spec, arch, with_fp8=True) + (
        lambda: one_of("activation", spec["activation"], ACTIVATIONS),
        lambda: one_of("out_dtype", spec["out_dtype"], OUT_DTYPES),
        lambda: "" if spec["bias"] or spec["activation"] != "none" or spec["residual"] else
        "an epilogue needs bias, an activation or residual (with none of them, use gemm_mma)",
    )
    return first_reason(checks)


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return core.flavor_gate(spec, arch, flavor)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract (gemm_core.gemm_plan): c (and residual) m x n of out_dtype, bias n f32."""
    out = byte_size(scalar(spec["out_dtype"]))
    rows = {"residual": out, "c": out} if spec["residual"] else {"c": out}
    columns = {"bias": 4} if spec["bias"] else {}
    return core.gemm_plan(spec, build(spec, arch), arch, buffer_range, (rows, columns))


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    out = scalar(spec["out_dtype"])
    read = {"noalias": True, "nocapture": True, "readonly": True}
    a = b.param("a", pointer("global"), align=16, **read)
    bm = b.param("b_t" if core.is_fp8(spec) else "b", pointer("global"), align=16, **read)
    bias = b.param("bias", pointer("global"), align=4, **read) if spec["bias"] else None
    residual = b.param("residual", pointer("global"), align=byte_size(out), **read) if spec["residual"] else None
    c = b.param("c", pointer("global"), align=byte_size(out), noalias=True, nocapture=True, writeonly=True)
    ctx, places, results = core.zero_products(b, spec, arch, a, bm)
    buffers = {"bias": bias, "residual": residual, "c": c}
    for place, acc in zip(places, results):
        store_epilogue(ctx, buffers, place, acc)
    return b.finish()


def store_epilogue(ctx, buffers, place, acc):
    """Every accumulator element of one fragment through the epilogue into c."""
    b, out = ctx["b"], scalar(ctx["spec"]["out_dtype"])
    col, origin = core.fragment_origin(ctx, place)
    for element in range(acc.type.count):
        index = core.element_index(ctx, origin, element)
        value = epilogue(ctx, buffers, b.extract_element(acc, element), col, index)
        b.store(value, b.ptr_add(buffers["c"], index, out), byte_size(out))


def epilogue(ctx, buffers, value, col, index):
    """act(value + bias[col]) + residual[index] in f32, rounded once to out_dtype."""
    b, spec = ctx["b"], ctx["spec"]
    f32, out = scalar("f32"), scalar(spec["out_dtype"])
    if buffers["bias"] is not None:
        # an i64 offset: bias holds n elements, past 2^31 bytes at the top of n
        column = b.zext(col, scalar("i64"), nneg=True)
        value = b.fadd(value, b.load(f32, b.ptr_add(buffers["bias"], column, f32), 4))
    value = activate(b, spec["activation"], value)
    if buffers["residual"] is not None:
        value = b.fadd(value, widen(b, b.load(out, b.ptr_add(buffers["residual"], index, out), byte_size(out))))
    return value if out == f32 else b.fptrunc(value, out)


def widen(b, value):
    """An f16 or bf16 value as f32 (an f32 value as it is)."""
    f32 = scalar("f32")
    return value if value.type == f32 else b.fpext(value, f32)


def activate(b, activation, x):
    """The activation of an f32 value."""
    f32 = scalar("f32")
    if activation == "none":
        return x
    if activation == "relu":
        return b.fmax(x, b.const_float(f32, 0.0))
    if activation == "silu":
        return b.fdiv(x, b.fadd(b.const_float(f32, 1.0), b.exp(b.fneg(x))))
    cubic = b.fma(b.fmul(b.fmul(x, x), x), b.const_float(f32, GELU_CUBIC), x)
    return b.fdiv(x, b.fadd(b.const_float(f32, 1.0), b.exp(b.fmul(cubic, b.const_float(f32, GELU_EXP_SCALE)))))

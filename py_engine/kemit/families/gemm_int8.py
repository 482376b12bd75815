"""Family `gemm_int8`: c = dequant(a x b_t^T) on the integer matrix cores, in one kernel.

a is m x k and b_t is n x k (b transposed), both signed 8-bit integers, row-major (k a multiple of
8): the canonical IR has no i8 type, so the bytes are staged as 64-bit words and each lane reads its
fragment as the instruction's operand words (gemm_core.py: tiling, staging, fragment layouts). The
products are summed exactly in i32 accumulators by the processor's integer mma (CDNA2's
mfma_i32_{32x32x8,16x16x16}_i8, CDNA3's mfma_i32_{32x32x16,16x16x32}_i8, the gfx11 / gfx12
wmma_i32_16x16x16_iu8). Every |a b| is at most 128 x 128 = 16384, so no k below 131072 can wrap an
accumulator (the contract's k is at most gemm_core.MAX_K = 16384: |sum| <= 2^28).

The epilogue dequantizes with row_scale (m f32 values, one per row of a) and col_scale (n f32, one
per row of b_t), in f32 and in this order: x = f32(acc) (rounded to nearest even where |acc| > 2^24),
x = x * row_scale[i], x = x * col_scale[j], each product rounded to f32, then x rounded once to
out_dtype (f16 or bf16, nearest even) and stored to c (m x n). With acc_out, the raw i32
accumulators are stored too, to acc (m x n i32). Launch contract: m, n, k are multiples of tile_m,
tile_n, tile_k; the grid is (n / tile_n, m / tile_m) workgroups.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar
from . import gemm_core as core
from .spec import first_reason, one_of, parse_fields

FAMILY = "gemm_int8"
FIELDS = (("dtype", "str", "i8"),) + core.CORE_FIELDS[1:] + (("out_dtype", "str", "f16"), ("acc_out", "bool", False))
OUT_DTYPES = ("f16", "bf16")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    acc = "_acc" if spec["acc_out"] else ""
    return (f"gemm_i8_{spec['mma']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves']}_{spec['out_dtype']}{acc}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = core.core_checks(spec, arch, integer=True) + (
        lambda: one_of("out_dtype", spec["out_dtype"], OUT_DTYPES),
    )
    return first_reason(checks)


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (the gfx12 iu8 wmma from llvm19 only)."""
    return core.flavor_gate(spec, arch, flavor)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract (gemm_core.gemm_plan): c m x n of out_dtype (and acc m x n i32),
    row_scale m f32 (chunked with a's rows), col_scale n f32 (whole)."""
    out = byte_size(scalar(spec["out_dtype"]))
    rows = {"c": out, "acc": 4} if spec["acc_out"] else {"c": out}
    return core.gemm_plan(spec, build(spec, arch), arch, buffer_range, (rows, {"col_scale": 4}), {"row_scale": 4})


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    out = scalar(spec["out_dtype"])
    read = {"noalias": True, "nocapture": True, "readonly": True}
    write = {"noalias": True, "nocapture": True, "writeonly": True}
    a = b.param("a", pointer("global"), align=16, **read)
    bm = b.param("b_t", pointer("global"), align=16, **read)
    row_scale = b.param("row_scale", pointer("global"), align=4, **read)
    col_scale = b.param("col_scale", pointer("global"), align=4, **read)
    c = b.param("c", pointer("global"), align=byte_size(out), **write)
    acc = b.param("acc", pointer("global"), align=4, **write) if spec["acc_out"] else None
    ctx, places, results = core.zero_products(b, spec, arch, a, bm)
    buffers = {"row_scale": row_scale, "col_scale": col_scale, "c": c, "acc": acc}
    for place, sums in zip(places, results):
        store_dequantized(ctx, buffers, place, sums)
    return b.finish()


def store_dequantized(ctx, buffers, place, sums):
    """Every accumulator element of one fragment: its i32 to acc (acc_out), its dequantized value
    to c. The column's scale is read once; each element's row scale at its own row."""
    b, spec = ctx["b"], ctx["spec"]
    i32, i64, f32, out = scalar("i32"), scalar("i64"), scalar("f32"), scalar(spec["out_dtype"])
    row, col, origin = core.fragment_cell(ctx, place)
    # an i64 offset: col_scale holds n elements, past 2^31 bytes at the top of n
    column_scale = b.load(f32, b.ptr_add(buffers["col_scale"], b.zext(col, i64, nneg=True), f32), 4)
    kind = core.layout_kind(spec, ctx["arch"])
    for element in range(sums.type.count):
        index = core.element_index(ctx, origin, element)
        value = b.extract_element(sums, element)
        if buffers["acc"] is not None:
            b.store(value, b.ptr_add(buffers["acc"], index, i32), 4)
        rows = core.static_row(kind, element)
        element_row = row if rows == 0 else b.add(row, b.const_int(i32, rows), ("nuw", "nsw"))
        row_scale = b.load(f32, b.ptr_add(buffers["row_scale"], element_row, f32), 4)
        x = b.fmul(b.fmul(b.sitofp(value, f32), row_scale), column_scale)
        b.store(b.fptrunc(x, out), b.ptr_add(buffers["c"], index, out), byte_size(out))

"""Family `gemm_mma`: c = a x b (+ c) on the matrix cores; a is m x k, b is k x n (f16 or bf16,
row-major), c is m x n f32 (row-major); n and k at run time.

The tiling, staging and fragment layouts are the gemm core's (gemm_core.py); this family starts the
accumulators at zero or at c and stores them to c. Launch contract: m, n, k are multiples of
tile_m, tile_n, tile_k; the grid is (n / tile_n, m / tile_m) workgroups.
"""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar, vector
from . import gemm_core as core
from .spec import first_reason, parse_fields

FAMILY = "gemm_mma"
FIELDS = core.CORE_FIELDS + (("accumulate", "bool", False),)


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    acc = "_acc" if spec["accumulate"] else ""
    return (f"gemm_{spec['mma']}_{spec['dtype']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves']}{acc}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    return first_reason(core.core_checks(spec, arch))


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return core.flavor_gate(spec, arch, flavor)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract (gemm_core.gemm_plan): c is m x n f32."""
    return core.gemm_plan(spec, build(spec, arch), arch, buffer_range, ({"c": 4}, {}))


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    i32, f32 = scalar("i32"), scalar("f32")
    read = {"noalias": True, "nocapture": True, "readonly": True}
    a = b.param("a", pointer("global"), align=16, **read)
    bm = b.param("b", pointer("global"), align=16, **read)
    c = b.param("c", pointer("global"), align=4, noalias=True, nocapture=True,
                writeonly=not spec["accumulate"])
    n = b.param("n", i32)
    k = b.param("k", i32)
    ctx, places = core.tile_context(b, spec, arch, n, k)
    accumulator = vector(f32, core.accumulator_length(spec, arch))
    inits = [load_accumulator(ctx, c, place, accumulator) if spec["accumulate"]
             else b.const_float(accumulator, 0.0) for place in places]
    results = core.accumulate_tiles(ctx, a, bm, places, inits)
    for place, acc in zip(places, results):
        store_accumulator(ctx, c, place, acc)
    return b.finish()


def load_accumulator(ctx, c, place, accumulator):
    b, f32 = ctx["b"], scalar("f32")
    value = b.const_float(accumulator, 0.0)
    _, origin = core.fragment_origin(ctx, place)
    for element in range(accumulator.count):
        loaded = b.load(f32, core.element_address(ctx, c, origin, element, f32), 4)
        value = b.insert_element(value, loaded, element)
    return value


def store_accumulator(ctx, c, place, acc):
    b, f32 = ctx["b"], scalar("f32")
    _, origin = core.fragment_origin(ctx, place)
    for element in range(acc.type.count):
        value = b.extract_element(acc, element)
        b.store(value, core.element_address(ctx, c, origin, element, f32), 4)

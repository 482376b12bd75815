"""Per-family plans of the numerics lane: for a parity config, the small spec the interpreter runs,
the launch, the inputs (from a fixed seed), and the expected outputs from the family's numpy
reference (parity/numerics/references/<family>.py).

A plan keeps the config's code path and shrinks only what costs interpreter time: run-time sizes
(n, rows, cols, m/n/k) are chosen to cover partial tiles, tails and more than one grid-stride trip;
compile-time shapes in a spec (the depthwise convolutions' n, h, w, c) shrink to the smallest
problem that still has interior, edge and partial tiles. Inputs hold values exactly representable
in their dtype; outputs start as NaN so an element the kernel never writes fails.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from references import conv_depthwise, conv_fwd_lds_halo, elementwise, gemm_mma, reduce_rows, transpose_lds
from references.reduce_rows import round_to

SEED = 20261202
# |got - want| <= RTOL[dtype] * |want| + ACCUMULATION * scale, scale = the sum of the magnitudes
# of the terms behind each output (0 for ops with one rounding and no sum). RTOL is two ulps
# of the output dtype; ACCUMULATION covers an f32 sum in another order than the reference's f64.
RTOL = {"f32": 2.0 ** -22, "f16": 2.0 ** -9, "bf16": 2.0 ** -6}
ACCUMULATION = 2.0 ** -19
EXP_RTOL = 2.0 ** -20  # exp is approximate in hardware (docs/ir.md): silu in f32 gets this slack


# What a plan builds before anything runs: the largest input array, and the multiply-adds of a
# reference. The numbered configs stay far below (conv_fwd_lds_halo's largest: 65,536 input
# elements, 38 M multiply-adds); the fuzzer's boundary specs (w = 100000) do not, and took
# minutes before the lane's size check could skip them.
MAX_ELEMENTS = 1 << 22
MAX_REFERENCE_MACS = 1 << 28


class TooLarge(Exception):
    """A spec whose case is too large to build: the lane reports it, never runs it."""


def require_small(elements, macs, what):
    if elements > MAX_ELEMENTS or macs > MAX_REFERENCE_MACS:
        raise TooLarge(f"{what} is too large to run: {elements} input elements (limit {MAX_ELEMENTS}), "
                       f"{macs} reference multiply-adds (limit {MAX_REFERENCE_MACS})")


@dataclass
class Output:
    name: str
    dtype: str
    want: np.ndarray          # f32 values of dtype (NaN where the kernel must not write is not used)
    scale: np.ndarray = None  # per element, the magnitude sum behind it (None: no accumulation)
    rtol: float = 0.0


@dataclass
class Case:
    spec: dict
    grid: tuple
    block: int
    buffers: dict             # param name -> numpy array in memory layout (bf16 as uint16)
    scalars: dict
    outputs: list = field(default_factory=list)
    note: str = ""
    # a module of several kernels: (kernel name, grid, block, buffer names) run in order
    runs: list = None


# ---- values and memory ------------------------------------------------------------------
def random_values(rng, shape, dtype, low=-2.0, high=2.0):
    """f32 values exactly representable in dtype."""
    return round_to(rng.uniform(low, high, size=shape).astype(np.float32), dtype)


def to_memory(values, dtype):
    values = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "f32":
        return values.copy()
    if dtype == "f16":
        return values.astype(np.float16)
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def from_memory(array, dtype):
    if dtype == "f32":
        return np.asarray(array, dtype=np.float32)
    if dtype == "f16":
        return np.asarray(array).astype(np.float32)
    return (np.asarray(array).astype(np.uint32) << 16).view(np.float32)


def nan_memory(shape, dtype):
    return to_memory(np.full(shape, np.nan, dtype=np.float32), dtype)


def ceil_div(a, b):
    return -(-a // b)


# ---- elementwise ------------------------------------------------------------------------
def plan_elementwise(spec, arch, rng):
    block, vec, dtype = spec["block"], spec["vec"], spec["dtype"]
    grid = 2
    # two grid-stride trips for some lanes, one for others, and an n % vec tail of vec - 1
    n = (2 * grid * block + block // 2 + 1) * vec + (vec - 1)
    require_small(n, 0, "the elementwise problem")
    names = ("a", "b", "c")[:elementwise.ARITY[spec["op"]]]
    inputs = [random_values(rng, n, dtype) for _ in names]
    buffers = {name: to_memory(v, dtype) for name, v in zip(names, inputs)}
    buffers["y"] = nan_memory(n, dtype)
    rtol = RTOL[dtype] + (EXP_RTOL if spec["op"] == "silu" else 0.0)
    want = elementwise.elementwise(spec["op"], inputs, dtype)
    return Case(spec, (grid,), block, buffers, {"n": n}, [Output("y", dtype, want, None, rtol)])


# ---- reduce_rows ------------------------------------------------------------------------
def plan_reduce_rows(spec, arch, rng):
    per_block, cols, dtype = spec["rows_per_block"], spec["cols"], spec["dtype"]
    grid = 2
    rows = grid * per_block + max(1, per_block // 2)  # a second grid-stride trip, a partial block
    require_small(rows * cols, rows * cols, "the reduce_rows problem")
    x = random_values(rng, (rows, cols), dtype)
    out_dtype = "f32" if spec["out_f32"] else dtype
    want = reduce_rows.reduce_rows(x, spec["op"], out_dtype)
    scale = np.abs(x).sum(axis=1) if spec["op"] == "sum" else None
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(rows, out_dtype)}
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", out_dtype, want, scale, RTOL[out_dtype])])


# ---- transpose_lds ----------------------------------------------------------------------
def plan_transpose_lds(spec, arch, rng):
    tile, width, vec, dtype = spec["tile"], spec["tile"] * spec["tiles"], spec["vec"], spec["dtype"]
    rows = tile + tile // 2 + 1             # a partial strip row
    cols = width + 3 * vec                  # a partial strip (cols stays a multiple of vec)
    require_small(rows * cols, 0, "the transpose_lds problem")
    a = random_values(rng, (rows, cols), dtype)
    buffers = {"a": to_memory(a, dtype), "b": nan_memory(rows * cols, dtype)}
    want = transpose_lds.transpose(a).reshape(-1)
    return Case(spec, (ceil_div(cols, width), ceil_div(rows, tile)), spec["block"], buffers,
                {"rows": rows, "cols": cols}, [Output("b", dtype, want, None, 0.0)])


# ---- gemm_mma ---------------------------------------------------------------------------
def plan_gemm_mma(spec, arch, rng):
    m, n, k, dtype = 2 * spec["tile_m"], 2 * spec["tile_n"], 2 * spec["tile_k"], spec["dtype"]
    require_small(max(m * k, k * n, m * n), m * n * k, "the gemm problem")
    a, b = random_values(rng, (m, k), dtype), random_values(rng, (k, n), dtype)
    c = random_values(rng, (m, n), "f32") if spec["accumulate"] else None
    want = gemm_mma.gemm(a, b, c)
    scale = np.abs(a) @ np.abs(b) + (np.abs(c) if c is not None else 0.0)
    buffers = {"a": to_memory(a, dtype), "b": to_memory(b, dtype),
               "c": c.copy() if c is not None else np.full((m, n), np.nan, dtype=np.float32)}
    block = spec["waves"] * arch.wave_size
    return Case(spec, (n // spec["tile_n"], m // spec["tile_m"]), block, buffers, {"n": n, "k": k},
                [Output("c", "f32", want.reshape(-1), scale.reshape(-1), RTOL["f32"])])


# ---- depthwise convolutions -------------------------------------------------------------
def small_conv_shape(spec, rows_per_lane, columns_per_lane):
    """n, h, w, c shrunk: two images' worth of channels gone, a few tiles of rows and columns."""
    small = dict(spec)
    small["n"] = min(spec["n"], 2)
    small["c"] = min(spec["c"], 2 * spec["cpl"]) if spec["c"] % spec["cpl"] == 0 else spec["c"]
    small["h"] = min(spec["h"], spec["kh"] + 2 * rows_per_lane * spec["stride"] + 1)
    small["w"] = min(spec["w"], spec["kw"] + 2 * columns_per_lane * spec["stride"] + 1)
    return small


def conv_case(spec, arch, rng, names, source_shape, out_shape, want_of, lanes):
    dtype = spec["dtype"]
    require_small(max(math.prod(source_shape), math.prod(out_shape)),
                  math.prod(out_shape) * spec["kh"] * spec["kw"], "the depthwise conv problem")
    source = random_values(rng, source_shape, dtype)
    wt = random_values(rng, (spec["c"], spec["kh"], spec["kw"]), dtype)
    want, scale = want_of(source, wt)
    block = spec["block_waves"] * arch.wave_size
    buffers = {names[0]: to_memory(source, dtype), names[1]: to_memory(wt, dtype),
               names[2]: nan_memory(out_shape, dtype)}
    return Case(spec, (ceil_div(lanes, block),), block, buffers, {},
                [Output(names[2], dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])])


def plan_conv_depthwise_tiled(spec, arch, rng):
    s = small_conv_shape(spec, spec["block_h"], spec["block_w"])
    pad_w = conv_depthwise.column_padding(s["pad"], s["pad_w"])
    ho, wo = conv_depthwise.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], pad_w)
    if s["dgrad"]:
        names, source_shape, out_hw = ("dy", "wt", "dx"), (s["n"], ho, wo, s["c"]), (s["h"], s["w"])
        want_of = lambda dy, wt: (conv_depthwise.dgrad_rotated(dy, wt, s["h"], s["w"], s["pad"], s["pad_w"]),
                                  conv_depthwise.dgrad_rotated(np.abs(dy), np.abs(wt), s["h"], s["w"], s["pad"], s["pad_w"]))
    else:
        names, source_shape, out_hw = ("x", "wt", "y"), (s["n"], s["h"], s["w"], s["c"]), (ho, wo)
        want_of = lambda x, wt: (conv_depthwise.forward(x, wt, s["stride"], s["pad"], s["pad_w"]),
                                 conv_depthwise.forward(np.abs(x), np.abs(wt), s["stride"], s["pad"], s["pad_w"]))
    tiles = ceil_div(out_hw[0], s["block_h"]) * ceil_div(out_hw[1], s["block_w"])
    lanes = s["n"] * tiles * (s["c"] // s["cpl"])
    return conv_case(s, arch, rng, names, source_shape, (s["n"],) + out_hw + (s["c"],), want_of, lanes)


def plan_conv_depthwise_dgrad_stream(spec, arch, rng):
    s = small_conv_shape(spec, 1, spec["block_w"])
    ho, wo = conv_depthwise.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    want_of = lambda dy, wt: (conv_depthwise.dgrad(dy, wt, s["h"], s["w"], s["stride"], s["pad"], s["pad_w"]),
                              conv_depthwise.dgrad(np.abs(dy), np.abs(wt), s["h"], s["w"], s["stride"], s["pad"], s["pad_w"]))
    lanes = s["n"] * ceil_div(s["w"], s["block_w"]) * (s["c"] // s["cpl"])
    return conv_case(s, arch, rng, ("dy", "wt", "dx"), (s["n"], ho, wo, s["c"]), (s["n"], s["h"], s["w"], s["c"]),
                     want_of, lanes)


# ---- conv_fwd_lds_halo ------------------------------------------------------------------
def plan_conv_fwd_lds_halo(spec, arch, rng):
    """The spec's own shape with the batch cut to two images (as small_conv_shape does; every
    numbered config has n <= 2, a fuzzed one up to 1000); split_c runs the module's two kernels in
    order."""
    s = spec = dict(spec, n=min(spec["n"], 2))
    dtype = spec["dtype"]
    groups = s["groups"] if s["grouped"] else 1
    per_group = s["c"] // groups
    ho, wo = conv_fwd_lds_halo.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    require_small(max(s["n"] * s["h"] * s["w"] * s["c"], s["k"] * s["kh"] * s["kw"] * per_group),
                  s["n"] * ho * wo * s["k"] * s["kh"] * s["kw"] * per_group, "the conv problem")
    x = random_values(rng, (s["n"], s["h"], s["w"], s["c"]), dtype)
    wt = random_values(rng, (s["k"], s["kh"], s["kw"], per_group), dtype)
    want = conv_fwd_lds_halo.conv_forward(x, wt, s["stride"], s["pad"], groups)
    scale = conv_fwd_lds_halo.conv_forward(np.abs(x), np.abs(wt), s["stride"], s["pad"], groups)
    problem_channels = s["group_merge"] * (s["k"] // groups)
    block = s["waves"] * arch.wave_size
    grid = (s["n"] * ho * ceil_div(wo, s["tile_w"]), problem_channels // s["tile_n"],
            groups // s["group_merge"] * s["split_c"])
    y = nan_memory((s["n"], ho, wo, s["k"]), dtype)
    buffers = {"x": to_memory(x, dtype), "wt": to_memory(wt, dtype), "y": y}
    output = Output("y", dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])
    if s["split_c"] == 1:
        return Case(spec, grid, block, buffers, {}, [output])
    buffers["ws"] = np.full((s["split_c"], s["n"], ho, wo, s["k"]), np.nan, dtype=np.float32)
    total = s["n"] * ho * wo * s["k"]
    # "": the module's first kernel, whose name the engine's answer gives (check_numerics fills it in)
    runs = [("", grid, block, ("x", "wt", "ws")),
            ("conv_split_reduce", (ceil_div(total, 4 * 256),), 256, ("ws", "y"))]
    return Case(spec, grid, block, buffers, {}, [output], runs=runs)


PLANS = {
    "conv_fwd_lds_halo": plan_conv_fwd_lds_halo,
    "elementwise": plan_elementwise,
    "reduce_rows": plan_reduce_rows,
    "transpose_lds": plan_transpose_lds,
    "gemm_mma": plan_gemm_mma,
    "conv_depthwise_tiled": plan_conv_depthwise_tiled,
    "conv_depthwise_dgrad_stream": plan_conv_depthwise_dgrad_stream,
}


def make_case(family, spec, arch, config_id):
    """The case of one config (spec already parsed with its defaults); KeyError for a family without a plan."""
    rng = np.random.default_rng([SEED, config_id])
    return PLANS[family](spec, arch, rng)


def compare(output, got_memory):
    """None when every element is within tolerance, else a dict: max abs and rel error, first bad index."""
    got = from_memory(got_memory, output.dtype).reshape(-1).astype(np.float64)
    want = np.asarray(output.want, dtype=np.float64).reshape(-1)
    scale = 0.0 if output.scale is None else np.asarray(output.scale, dtype=np.float64).reshape(-1)
    tolerance = output.rtol * np.abs(want) + ACCUMULATION * scale
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        bad = ~same & ~(error <= tolerance)
    if not bad.any():
        return None
    first = int(np.flatnonzero(bad)[0])
    finite = np.where(np.isfinite(error), error, np.inf)
    relative = finite / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    return {"output": output.name, "bad": int(bad.sum()), "elements": int(bad.size), "first_bad_index": first,
            "got": float(got[first]), "want": float(want[first]), "tolerance": float(np.broadcast_to(tolerance, bad.shape)[first]),
            "max_abs_error": float(finite[bad].max()), "max_rel_error": float(relative[bad].max())}

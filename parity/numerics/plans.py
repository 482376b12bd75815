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

from references import (attention_fwd, conv_depthwise, conv_fwd_lds_halo, elementwise, gemm_epilogue, gemm_mma,
                        norm_rows, reduce_rows, scan_rows, softmax_rows, transpose_lds)
from references.reduce_rows import round_to

SEED = 20261202
# |got - want| <= RTOL[dtype] * |want| + ACCUMULATION * scale, scale = the sum of the magnitudes
# of the terms behind each output (0 for ops with one rounding and no sum). RTOL is two ulps
# of the output dtype; ACCUMULATION covers an f32 sum in another order than the reference's f64.
RTOL = {"f32": 2.0 ** -22, "f16": 2.0 ** -9, "bf16": 2.0 ** -6}
ACCUMULATION = 2.0 ** -19
EXP_RTOL = 2.0 ** -20  # exp is approximate in hardware (docs/ir.md): silu in f32 gets this slack
# One step of the dtype's subnormal spacing: an output that small is rounded on an absolute grid,
# so a relative slack alone cannot cover one rounding there (softmax of a long f16 row).
SUBNORMAL_STEP = {"f32": 2.0 ** -149, "f16": 2.0 ** -24, "bf16": 2.0 ** -133}


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
    atol: float = 0.0         # an absolute slack on top (SUBNORMAL_STEP where outputs can be subnormal)


@dataclass
class Case:
    spec: dict
    grid: tuple               # the grid of a launch the engine's plan leaves to run time
    block: int
    buffers: dict             # buffer name -> numpy array in memory layout (bf16 as uint16)
    scalars: dict
    outputs: list = field(default_factory=list)
    note: str = ""
    # test-only: the 32-bit buffer range lowered (bytes) so that the small spec chunks its batch
    # as the config's real size does (the engine's emit request carries it)
    buffer_range: int = None


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


# ---- softmax_rows -----------------------------------------------------------------------
def plan_softmax_rows(spec, arch, rng):
    """The spec's own cols (its row reach decides the code path); rows give a second grid-stride
    trip to some workgroups (scope block) or some waves (scope wave). Inputs span [-8, 8] so the
    running max grows and rescales the sum along a row. y = e / s: its error relative to itself is
    the sum's (ACCUMULATION, scale |y|) plus exp's (EXP_RTOL) plus the output rounding; a long
    f16 row has subnormal outputs, rounded on an absolute grid (SUBNORMAL_STEP)."""
    dtype, grid = spec["dtype"], 2
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    rows = grid * per_group + max(1, per_group // 2)
    require_small(rows * spec["cols"], rows * spec["cols"], "the softmax_rows problem")
    x = random_values(rng, (rows, spec["cols"]), dtype, -8.0, 8.0)
    want = softmax_rows.softmax_rows(x, dtype)
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", dtype, want.reshape(-1), np.abs(want).reshape(-1), RTOL[dtype] + EXP_RTOL,
                        SUBNORMAL_STEP[dtype])])


# ---- norm_rows --------------------------------------------------------------------------
def plan_norm_rows(spec, arch, rng):
    """The rows of softmax_rows' plan (the same frame); inputs in [-1, 3] so the mean is away
    from 0 and layer's two passes matter; weight and bias in [-2, 2]. An f32 statistics error
    scales the magnitudes norm_rows.deviation_scale gives (ACCUMULATION)."""
    dtype, grid, cols = spec["dtype"], 2, spec["cols"]
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    rows = grid * per_group + max(1, per_group // 2)
    require_small(rows * cols, rows * cols, "the norm_rows problem")
    x = random_values(rng, (rows, cols), dtype, -1.0, 3.0)
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    weight = bias = None
    if spec["affine"]:
        weight = random_values(rng, cols, dtype)
        buffers["weight"] = to_memory(weight, dtype)
        if spec["kind"] == "layer":
            bias = random_values(rng, cols, dtype)
            buffers["bias"] = to_memory(bias, dtype)
    want = norm_rows.norm_rows(x, spec["kind"], dtype, weight, bias)
    scale = norm_rows.deviation_scale(x, spec["kind"], weight)
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", dtype, want.reshape(-1), scale.reshape(-1), RTOL[dtype], SUBNORMAL_STEP[dtype])])


# ---- scan_rows --------------------------------------------------------------------------
def plan_scan_rows(spec, arch, rng):
    """The spec's own cols (below, at or above the row's reach, a partial last chunk, is the code
    path); rows give a second grid-stride trip to some workgroups (scope block) or some waves
    (scope wave). A sum's scale is the running sum of |x| behind each output. split runs the
    module's carry pass and then the scan, as the engine's launch plan orders them, both over
    grid y = split (the carry's last segment total is computed and not read)."""
    dtype, grid, split = spec["dtype"], 2, spec["split"]
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    rows = grid * per_group + max(1, per_group // 2)
    require_small(rows * spec["cols"], rows * spec["cols"], "the scan_rows problem")
    x = random_values(rng, (rows, spec["cols"]), dtype)
    want = scan_rows.scan_rows(x, spec["op"], spec["exclusive"], dtype)
    scale = scan_rows.magnitudes(x, spec["exclusive"]).reshape(-1) if spec["op"] == "sum" else None
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    output = Output("y", dtype, want.reshape(-1), scale, RTOL[dtype])
    if split > 1:
        buffers["carries"] = np.full(rows * split, np.nan, dtype=np.float32)
    return Case(spec, (grid, split), spec["block"], buffers, {"rows": rows}, [output])


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


# ---- gemm_epilogue ----------------------------------------------------------------------
# the largest slope of an epilogue activation (gelu_tanh's is 1.13, silu's 1.10): an error before
# the activation grows by at most this much
ACTIVATION_SLOPE = 1.2


FP8_LAYOUTS = {"fp8": "e4m3", "bf8": "e5m2"}


def gemm_operands(spec, arch, rng, m, n, k):
    """(a, b as values, their buffers): 16-bit a and b, or fp8 / bf8 bytes of a and of b transposed
    (b_t) in the variant of the format the arch's mfma reads (its fp8_format, from the engine's hello)."""
    dtype = spec["dtype"]
    if dtype in FP8_LAYOUTS:
        if not arch.fp8_format:
            raise ValueError(f"the engine's hello gives {arch.name} no fp8_format, so the {dtype} inputs cannot be "
                             f"encoded (docs/protocol.md, arch_facts)")
        fmt = f"{FP8_LAYOUTS[dtype]}_{arch.fp8_format}"
        a_bytes, bt_bytes = gemm_epilogue.random_fp8(rng, (m, k), fmt), gemm_epilogue.random_fp8(rng, (n, k), fmt)
        a, b = gemm_epilogue.decode_fp8(a_bytes, fmt), gemm_epilogue.decode_fp8(bt_bytes, fmt).T
        return a, b, {"a": a_bytes, "b_t": bt_bytes}
    a, b = random_values(rng, (m, k), dtype), random_values(rng, (k, n), dtype)
    return a, b, {"a": to_memory(a, dtype), "b": to_memory(b, dtype)}


def plan_gemm_epilogue(spec, arch, rng):
    """gemm_mma's shape (two tiles each way, two k steps); bias, residual and c as the spec asks.
    The accumulation scale goes through the activation's slope; exp-based activations get the
    exp slack (and, being several f32 steps, a few f32 ulps more)."""
    m, n, k, out = 2 * spec["tile_m"], 2 * spec["tile_n"], 2 * spec["tile_k"], spec["out_dtype"]
    require_small(max(m * k, k * n, m * n), m * n * k, "the gemm_epilogue problem")
    a, b, buffers = gemm_operands(spec, arch, rng, m, n, k)
    bias = random_values(rng, n, "f32") if spec["bias"] else None
    residual = random_values(rng, (m, n), out) if spec["residual"] else None
    want = gemm_epilogue.gemm_epilogue(a, b, bias, residual, spec["activation"], out)
    scale = ACTIVATION_SLOPE * (np.abs(a) @ np.abs(b) + (np.abs(bias)[None, :] if bias is not None else 0.0))
    scale = scale + (np.abs(residual) if residual is not None else 0.0)
    if bias is not None:
        buffers["bias"] = bias.copy()
    if residual is not None:
        buffers["residual"] = to_memory(residual, out)
    buffers["c"] = nan_memory((m, n), out)
    rtol = RTOL[out] + (EXP_RTOL + RTOL["f32"] if spec["activation"] in ("gelu_tanh", "silu") else 0.0)
    block = spec["waves"] * arch.wave_size
    return Case(spec, (n // spec["tile_n"], m // spec["tile_m"]), block, buffers, {"n": n, "k": k},
                [Output("c", out, want.reshape(-1), scale.reshape(-1), rtol)])


# ---- attention_fwd ----------------------------------------------------------------------
# p is rounded to the input dtype before P V (the mma's operand): a relative error of up to half
# an ulp per term, so up to P_ROUNDING * sum_j p_j |v_j| in an output. SCORE_SLACK covers the f32
# side on the same magnitudes: the scores' f32 sums, exp, and the running sums rescaled in another
# order than the reference (every config stays GREEN at 2^-16: a margin of 4; a softmax scale off
# by 0.1% fails f16 configs).
P_ROUNDING = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
SCORE_SLACK = 2.0 ** -14


def plan_attention_fwd(spec, arch, rng):
    """Two heads; two query tiles of the workgroup (waves * M queries, M the instruction's, from
    its spec name) and at least two key tiles; seq_k leaves a partial last key tile: causal, 3
    keys short of seq_q (so the last workgroup's loop ends in the tail), else a tile and a half
    and 3 keys. Inputs in [-2, 2]. The scale of an output is sum_j p_j |v_j| times
    (P_ROUNDING + SCORE_SLACK) / ACCUMULATION, so the compare's ACCUMULATION term is that bound."""
    dtype, head_dim, tile_kv, heads = spec["dtype"], spec["head_dim"], spec["tile_kv"], 2
    tile_q = spec["waves"] * int(spec["mma"].split("_")[1].split("x")[0])
    seq_q = ceil_div(max(2 * tile_q, 2 * tile_kv), tile_q) * tile_q
    seq_k = seq_q - 3 if spec["causal"] else tile_kv + tile_kv // 2 + 3
    require_small(heads * max(seq_q, seq_k) * head_dim, 2 * heads * seq_q * seq_k * head_dim,
                  "the attention_fwd problem")
    q, k, v = (random_values(rng, (heads, seq, head_dim), dtype) for seq in (seq_q, seq_k, seq_k))
    scale = float(np.float32(1.0 / math.sqrt(head_dim)))
    want = attention_fwd.attention(q, k, v, spec["causal"], scale, dtype)
    behind = np.einsum("hij,hjd->hid", attention_fwd.probabilities(q, k, spec["causal"], scale), np.abs(v))
    buffers = {"q": to_memory(q, dtype), "k": to_memory(k, dtype), "v": to_memory(v, dtype),
               "o": nan_memory(q.shape, dtype)}
    return Case(spec, (seq_q // tile_q, heads), spec["waves"] * arch.wave_size, buffers,
                {"seq_q": seq_q, "seq_k": seq_k},
                [Output("o", dtype, want.reshape(-1),
                        (behind * ((P_ROUNDING[dtype] + SCORE_SLACK) / ACCUMULATION)).reshape(-1), RTOL[dtype])])


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


def plan_conv_depthwise_wgrad(spec, arch, rng):
    """Two images and two channel groups, with the config's own filter, split and block_kh; rows and
    columns for about 1.5 blocks of positions per split for the first two splits (a second trip for
    some lanes; later splits share them, or are empty: the cost of a large filter or split stays
    that of a small one). The plan gives every grid; ws (split > 1) starts as NaN, so a partial the
    wgrad kernel never writes fails."""
    s = dict(spec, n=min(spec["n"], 2))
    s["c"] = min(spec["c"], 2 * spec["cpl"]) if spec["c"] % spec["cpl"] == 0 else spec["c"]
    block = spec["block_waves"] * arch.wave_size
    side = math.isqrt(ceil_div((block + block // 2) * min(spec["split"], 2), s["n"])) + 1
    s["h"] = min(spec["h"], (side - 1) * spec["stride"] + spec["kh"] - 2 * spec["pad"])
    s["w"] = min(spec["w"], (side - 1) * spec["stride"] + spec["kw"] - 2 * conv_depthwise.column_padding(spec["pad"], spec["pad_w"]))
    s["h"], s["w"] = max(s["h"], 1), max(s["w"], 1)
    dtype = s["dtype"]
    ho, wo = conv_depthwise.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    require_small(s["n"] * max(s["h"] * s["w"], ho * wo) * s["c"], s["n"] * ho * wo * s["c"] * s["kh"] * s["kw"],
                  "the depthwise wgrad problem")
    x = random_values(rng, (s["n"], s["h"], s["w"], s["c"]), dtype)
    dy = random_values(rng, (s["n"], ho, wo, s["c"]), dtype)
    want = conv_depthwise.wgrad(x, dy, s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    scale = conv_depthwise.wgrad(np.abs(x), np.abs(dy), s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    buffers = {"x": to_memory(x, dtype), "dy": to_memory(dy, dtype), "dw": nan_memory(want.shape, dtype)}
    if s["split"] > 1:
        buffers["ws"] = np.full((s["split"],) + want.shape, np.nan, dtype=np.float32)
    output = Output("dw", dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])
    return Case(s, None, block, buffers, {}, [output])


# ---- conv_fwd_lds_halo ------------------------------------------------------------------
def conv_per_image_bytes(s):
    """One image's bytes of each batched tensor: input, output and (split_c > 1) the f32 workspace."""
    ho, wo = conv_fwd_lds_halo.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    half = 2
    sizes = [s["h"] * s["w"] * s["c"] * half, ho * wo * s["k"] * half]
    return sizes + ([s["split_c"] * ho * wo * s["k"] * 4] if s["split_c"] > 1 else [])


def conv_weight_bytes(s):
    return s["k"] * s["kh"] * s["kw"] * (s["c"] // (s["groups"] if s["grouped"] else 1)) * 2


def chunked_small_spec(spec, real_sizes):
    """(small spec, lowered range) of a config whose batch the real 2^31-byte range chunks: a few
    rows and a tile and a half of columns, the fewest channels its split allows (ungrouped), and
    the range lowered to fit two images (or the weights, whichever is more), with the batch sized
    so that it splits into as many chunks as the real one, with a remainder if the real one has one."""
    s = dict(spec)
    s["h"] = min(s["h"], s["kh"] + s["stride"])
    s["w"] = min(s["w"], (s["tile_w"] + s["tile_w"] // 2) * s["stride"] + s["kw"] - 1)
    if not s["grouped"]:
        s["c"] = min(s["c"], s["split_c"] * int(s["mma"].split("x")[-1]))
        s["k"] = min(s["k"], s["tile_n"])
    largest = max(conv_per_image_bytes(s))
    buffer_range = max(2 * largest, conv_weight_bytes(s)) + 1
    fits = (buffer_range - 1) // largest
    s["n"] = fits * len(real_sizes) - (1 if real_sizes[0] != real_sizes[-1] else 0)
    return s, buffer_range


def plan_conv_fwd_lds_halo(spec, arch, rng):
    """The spec's own shape with the batch cut to two images (every numbered config has n <= 2, a
    fuzzed one up to 1000, whose reference alone took minutes), or, when the real batch runs as
    chunks, a small shape that chunks alike under a lowered range. The engine's plan runs every
    launch (both kernels of a split_c module, per chunk) over views of these buffers; the
    reference convolves chunk by chunk."""
    real_sizes = conv_fwd_lds_halo.batch_chunks(spec["n"], conv_per_image_bytes(spec))
    s, buffer_range = chunked_small_spec(spec, real_sizes) if len(real_sizes) > 1 \
        else (dict(spec, n=min(spec["n"], 2)), None)
    sizes = conv_fwd_lds_halo.batch_chunks(s["n"], conv_per_image_bytes(s), buffer_range or conv_fwd_lds_halo.BUFFER_RANGE)
    dtype = s["dtype"]
    groups = s["groups"] if s["grouped"] else 1
    per_group = s["c"] // groups
    ho, wo = conv_fwd_lds_halo.output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    require_small(max(s["n"] * s["h"] * s["w"] * s["c"], s["k"] * s["kh"] * s["kw"] * per_group),
                  s["n"] * ho * wo * s["k"] * s["kh"] * s["kw"] * per_group, "the conv problem")
    x = random_values(rng, (s["n"], s["h"], s["w"], s["c"]), dtype)
    wt = random_values(rng, (s["k"], s["kh"], s["kw"], per_group), dtype)
    want = conv_fwd_lds_halo.conv_forward_chunked(x, wt, s["stride"], s["pad"], groups, sizes)
    scale = conv_fwd_lds_halo.conv_forward_chunked(np.abs(x), np.abs(wt), s["stride"], s["pad"], groups, sizes)
    y = nan_memory((s["n"], ho, wo, s["k"]), dtype)
    buffers = {"x": to_memory(x, dtype), "wt": to_memory(wt, dtype), "y": y}
    if s["split_c"] > 1:  # each chunk's partials from the start: room for the largest chunk
        buffers["ws"] = np.full((s["split_c"] * max(sizes), ho, wo, s["k"]), np.nan, dtype=np.float32)
    output = Output("y", dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])
    # the plan gives every grid and block: the case's are never used
    return Case(s, None, s["waves"] * arch.wave_size, buffers, {}, [output], buffer_range=buffer_range)


PLANS = {
    "attention_fwd": plan_attention_fwd,
    "conv_fwd_lds_halo": plan_conv_fwd_lds_halo,
    "elementwise": plan_elementwise,
    "norm_rows": plan_norm_rows,
    "reduce_rows": plan_reduce_rows,
    "scan_rows": plan_scan_rows,
    "softmax_rows": plan_softmax_rows,
    "transpose_lds": plan_transpose_lds,
    "gemm_mma": plan_gemm_mma,
    "gemm_epilogue": plan_gemm_epilogue,
    "conv_depthwise_tiled": plan_conv_depthwise_tiled,
    "conv_depthwise_dgrad_stream": plan_conv_depthwise_dgrad_stream,
    "conv_depthwise_wgrad": plan_conv_depthwise_wgrad,
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
    tolerance = output.rtol * np.abs(want) + ACCUMULATION * scale + output.atol
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        bad = ~same & ~(error <= tolerance)
    if not bad.any():
        return None
    first = int(np.flatnonzero(bad)[0])
    finite = np.where(np.isfinite(error), error, np.inf)
    with np.errstate(invalid="ignore"):  # an infinite want (an exclusive max scan's -inf) gives inf / inf
        relative = finite / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    relative = np.where(np.isnan(relative), np.inf, relative)
    return {"output": output.name, "bad": int(bad.sum()), "elements": int(bad.size), "first_bad_index": first,
            "got": float(got[first]), "want": float(want[first]), "tolerance": float(np.broadcast_to(tolerance, bad.shape)[first]),
            "max_abs_error": float(finite[bad].max()), "max_rel_error": float(relative[bad].max())}

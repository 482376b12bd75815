"""What the numerics lane's plans share. A family's plan is `plan(spec, arch, rng)` in
parity/numerics/references/<family>.py, beside its numpy reference, found by the family's name
(family_plan): for a parity config, the small spec the interpreter runs, the launch, the inputs
(from a fixed seed) and the expected outputs (a Case). A module of references/ without `plan` is
shared by several families (conv_depthwise_common).

A plan keeps the config's code path and shrinks only what costs interpreter time: run-time sizes
(n, rows, cols, m/n/k) are chosen to cover partial tiles, tails and more than one grid-stride trip;
compile-time shapes in a spec (the depthwise convolutions' n, h, w, c) shrink to the smallest
problem that still has interior, edge and partial tiles. Inputs hold values exactly representable
in their dtype; outputs start as NaN so an element the kernel never writes fails.
"""
import functools
import importlib
import json
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

SEED = 20261202
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
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
    exact: bool = False       # exact by construction (a copy, a max): compared bit for bit, ±0 and NaNs too


@dataclass
class Case:
    spec: dict
    grid: tuple               # the grid of a launch the engine's plan leaves to run time
    block: int
    buffers: dict             # buffer name -> numpy array in memory layout (bf16 as uint16)
    scalars: dict
    outputs: list = field(default_factory=list)
    note: str = ""            # one of a set's several cases: what tells it apart (its sizes, "seq_k 37")
    # test-only: the 32-bit buffer range lowered (bytes) so that the small spec chunks its batch
    # as the config's real size does (the engine's emit request carries it)
    buffer_range: int = None
    # the values of the launch contract's sizes (docs/protocol.md), when they are not the scalars
    sizes: dict = None


# ---- values and memory ------------------------------------------------------------------
def round_to(values, dtype):
    """f32 values rounded to f16, bf16 (nearest even) or kept f32, returned as f32."""
    values = np.asarray(values, dtype=np.float32)
    if dtype == "f32":
        return values
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float32)
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32)


def random_values(rng, shape, dtype, low=-2.0, high=2.0, peaks=None):
    """f32 values exactly representable in dtype, drawn from the case's input set (rng: Inputs;
    INPUT_SETS) over [low, high]. peaks: where the `peaks` set puts each row's peak (Peaks; a
    plan that knows which lane reads which column says so), else a column drawn per row."""
    if rng.inputs in PEAK_SETS:
        return round_to(_peaks(rng, shape, dtype, low, high, peaks).astype(np.float32), dtype)
    draw = INPUT_SETS[rng.inputs]
    return round_to(draw(rng, shape, dtype, low, high).astype(np.float32), dtype)


# ---- named input sets ---------------------------------------------------------------------
# Uniform random inputs almost never make an identity or a boundary matter: a max scan whose
# leading lanes see only negative values, a sum that cancels, ties, the dtype's extremes. Every
# case runs with "random" and with the sets its family names for the spec (`input_sets(spec)` in
# its references module); each set shapes every input the plan draws with random_values.
LARGEST_NORMAL = {"f32": float(np.finfo(np.float32).max), "f16": 65504.0, "bf16": 3.3895313892515355e38}
SMALLEST_NORMAL = {"f32": 2.0 ** -126, "f16": 2.0 ** -14, "bf16": 2.0 ** -126}


def _span(low, high):
    return max(abs(low), abs(high))


def _random(rng, shape, dtype, low, high):
    return rng.uniform(low, high, size=shape)


def _negative(rng, shape, dtype, low, high):
    """Every value below zero: a max's identity (-inf, not 0) decides every lane that sees no other."""
    return -rng.uniform(_span(low, high) / 64, _span(low, high), size=shape)


def _positive(rng, shape, dtype, low, high):
    return rng.uniform(_span(low, high) / 64, _span(low, high), size=shape)


def _ties(rng, shape, dtype, low, high):
    """Each row (the last axis) one value of three: a max or a softmax of exact ties, a norm of a
    constant row (its variance exactly 0)."""
    shape = tuple(np.atleast_1d(shape))
    choices = np.array([-_span(low, high) / 2, _span(low, high) / 4, _span(low, high) / 2])
    rows = rng.choice(choices, size=shape[:-1])
    return np.broadcast_to(np.asarray(rows)[..., None], shape).copy()


def _cancelling(rng, shape, dtype, low, high):
    """Along the last axis each odd element the negation of the one before: sums cancel exactly."""
    values = rng.uniform(low, high, size=shape)
    values[..., 1::2] = -values[..., 0:values.shape[-1] - values.shape[-1] % 2:2]
    return values


def _extremes(rng, shape, dtype, low, high):
    """The dtype's largest and smallest normal values, either sign: exact results must stay exact
    at the ends of the range (max, min, copies)."""
    ends = [LARGEST_NORMAL[dtype], SMALLEST_NORMAL[dtype]]
    return rng.choice(ends + [-v for v in ends], size=shape)


def _specials(rng, shape, dtype, low, high):
    """The extremes, ±0, ±inf, NaN and the smallest subnormal: what a copy must move bit for bit."""
    subnormal = {"f32": 2.0 ** -149, "f16": 2.0 ** -24, "bf16": 2.0 ** -133}[dtype]
    values = [LARGEST_NORMAL[dtype], SMALLEST_NORMAL[dtype], subnormal, 0.0, np.inf, 1.5]
    values += [-v for v in values] + [np.nan]
    return rng.choice(values, size=shape)


def _masked(rng, shape, dtype, low, high):
    """Uniform values with a quarter of each row (the last axis) at -inf, never a whole row: the
    logits an attention mask hides, whose softmax is exactly 0 (a running max that starts at
    -inf, or a difference taken the wrong way round, makes it NaN or inf)."""
    values = rng.uniform(low, high, size=shape)
    rows = values.reshape(-1, values.shape[-1])
    cols = rows.shape[1]
    if cols >= 2:
        for row in rows:
            row[rng.choice(cols, size=max(1, cols // 4), replace=False)] = -np.inf
    return values


@dataclass
class Peaks:
    """Where and how high the `peaks` set puts one value per row: `columns[r]` of row r (None:
    drawn), `height` (None: the span times the square root of the row, so the peak outweighs the
    rest of the row in a sum of squares too)."""
    columns: list = None
    height: float = None


def _peaks(rng, shape, dtype, low, high, peaks=None):
    """Uniform values with one peak per row (the last axis): a reduction step that drops or
    duplicates the peak's lane is wrong by the peak, where uniform values differ by less than
    a low precision's tolerance (a sum of squares) or not at all (a max held by another lane)."""
    peaks = peaks or Peaks()
    values = rng.uniform(low, high, size=shape)
    rows = values.reshape(-1, values.shape[-1])
    columns = peaks.columns if peaks.columns is not None else rng.integers(0, rows.shape[1], size=len(rows))
    height = peaks.height if peaks.height is not None else _span(low, high) * max(2.0, math.sqrt(rows.shape[1]))
    rows[np.arange(len(rows)), np.asarray(columns)] = height
    return values


def _zero_rows(rng, shape, dtype, low, high):
    """Uniform values with every other row (the last axis; the first row among them) all zero:
    a norm's zero row, whose statistics are 0 and whose quantization scale must be 0, not NaN."""
    values = rng.uniform(low, high, size=shape)
    if values.ndim >= 2:
        values.reshape(-1, values.shape[-1])[0::2] = 0.0
    return values


def _halfsteps(rng, shape, dtype, low, high):
    """Values k + 1/2 for integers k in [low, high): ties for a rounding to integers (exact in
    every dtype while |k| < 128)."""
    return np.floor(rng.uniform(low, high, size=shape)) + 0.5


def _large(rng, shape, dtype, low, high):
    """Magnitudes in [L/2, L], either sign: L the dtype's largest normal over 4, and at most what
    keeps the sum of squares of a row (the last axis) of pairwise sums finite in f32."""
    cols = np.atleast_1d(shape)[-1]
    top = min(LARGEST_NORMAL[dtype] / 4, math.sqrt(LARGEST_NORMAL["f32"] / cols) / 4)
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(top / 2, top, size=shape)


# The lanes that hold each row's peak in turn: lane 7 is left out by a row-mask step at every
# step of the DPP tree (an odd lane, the upper half of its quad, of its half row's second quad),
# the odd lanes by a bpermute step one lane off, lanes 16, 32 and 48 by the wave's last steps,
# lane 0 by a scan step that leaves the first lane out.
PEAK_LANES = (7, 32, 13, 16, 0, 11, 48, 1, 9, 2, 14)
# The `step_peaks` set's lanes: lane s is the lane that lane 0 reads at a wave step of stride s
# (a bpermute rotation, a DPP row_ror), so a step that reads one lane further misses the peak there.
STEP_LANES = (1, 2, 4, 8, 16, 32)

# The lanes of the `mid_peaks` set: 8 mod 16 and 4 mod 8, which PEAK_LANES never names. A
# bpermute step of +8 made +9 leaves every lane 8 mod 16 out of lane 0's total (+4 made +5: every
# lane 4 mod 8); a plan of few rows meets none of them in its random rows.
MID_PEAK_LANES = (8, 4, 24, 12, 40, 20, 56, 28)


def peak_lanes(inputs):
    """The lanes a peak set names in turn (PEAK_LANES, MID_PEAK_LANES for `mid_peaks`, STEP_LANES
    for `step_peaks`)."""
    return {"mid_peaks": MID_PEAK_LANES, "step_peaks": STEP_LANES}.get(inputs, PEAK_LANES)


def peak_columns(rows, cols, vec, lanes, wave, order=PEAK_LANES):
    """Peaks at the columns a kernel reads through a varying lane: lane t of `lanes` reads
    columns t*vec + k*lanes*vec + e (its vectors, trip k); row r's peak is in wave r mod the
    waves holding data, at lane order[r] (cyclically), in trip r mod the trips and element r mod vec."""
    readers = min(lanes, ceil_div(cols, vec))
    waves, trips = ceil_div(readers, wave), ceil_div(cols, lanes * vec)
    columns = []
    for r in range(rows):
        reader = ((r % waves) * wave + order[r % len(order)] % wave) % readers
        trip = r % trips
        while trip and reader * vec + trip * lanes * vec >= cols:
            trip -= 1
        columns.append(min(reader * vec + trip * lanes * vec + r % vec, cols - 1))
    return columns


def _one_value(rng, shape, dtype, low, high):
    """Every element one value, drawn once: a histogram with one full bin (every token routed to
    one expert), a constant row."""
    return np.full(shape, rng.uniform(low, high))


def _gaps(rng, shape, dtype, low, high):
    """Values from every other one of 8 evenly spaced points only: the bins between stay empty
    (experts no token chose)."""
    points = np.linspace(low, high, 8)[::2]
    return points[rng.integers(0, len(points), size=shape)]


def _row_ends(rng, shape, dtype, low, high):
    """Each row (the last axis) all low or all high: the dot product of two such rows is k times
    low * low, low * high or high * high, the extremes of an integer product's sums (gemm_int8's
    -128 and 127: k x 16384 and k x -16256)."""
    shape = tuple(np.atleast_1d(shape))
    rows = rng.choice([float(low), float(high)], size=shape[:-1])
    return np.broadcast_to(np.asarray(rows)[..., None], shape).copy()


def _large_logits(rng, shape, dtype, low, high):
    """Magnitudes 4 .. 8 in steps of 1/4, all positive: the dot products of two such vectors are
    exact in f32 and in the hundreds once scaled by 1 / sqrt(head_dim), so an attention's exp
    overflows without its max subtraction."""
    return rng.integers(16, 33, size=shape) / 4.0


def _ascending(rng, shape, dtype, low, high):
    """Uniform values sorted along each row (the last axis; rounding to the dtype keeps the order):
    a max scan's every output is then its own element, so a pass that takes in an element from
    further along the row (a segment's carry that reads into the next segment) shows at once."""
    return np.sort(rng.uniform(low, high, size=shape), axis=-1)


def _lowest(rng, shape, dtype, low, high):
    """Every value the dtype's lowest finite value (minus its largest normal): rows of ties at the
    bottom of the range. In f32 that is the very value a row kernel's lane with no column holds as
    its running max, so a sum merged beside that max counts in full here and nowhere else (its
    rescale exp(lowest - max) is exactly 0 below any other max)."""
    return np.full(shape, -LARGEST_NORMAL[dtype])


def _row_last_lanes(rng, shape, dtype, low, high):
    """Uniform values, and along each row (the last axis) the largest at the columns 16 j + 15, each
    above the range by a half step more than the next, in an order drawn per row: a wave argmax
    over columns c in lane c mod the wave size (a multiple of 16) then finds every rank's winner in
    the last lane of a DPP row of 16, the lane that a step across the rows one lane off makes read
    another row (exact in f16 and bf16 up to 16 such columns)."""
    values = rng.uniform(low, high, size=shape)
    rows = values.reshape(-1, values.shape[-1])
    last = np.arange(15, rows.shape[1], 16)
    heights = high + (1 + np.arange(len(last))) / 2.0
    for row in rows:
        row[rng.permutation(last)] = heights
    return values


def _sawtooth(rng, shape, dtype, low, high):
    """One ascending run of 16 uniform values (a DPP row of lanes) repeated along each row (the last
    axis): every row of 16 lanes of a wave holds the same values, the largest in its last lane, so a
    step across rows meets a tie in every lane and a row's last lane holds the row's best."""
    run = np.sort(rng.uniform(low, high, size=tuple(shape[:-1]) + (16,)), axis=-1)
    return np.tile(run, (1,) * (len(shape) - 1) + (ceil_div(shape[-1], 16),))[..., :shape[-1]]


def _dead_rows(rng, shape, dtype, low, high):
    """Uniform values with every other row (the last axis) all -inf: a row the mask hides whole,
    whose softmax is 0 / 0, NaN in the definition and in a kernel whose running max starts at the
    lowest finite value (a normalisation left out gives 0 there instead)."""
    values = rng.uniform(low, high, size=shape)
    values.reshape(-1, values.shape[-1])[::2] = -np.inf
    return values


# Sets whose values are drawn as `random`: the set names what the plan shapes instead (docs/numerics.md,
# the input-set table): a routing of an indirection (one_group, long_group), its content
# (wild_tables), a size (no_tokens, one_block, tile_queries), run-time lengths that end a tile at
# every slot (tile_ends), where a row's winners sit (split_winners), or values the plan sets
# itself (zero_signs).
INPUT_SETS = {"random": _random, "negative": _negative, "positive": _positive, "ties": _ties,
              "cancelling": _cancelling, "extremes": _extremes, "specials": _specials, "peaks": _peaks,
              "masked": _masked, "one_value": _one_value, "gaps": _gaps, "one_group": _random,
              "zero_rows": _zero_rows, "halfsteps": _halfsteps, "large": _large, "row_ends": _row_ends,
              "large_logits": _large_logits, "ascending": _ascending,
              "lowest": _lowest, "mid_peaks": _peaks, "row_last_lanes": _row_last_lanes,
              "no_tokens": _random, "tile_ends": _random, "split_winners": _random,
              "step_peaks": _peaks, "sawtooth": _sawtooth, "long_group": _random,
              "wild_tables": _random, "one_block": _random,
              "tile_queries": _random, "dead_rows": _dead_rows, "zero_signs": _random}
# The sets that put one peak per row where the plan's Peaks say (`peaks`, `mid_peaks`, `step_peaks`).
PEAK_SETS = ("peaks", "mid_peaks", "step_peaks")


class Inputs:
    """A plan's source of inputs: numpy's generator (every draw a plan makes) and the name of the
    input set random_values shapes them by."""

    def __init__(self, generator, inputs):
        self.generator, self.inputs = generator, inputs

    def __getattr__(self, name):
        return getattr(self.generator, name)


# What an i32 output holds where the kernel wrote nothing (nan_memory's integer counterpart).
I32_UNWRITTEN = -559038737  # 0xDEADBEEF
INTEGER_MEMORY = {"i32": np.int32, "i8": np.int8}


def to_memory(values, dtype):
    if dtype in INTEGER_MEMORY:  # integer outputs (topk_softmax's indices, moe_sorting's counts, rmsnorm_quant's q)
        return np.ascontiguousarray(values, dtype=INTEGER_MEMORY[dtype]).copy()
    values = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "f32":
        return values.copy()
    if dtype == "f16":
        return values.astype(np.float16)
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def from_memory(array, dtype):
    if dtype in INTEGER_MEMORY:
        return np.asarray(array, dtype=INTEGER_MEMORY[dtype])
    if dtype == "f32":
        return np.asarray(array, dtype=np.float32)
    if dtype == "f16":
        return np.asarray(array).astype(np.float32)
    return (np.asarray(array).astype(np.uint32) << 16).view(np.float32)


def nan_memory(shape, dtype):
    if dtype == "i32":
        return np.full(shape, I32_UNWRITTEN, dtype=np.int32)
    return to_memory(np.full(shape, np.nan, dtype=np.float32), dtype)


def ceil_div(a, b):
    return -(-a // b)


# ---- chunked launches at small sizes -------------------------------------------------------
def chunk_step(unit_bytes, align=16):
    """The units a chunk is a multiple of, as the engine's plans cut them (plan.py chunk_length):
    each chunked view's bytes a whole number of align bytes."""
    step = 1
    for unit in unit_bytes:
        need = align // math.gcd(unit, align)
        step = step * need // math.gcd(step, need)
    return step


def two_chunk_range(units, unit_bytes):
    """(chunk, the lowered buffer range) under which the engine's plan cuts a size of at least
    chunk + 1 units into chunks of `chunk`: units rounded up to the chunk step, so the first chunk
    is a whole case of its own (plan.py chunk_length: half the range per view)."""
    step = chunk_step(unit_bytes)
    chunk = ceil_div(units, step) * step
    return chunk, 2 * chunk * max(unit_bytes)


def two_chunks_if_small(units, unit_bytes, elements_per_unit, last=None):
    """(the units to run, the lowered buffer range or None): a whole case's chunk before the last
    chunk, `last` units (default the case's; two_chunk_range), unless that passes MAX_ELEMENTS;
    then the case alone, unchunked."""
    chunk, buffer_range = two_chunk_range(units, unit_bytes)
    last = units if last is None else last
    if (chunk + last) * elements_per_unit > MAX_ELEMENTS:
        return units, None
    return chunk + last, buffer_range


def covered_rows(per_group):
    """A last chunk's rows that a grid clamped to cover them runs with one row slot to spare (a
    workgroup of `per_group` rows and a half; one row a workgroup: the case's): a wave starts at
    the row count and meets the row loop's guard there."""
    return per_group + per_group // 2 if per_group > 1 else None


# ---- where a run-time length can end a tile -----------------------------------------------
TABLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tables")


@functools.lru_cache(maxsize=None)
def table_rows(name):
    """tables/<name>.json's rows by name (the tree's one source of each table)."""
    with open(os.path.join(TABLES, name + ".json"), encoding="utf-8") as handle:
        return {row["name"]: row for row in json.load(handle)["rows"]}


def accumulator_rows(mma, arch):
    """Per accumulator element of the mma shape `mma` on `arch`, the rows of its M x N fragment that
    the element holds, one per lane group (lane / M): tables/mma_layouts.json's row formula for the
    layout kind, the shape's name on an mfma processor, else the processor's matrix-core kind
    (tables/archs.json)."""
    shape, kind = table_rows("mma_shapes")[mma], table_rows("archs")[arch.name]["mma"]
    layout = table_rows("mma_layouts")[mma if kind == "mfma" else kind]
    run, stride, step, factor = (layout[key] for key in ("row_run", "row_run_stride", "row_step", "row_factor"))
    return [[e // run * stride + e % run * step + factor * group for group in range(arch.wave_size // shape["m"])]
            for e in range(shape["m"] * shape["n"] // arch.wave_size)]


def slot_ends(tile, mma, arch):
    """Where in a tile of `tile` rows (or keys) a run-time length can end so that every accumulator
    slot meets it: per fragment of M rows and per element, the first of the element's rows past the
    tile's start. A slot's guard `row < end` made `row <= end` changes a result only where end is
    one of that slot's rows, so a case per place here meets every slot's guard once."""
    m = table_rows("mma_shapes")[mma]["m"]
    rows = accumulator_rows(mma, arch)
    return sorted({min(start + row for row in element if start + row > 0)
                   for start in range(0, tile, m) for element in rows})


# ---- finding a family's plan -------------------------------------------------------------
REFERENCES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "references")
FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")


def family_plan(family):
    """`plan` of references/<family>.py, or None when the family has none (no such module, or a
    shared module without `plan`)."""
    if not FAMILY_NAME.fullmatch(family) or not os.path.isfile(os.path.join(REFERENCES, family + ".py")):
        return None
    return getattr(importlib.import_module(f"references.{family}"), "plan", None)


def planned_families():
    """The families with a plan, by name."""
    names = (entry[:-3] for entry in os.listdir(REFERENCES) if entry.endswith(".py"))
    return sorted(name for name in names if family_plan(name))


def input_sets(family, spec):
    """The named input sets a config runs with: "random", then those its family names for the spec
    (`input_sets(spec)` of references/<family>.py; none when it defines no such function)."""
    named = getattr(importlib.import_module(f"references.{family}"), "input_sets", None)
    return ("random",) + (tuple(named(spec)) if named else ())


def make_case(family, spec, arch, config_id, inputs="random"):
    """The case of one config (spec already parsed with its defaults) with one named input set, or
    a list of cases where the set is several launches of their own sizes (tile_ends); KeyError for
    a family without a plan."""
    plan = family_plan(family)
    if plan is None:
        raise KeyError(family)
    seed = [SEED, config_id] if inputs == "random" else [SEED, config_id, list(INPUT_SETS).index(inputs)]
    return plan(spec, arch, Inputs(np.random.default_rng(seed), inputs))


def bits(memory):
    """The element bit patterns of an output's memory (f32, f16 or bf16 words, i32 or i8)."""
    memory = np.ascontiguousarray(memory).reshape(-1)
    return memory.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[memory.dtype.itemsize])


def compare(output, got_memory):
    """None when every element is within tolerance (an exact output: every bit the reference's),
    else a dict: max abs and rel error, first bad index."""
    got = from_memory(got_memory, output.dtype).reshape(-1).astype(np.float64)
    want = np.asarray(output.want, dtype=np.float64).reshape(-1)
    scale = 0.0 if output.scale is None else np.asarray(output.scale, dtype=np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):  # an infinite want (specials, a max scan's -inf) times a zero rtol
        tolerance = output.rtol * np.abs(want) + ACCUMULATION * scale + output.atol
        error = np.abs(got - want)
        if output.exact:
            bad = bits(got_memory) != bits(to_memory(output.want, output.dtype))
        else:
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

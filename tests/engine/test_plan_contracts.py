"""The launch contracts at real size (docs/contracts.md, "What a contract states"): the plan of
every family evaluated at a tensor of 2^35 bytes along its batch-like axis (elements, rows, m
tiles, heads), and every non-chunkable axis at the top of its range. Chunks cover the axis once,
in order; every view lies inside its buffer, under the arch's buffer range and aligned; every
scalar fits an i32; every grid is within the arch's limits. transpose_lds runs blocks (chunks of
rows with nested chunks of columns) at 2^35 bytes along either axis. A GEMM's n, whose buffers the
kernel offsets by i64s, stops where the i32 scalar and the grid stop. The plans of both engines are
byte for byte the same (check_byte_identity), so the Python engine's stand for both.
"""
import json
import os

import pytest

from kemit import plan as plan_module
from kemit.engine import emit
from kemit.ir.types import scalar
from kemit.target.arch import find_arch
from repo_paths import REPO

REAL_BYTES = 1 << 35
I32_MAX = (1 << 31) - 1
ALIGN = 16  # every kernel's buffer params promise 16-byte alignment at most
BATCH = {"elementwise": "n", "reduce_rows": "rows", "softmax_rows": "rows", "norm_rows": "rows",
         "scan_rows": "rows", "gemm_mma": "m_tiles", "gemm_epilogue": "m_tiles", "attention_fwd": "heads",
         "topk_softmax": "tokens", "grouped_gemm": "total_m", "rmsnorm_quant": "rows", "conv_implicit_gemm": "batch",
         "gemm_int8": "m_tiles"}
# Sizes whose top passes any device (a GEMM's n: b and c take i64 row offsets, so only the i32
# scalar and the grid stop it), held where one unit of the batch is HELD_UNIT bytes at most, so
# that 2^35 bytes along the batch are many units (several chunks) rather than none.
HELD = {"gemm_mma": "n_tiles", "gemm_epilogue": "n_tiles", "grouped_gemm": "n_tiles", "gemm_int8": "n_tiles"}
HELD_UNIT = 1 << 23


def configs(family):
    with open(os.path.join(REPO, "parity", "configs", family + ".json"), encoding="utf-8") as handle:
        return [c for c in json.load(handle)["configs"] if c.get("expect") == "emit"]


def first_plans(family, count=4):
    """The engine's plans (Planned) of the family's first emitting configs."""
    chosen = []
    for config in configs(family)[:count]:  # count None: every one
        module = __import__(f"kemit.families.{family}", fromlist=["plan_module"])
        arch = find_arch(config["arch"])
        planned = module.plan_module(module.parse_spec(config["spec"]), arch, arch.buffer_range)
        assert not planned.refusal, planned.refusal
        chosen.append((config, arch, planned))
    return chosen


def real_sizes(planned, batch, held=None):
    """Every size at the top of its range (held: where one unit of the batch is at most HELD_UNIT
    bytes), and the batch at 2^35 bytes of its widest buffer."""
    sizes = {s.name: s.hi for s in planned.sizes}
    if batch is None:
        return sizes
    at = lambda b, count: plan_module.evaluate(b.bytes, dict(sizes, **{batch: count}))  # noqa: E731
    unit_of = lambda: max(at(b, 2) - at(b, 1) for b in planned.buffers)  # noqa: E731
    if held is not None:
        low, high = 1, sizes[held]
        while low < high:  # the largest held value whose unit stays within HELD_UNIT
            sizes[held] = (low + high + 1) // 2
            low, high = (sizes[held], high) if unit_of() <= HELD_UNIT else (low, sizes[held] - 1)
        sizes[held] = low
    unit = unit_of()  # the widest buffer's bytes per unit of the batch
    sizes[batch] = REAL_BYTES // unit
    assert sizes[batch] <= next(s.hi for s in planned.sizes if s.name == batch), "the range stops short of 2^35 bytes"
    return sizes


def launch_runs(launch, sizes):
    """Every run of a launch: per chunk (and per nested chunk inside it) its first and count."""
    runs = [dict(sizes)]
    for chunks, first_name, count_name in ((launch.chunks, "first", "count"), (launch.inner, "first2", "count2")):
        if chunks is None:
            continue
        length = plan_module.evaluate(chunks.by, sizes)
        assert length >= 1
        runs = [dict(values, **{first_name: first, count_name: min(length, sizes[chunks.size] - first)})
                for values in runs for first in range(0, sizes[chunks.size], length)]
    return runs


def walk(ops):
    for op in ops:
        yield op
        for region in op.regions:
            yield from walk(region.ops)


def wide_params(planned):
    """The params every ptr_add of the kernels offsets by an i64 (docs/ir.md): their views may pass
    the 32-bit range (a GEMM's b and c); every other param's view stays under it."""
    wide, narrow = set(), set()
    for kernel in planned.kernels:
        names = {param.value.id: param.name for param in kernel.params}
        for op in walk(kernel.body.ops):
            if op.name == "ptr_add" and op.operands[0].id in names:
                (wide if op.operands[1].type == scalar("i64") else narrow).add(names[op.operands[0].id])
    return wide - narrow


def check_run(launch, values, buffers, arch, wide=frozenset()):
    for dim in launch.grid:
        low = plan_module.evaluate(dim.lo, values)
        high = low if dim.hi is None else plan_module.evaluate(dim.hi, values)
        assert 1 <= low <= high and high * launch.block <= arch.max_grid_lanes, (launch.kernel, low, high)
    assert launch.block <= arch.max_block_lanes and launch.lds <= arch.lds_bytes
    for binding in launch.bindings:
        if binding.kind == "scalar":
            assert 0 <= plan_module.evaluate(binding.value, values) <= I32_MAX, (binding.param, values)
            continue
        whole = buffers[binding.name]
        offset = 0 if binding.offset is None else plan_module.evaluate(binding.offset, values)
        size = whole if binding.size is None else plan_module.evaluate(binding.size, values)
        assert 0 <= offset and offset + size <= whole, (binding.param, offset, size, whole)
        under_range = size < arch.buffer_range or binding.param in wide
        assert under_range and offset % ALIGN == 0, (binding.param, offset, size)


@pytest.mark.parametrize("family", sorted(set(BATCH) | {"conv_depthwise_tiled",
                                                        "conv_depthwise_dgrad_stream", "conv_depthwise_wgrad",
                                                        "conv_fwd_lds_halo", "moe_sorting",
                                                        "paged_attention_decode"}))
def test_every_launch_of_a_real_size_plan_stays_in_range(family):
    for config, arch, planned in first_plans(family):
        sizes = real_sizes(planned, BATCH.get(family), HELD.get(family))
        buffers = {b.name: plan_module.evaluate(b.bytes, sizes) for b in planned.buffers}
        for launch in planned.launches:
            runs = launch_runs(launch, sizes)
            if launch.chunks is not None:  # the chunks cover the axis exactly once, in order
                covered = [(run["first"], run["first"] + run["count"]) for run in runs]
                assert covered[0][0] == 0 and covered[-1][1] == sizes[launch.chunks.size]
                assert all(end == start for (_, end), (start, _) in zip(covered, covered[1:]))
                assert BATCH.get(family) is None or len(runs) >= 2 or family == "attention_fwd"
            for values in runs:
                check_run(launch, values, buffers, arch, wide_params(planned))


@pytest.mark.parametrize("family", sorted(BATCH))
def test_every_config_grid_fits_the_dispatch_at_its_largest_chunk(family):
    """Small units make the largest chunks: a row of 16 bytes gives 2^26 rows a launch, and a
    workgroup per row of 256 lanes would pass the dispatch's 32-bit grid. Every emitting config's
    grid, at the top of the caller's range for a full chunk, stays within max_grid_lanes."""
    for config, arch, planned in first_plans(family, count=None):
        sizes = {s.name: s.hi for s in planned.sizes}
        for launch in planned.launches:
            values = dict(sizes)
            if launch.chunks is not None:
                values.update(first=0, count=plan_module.evaluate(launch.chunks.by, sizes))
            for dim in launch.grid:
                high = plan_module.evaluate(dim.lo if dim.hi is None else dim.hi, values)
                assert high * launch.block <= arch.max_grid_lanes, (config["id"], launch.kernel, high, launch.block)


@pytest.mark.parametrize("family", sorted(BATCH))
def test_a_chunked_size_reaches_2_to_the_35_bytes(family):
    _, _, planned = first_plans(family, 1)[0]
    sizes = real_sizes(planned, BATCH[family], HELD.get(family))
    assert max(plan_module.evaluate(b.bytes, sizes) for b in planned.buffers) > REAL_BYTES // 2


def test_attention_serves_2_to_the_35_bytes_of_short_heads_in_several_chunks():
    config, arch, planned = first_plans("attention_fwd", 1)[0]
    sizes = {"q_tiles": 1, "seq_k": 1}
    per_head = max(plan_module.evaluate(b.bytes, dict(sizes, heads=1)) for b in planned.buffers)
    sizes["heads"] = REAL_BYTES // per_head
    buffers = {b.name: plan_module.evaluate(b.bytes, sizes) for b in planned.buffers}
    (launch,) = planned.launches
    runs = launch_runs(launch, sizes)
    assert len(runs) >= 16
    for values in runs:
        check_run(launch, values, buffers, arch)


@pytest.mark.parametrize("family, spec, reason", [
    ("attention_fwd", {"head_dim": 128}, "one query tile (8192 bytes) does not fit half the 2^13-byte range"),
    ("gemm_mma", {}, "one row of tiles (2097152 bytes) does not fit half the 2^20-byte range"),
    ("transpose_lds", {}, "one block of 32 x 1 elements (128 bytes) does not fit half the 2^7-byte range"),
    ("elementwise", {"dtype": "f32"}, "one element (4 bytes) does not fit half the 6-byte range"),
])
def test_an_axis_past_its_limit_is_refused_with_a_reason(family, spec, reason):
    """A range so low that the compiled-in part (one query tile, one row of tiles) passes it."""
    ranges = {"attention_fwd": 8192, "gemm_mma": 1 << 20, "transpose_lds": 1 << 7, "elementwise": 6}
    result = emit(family, "gfx942", spec, [], ranges[family])
    assert result.rejected and reason in result.reason, result.reason


def test_a_size_past_its_range_is_outside_the_contract():
    """The non-chunkable axes state their limit: the top of attention's seq_k and gemm's k is the
    most one head's keys (one b) may hold under half the buffer range."""
    _, arch, planned = first_plans("attention_fwd", 1)[0]
    seq_k = next(s for s in planned.sizes if s.name == "seq_k")
    k_bytes = next(b for b in planned.buffers if b.name == "k")
    assert plan_module.evaluate(k_bytes.bytes, {"heads": 1, "seq_k": seq_k.hi}) <= arch.buffer_range // 2
    assert plan_module.evaluate(k_bytes.bytes, {"heads": 1, "seq_k": seq_k.hi + 1}) > arch.buffer_range // 2


def transpose_sizes(planned, element, along):
    """rows and col_vectors of a 2^35-byte matrix: the other axis at the top of its range ("rows":
    few columns, so rows reach 2^35 bytes; "cols" alike), or both alike ("square")."""
    tops = {s.name: s.hi for s in planned.sizes}
    vec = plan_module.evaluate(planned.buffers[0].bytes, {"rows": 1, "col_vectors": 1}) // element
    elements = REAL_BYTES // element
    if along == "rows":
        return {"col_vectors": tops["col_vectors"], "rows": elements // (tops["col_vectors"] * vec)}
    if along == "cols":
        return {"rows": tops["rows"], "col_vectors": elements // tops["rows"] // vec}
    return {"rows": 1 << 16, "col_vectors": elements // (1 << 16) // vec}


@pytest.mark.parametrize("along", ["rows", "cols", "square"])
def test_transpose_serves_2_to_the_35_bytes_in_blocks_along_either_axis(along):
    """A matrix of 2^35 bytes runs as blocks: chunks of rows, each with nested chunks of columns,
    that cover the matrix exactly once in order; every block's views lie inside a and b, under the
    range and aligned, its scalars fit an i32 and its grid the arch's limits."""
    for config, arch, planned in first_plans("transpose_lds"):
        element = {"f32": 4, "f16": 2, "bf16": 2}[config["spec"].get("dtype", "f32")]
        sizes = transpose_sizes(planned, element, along)
        buffers = {b.name: plan_module.evaluate(b.bytes, sizes) for b in planned.buffers}
        assert buffers["a"] > REAL_BYTES // 2, (config["id"], sizes)
        (launch,) = planned.launches
        runs = launch_runs(launch, sizes)
        row_chunks = sorted({(run["first"], run["count"]) for run in runs})
        assert len(row_chunks) >= 2 and len(runs) >= 2 * len(row_chunks), (config["id"], len(row_chunks), len(runs))
        assert [first for first, _ in row_chunks] == [0] + [first + count for first, count in row_chunks[:-1]]
        assert row_chunks[-1][0] + row_chunks[-1][1] == sizes["rows"]
        for first, _ in row_chunks:
            columns = [(run["first2"], run["count2"]) for run in runs if run["first"] == first]
            assert [f for f, _ in columns] == [0] + [f + c for f, c in columns[:-1]]
            assert columns[-1][0] + columns[-1][1] == sizes["col_vectors"]
        for values in runs:
            check_run(launch, values, buffers, arch)


def test_transposes_rows_and_columns_stop_where_no_block_of_the_other_axis_fits():
    """Each axis stops where a chunk of the other, one step of whole tiles and 16 bytes, still keeps
    its view within half the range: at the top of rows the column chunk is positive, one row more
    and it is 0 (no block fits); columns alike. The largest blocks every emitting config allows
    (one axis at its top, the other at its top or at 1) stay in range, their grids in the dispatch's."""
    for config, arch, planned in first_plans("transpose_lds", None):
        (launch,) = planned.launches
        tops = {s.name: s.hi for s in planned.sizes}
        for size, chunks in (("rows", launch.inner), ("col_vectors", launch.chunks)):
            assert plan_module.evaluate(chunks.by, tops) >= 1, (config["id"], size)
            assert plan_module.evaluate(chunks.by, dict(tops, **{size: tops[size] + 1})) == 0, (config["id"], size)
        for sizes in (tops, dict(tops, rows=1), dict(tops, col_vectors=1)):
            buffers = {b.name: plan_module.evaluate(b.bytes, sizes) for b in planned.buffers}
            values = dict(sizes, first=0, first2=0,
                          count=min(plan_module.evaluate(launch.chunks.by, sizes), sizes["rows"]),
                          count2=min(plan_module.evaluate(launch.inner.by, sizes), sizes["col_vectors"]))
            check_run(launch, values, buffers, arch)


@pytest.mark.parametrize("family", ["gemm_mma", "gemm_epilogue"])
def test_a_gemm_serves_2_to_the_35_bytes_of_b_and_of_c_along_n(family):
    """b (bound whole) and c (views of whole rows of n) take i64 row offsets, so n is not held to
    half the 32-bit range: at 2^35 bytes of b (k at its top) and of c (k at its smallest), every
    launch stays in range, the views of b and c past the range being those offset by i64s. c spans
    two rows of tiles (one would need a grid past the dispatch's 32 bits for some configs)."""
    for config, arch, planned in first_plans(family, len(configs(family))):
        wide = wide_params(planned)
        assert {"c", "b" if "b" in wide else "b_t"} <= wide, (config["id"], wide)
        top = {s.name: s.hi for s in planned.sizes}
        for tensor, k_tiles, m_tiles in (("b_t" if "b_t" in wide else "b", top["k_tiles"], 1), ("c", 1, 2)):
            sizes = dict(top, m_tiles=m_tiles, k_tiles=k_tiles, n_tiles=1)
            unit = next(plan_module.evaluate(b.bytes, sizes) for b in planned.buffers if b.name == tensor)
            sizes["n_tiles"] = -(-REAL_BYTES // unit)
            assert sizes["n_tiles"] <= top["n_tiles"], (config["id"], tensor, sizes)
            buffers = {b.name: plan_module.evaluate(b.bytes, sizes) for b in planned.buffers}
            assert buffers[tensor] >= REAL_BYTES
            for launch in planned.launches:
                for values in launch_runs(launch, sizes):
                    check_run(launch, values, buffers, arch, wide)


@pytest.mark.parametrize("family", ["gemm_mma", "gemm_epilogue"])
def test_a_gemm_n_stops_at_the_i32_scalar_or_the_grid_and_k_at_its_limit(family):
    """n's top is the first of: 2^30 elements (half the i32 scalar's range) and the grid's
    max_grid_lanes over the block; one tile past it breaks the one it reached. k keeps its stated
    limit (16384), past which the size is outside the contract."""
    for config, arch, planned in first_plans(family, len(configs(family))):
        top = {s.name: s.hi for s in planned.sizes}
        (launch,) = planned.launches
        tile_n = plan_module.evaluate(next(b.value for b in launch.bindings if b.param == "n"), {"n_tiles": 1})
        past = top["n_tiles"] + 1
        assert top["n_tiles"] * tile_n <= 1 << 30 and top["n_tiles"] * launch.block <= arch.max_grid_lanes
        assert past * tile_n > 1 << 30 or past * launch.block > arch.max_grid_lanes, (config["id"], top)
        tile_k = plan_module.evaluate(next(b.value for b in launch.bindings if b.param == "k"), {"k_tiles": 1})
        assert top["k_tiles"] * tile_k == 16384, (config["id"], top)

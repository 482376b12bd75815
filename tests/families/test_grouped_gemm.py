"""grouped_gemm: the kernel against its reference in the interpreter (groups of every size the walk
meets, all rows in one group), its memory safety whatever the offsets hold (garbage offsets run
without an out-of-bounds access or a broken promise), the contract it states, and its configs:
the emitting count, the processors, and every check of the validator pinned by a refusal config."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit import plan as plan_module
from kemit.families import gemm_core as core
from kemit.families import grouped_gemm as family
from kemit.ir.printer import print_kernel
from kemit.target.arch import find_arch
from plans import round_to, to_memory
from references.grouped_gemm import grouped_gemm, group_sizes

CONFIGS = os.path.join(REPO, "parity", "configs", "grouped_gemm.json")
SPEC = {"mma": "mfma_16x16x16", "dtype": "f16", "tile_m": 32, "tile_n": 16, "tile_k": 16, "waves": 2}


def configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


def run(kemit_cpp, spec, arch, offsets, total_m, seed=3):
    """The kernel in the interpreter over the plan's grid for these offsets; returns (a, b, c)."""
    parsed = family.parse_spec(spec)
    text = print_kernel(family.build(parsed, find_arch(arch)))
    groups, n, k = len(offsets) - 1, 2 * parsed["tile_n"], 2 * parsed["tile_k"]
    rng = np.random.default_rng(seed)
    a = round_to(rng.uniform(-2, 2, (total_m, k)), parsed["dtype"])
    b = round_to(rng.uniform(-2, 2, (groups, k, n)), parsed["dtype"])
    c = np.full((total_m, n), np.nan, dtype=np.float32)
    buffers = {"a": to_memory(a, parsed["dtype"]), "b": to_memory(b, parsed["dtype"]),
               "offsets": np.asarray(offsets, dtype=np.int32), "c": c}
    grid = (n // parsed["tile_n"], total_m // parsed["tile_m"] + groups)
    block = parsed["waves"] * find_arch(arch).wave_size
    kemit_cpp.run(text, grid, block, buffers, {"n": n, "k": k, "groups": groups, "total_m": total_m})
    return a, b, c


@pytest.mark.parametrize("inputs", ["random", "one_group"])
def test_the_kernel_computes_each_groups_rows_times_its_matrix(kemit_cpp, inputs):
    sizes = group_sizes(SPEC["tile_m"], inputs)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    a, b, c = run(kemit_cpp, SPEC, "gfx942", offsets, int(offsets[-1]))
    assert np.allclose(c, grouped_gemm(a, b, offsets), rtol=1e-5, atol=1e-4)


def test_the_plans_groups_cover_empty_one_row_partial_and_several_tiles():
    for tile_m in (16, 32, 48, 256):
        sizes = group_sizes(tile_m, "random")
        assert 0 in sizes and 1 in sizes and tile_m in sizes
        assert any(0 < s % tile_m and s < tile_m for s in sizes if s > 1)
        assert any(s > 2 * tile_m and s % tile_m for s in sizes)
        assert group_sizes(tile_m, "one_group")[-1] == sum(sizes) and sum(group_sizes(tile_m, "one_group")[:-1]) == 0


@pytest.mark.parametrize("offsets", [[5, -3, 1 << 30, 2, 7], [0, 200, 100, 64, 64], [-(1 << 31), 2 ** 31 - 1, 0, 9, 64],
                                     [64, 64, 64, 64, 0]])
def test_offsets_outside_the_input_contract_stay_inside_every_buffer(kemit_cpp, offsets):
    """The kernel clamps what it reads: a decreasing, negative or huge offset gives wrong rows, never an
    access past a buffer or a broken nsw/nuw promise (the interpreter raises on either)."""
    _, _, c = run(kemit_cpp, SPEC, "gfx942", offsets, 64)
    assert c.shape == (64, 32)


def test_a_surplus_workgroup_stores_nothing(kemit_cpp):
    """Every row in group 0: the grid's G - 1 surplus workgroups past its tiles exit; c's rows are the
    one group's product, and a NaN would show a row nobody wrote."""
    offsets = [0, 40, 40, 40]
    a, b, c = run(kemit_cpp, SPEC, "gfx942", offsets, 40)
    assert not np.isnan(c).any() and np.allclose(c, grouped_gemm(a, b, np.asarray(offsets)), rtol=1e-5, atol=1e-4)


def test_the_contract_states_every_buffer_whole_and_the_grid_over_the_tiles():
    arch = find_arch("gfx942")
    spec = family.parse_spec(SPEC)
    planned = family.plan_module(spec, arch, arch.buffer_range)
    text = plan_module.print_plan(planned)
    most = min(1 << 30, (arch.max_grid_lanes // 128 - 1024) * 32)  # the grid's y at the top of groups
    assert f"size total_m 0..{most}\nsize groups 1..1024\n" in text
    assert "buffer offsets (groups+1)*4\n" in text and "buffer b groups*k_tiles*16*n_tiles*16*2\n" in text
    assert "grid n_tiles,total_m/32+groups,1 " in text and "chunks" not in text
    launch, = planned.launches
    assert [b.kind for b in launch.bindings] == ["buffer"] * 4 + ["scalar"] * 4
    assert family.most_rows(family.parse_spec({"tile_m": 256, "waves": 1}), arch) == family.MAX_TOTAL_M


def test_every_loaded_offset_is_clamped_before_an_address_is_made():
    """No op that follows a loaded offset carries a wrap promise before its select clamps it: the
    walk's arithmetic is flagless, and the tile's rows start from the selects."""
    kernel = family.build(family.parse_spec(SPEC), find_arch("gfx942"))
    text = print_kernel(kernel)
    walk = text[text.index("= for"):text.index("if ")]
    flagged = [line for line in walk.splitlines() if ("sub " in line or "udiv" in line or " mul " in line)]
    assert flagged and all("nsw" not in line and "nuw" not in line for line in flagged)
    assert text.count("select") == 5


def test_the_configs_cover_every_processor_and_pin_every_check():
    entries = configs()
    emitting = [c for c in entries if c["expect"] == "emit"]
    assert len(emitting) >= 60
    assert len([c for c in emitting if c["arch"] in ("gfx90a", "gfx1100")]) >= 10
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    failing = set()
    for entry in entries:
        if entry["expect"] != "reject":
            continue
        try:
            spec = family.parse_spec(entry["spec"])
        except ValueError:
            failing.add("spec")
            continue
        checks = core.core_checks(spec, find_arch(entry["arch"]), with_fp8=True)
        failing.add(next(index for index, check in enumerate(checks) if check()))
    assert failing == set(range(len(core.core_checks(family.parse_spec({}), find_arch("gfx90a"), True)))) | {"spec"}

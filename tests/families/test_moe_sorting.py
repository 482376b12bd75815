"""moe_sorting: the reference groups the slots by expert, stably, and drops ids outside the experts;
the validator's reason texts in order; the module is four kernels launched in order, with a global
atomic of agent scope in the count kernel only; the interpreter runs the four launches to the
reference's exact integers under every schedule, with all tokens on one expert and with empty
experts; the configs' coverage."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import moe_sorting as family
from kemit.target.arch import find_arch
from references.moe_sorting import sort_slots
from row_configs import load_emitting_checked, missing_reasons, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "moe_sorting.json")
FLAVORS = ["llvm16", "llvm19", "llvm22"]
GFX90A, GFX1100 = find_arch("gfx90a"), find_arch("gfx1100")


# ---- the reference -----------------------------------------------------------------------------
def test_the_reference_groups_slots_by_expert_in_slot_order_and_drops_unknown_ids():
    ids = np.array([[2, 0], [2, 5], [-1, 2], [0, 1]])  # 3 experts: 5 and -1 are dropped
    counts, offsets, order = sort_slots(ids, 3)
    assert list(counts) == [2, 1, 3]
    assert list(offsets) == [0, 2, 3, 6]
    assert list(order) == [1, 6, 7, 0, 2, 5]


# ---- validation --------------------------------------------------------------------------------
REFUSALS = [
    ({"experts": 0}, "experts must be between 1 and 1024 (got 0)"),
    ({"experts": 2, "topk": 3}, "topk must be between 1 and 16 and at most experts 2 (got 3)"),
    ({"experts": 64, "topk": 17}, "topk must be between 1 and 16 and at most experts 64 (got 17)"),
    ({"block": 96}, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 2048}, "block must be at most 1024 (got 2048)"),
    ({"experts": 0, "block": 96}, "experts must be between 1 and 1024 (got 0)"),  # the first rule decides
]


@pytest.mark.parametrize("raw,reason", REFUSALS)
def test_each_rule_refuses_with_its_text(raw, reason):
    assert family.validate(family.parse_spec(raw), GFX90A) == reason


def test_the_defaults_are_valid_on_every_wave_size():
    for arch in (GFX90A, GFX1100):
        assert family.validate(family.parse_spec({}), arch) == ""


# ---- the module and its plan -------------------------------------------------------------------
def test_four_kernels_in_launch_order_and_one_agent_scope_atomic_in_the_count():
    result = emit("moe_sorting", "gfx90a", {"experts": 8, "topk": 2, "block": 64}, FLAVORS)
    assert not result.rejected
    kernels = [line.split()[1][1:] for line in result.canonical.split("\n") if line.startswith("kernel @")]
    assert kernels == [f"moe_sort_e8_k2_b64_{role}" for role in ("clear", "count", "scan", "scatter")]
    atomics = [line.strip() for line in result.canonical.split("\n") if "atomic_add" in line]
    assert len(atomics) == 1 and atomics[0].endswith("{align=4, order=monotonic, scope=agent} : i32")
    plan = result.plan.split("\n")
    assert plan[1] == "size tokens 0..134217728"
    launches = [line.split()[1] for line in plan if line.startswith("launch ")]
    assert launches == kernels
    assert any("_count grid max(1,ceil(tokens*2,64)),1,1 " in line for line in plan)


def test_the_tokens_range_keeps_the_slots_within_half_the_buffer_range_and_the_grid():
    spec = family.parse_spec({"experts": 8, "topk": 4, "block": 256})
    assert family.tokens_top(spec, GFX90A, 1 << 31) == min((1 << 28), GFX90A.max_grid_lanes - 256) // 4
    assert family.tokens_top(spec, GFX90A, 1 << 12) == 128


# ---- the four launches in the interpreter ------------------------------------------------------
def launches(result):
    """(kernel, grid, bindings) of each launch line of the plan, for tokens of the test."""
    out = []
    for line in result.plan.split("\n"):
        if line.startswith("launch "):
            words = line.split()
            out.append((words[1], words[3], words[words.index("args") + 1:]))
    return out


@pytest.mark.parametrize("schedule", ["in-order", "reverse", "random:3"])
@pytest.mark.parametrize("arch,block,ids_of", [
    ("gfx90a", 64, lambda rng, e, shape: rng.integers(0, e, size=shape)),
    ("gfx1100", 32, lambda rng, e, shape: np.full(shape, e - 1)),            # every token to the last expert
    ("gfx90a", 128, lambda rng, e, shape: 2 * rng.integers(0, e // 2, size=shape)),  # odd experts empty
])
def test_the_four_launches_give_the_references_integers_under_every_schedule(kemit_cpp, schedule, arch, block, ids_of):
    experts, topk, tokens = 6, 3, 70
    result = emit("moe_sorting", arch, {"experts": experts, "topk": topk, "block": block}, [])
    rng = np.random.default_rng(11)
    ids = ids_of(rng, experts, (tokens, topk)).astype(np.int32)
    n = tokens * topk
    memory = {"ids": ids, "counts": np.full(experts, 77, dtype=np.int32), "offsets": np.zeros(experts + 1, dtype=np.int32),
              "sorted": np.full(n, -7, dtype=np.int32)}
    for kernel, grid, args in launches(result):
        buffers = {a.split("=")[0]: memory[a.split(":")[1]] for a in args if ":buffer:" in a.replace("=", ":")}
        scalars = {"n": n} if any(a.startswith("n=") for a in args) else {}
        groups = max(1, -(-n // block)) if "tokens" in grid else int(grid.split(",")[0])
        kemit_cpp.run(result.canonical, groups, block, buffers, scalars, kernel=kernel, schedule=schedule)
    counts, offsets, order = sort_slots(ids, experts)
    assert list(memory["counts"]) == list(counts)
    assert list(memory["offsets"]) == list(offsets)
    assert list(memory["sorted"]) == list(order) + [-7] * (n - len(order))


# ---- the configs -------------------------------------------------------------------------------
def test_the_configs_meet_the_floor_and_cover_the_code_paths():
    emitting = load_emitting_checked(CONFIGS)
    assert len(emitting) >= 60
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    specs = [family.parse_spec(c["spec"]) for c in emitting]
    assert {s["experts"] for s in specs} >= {1, 1024} and {s["topk"] for s in specs} >= {1, 16}
    assert any(s["experts"] > s["block"] for s in specs)  # the clear and scatter take more than one workgroup
    assert wrong_expectations("moe_sorting", emitting) == []


def test_the_refusal_configs_pin_every_reason():
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert missing_reasons("moe_sorting", configs, ["experts must be between", "topk must be between",
                                                    "block must be a positive multiple", "block must be at most",
                                                    "must be an integer", "unknown field"]) == []
    assert wrong_expectations("moe_sorting", [c for c in configs if c["expect"] == "reject"]) == []

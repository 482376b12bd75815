"""attention_bwd: the reference's gradients against finite differences of the forward, the
validator's reason texts in order, the module (three kernels in launch order, no matrix-core op, no
atomic) and its plan (chunks of heads, sizes under half the range), the three launches in the
interpreter against the reference under every schedule, the configs' coverage."""
import json
import math
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import attention_bwd as family
from kemit.target.arch import find_arch
from references.attention_bwd import forward, gradients, round_to, to_memory
from row_configs import load_emitting_checked, missing_reasons, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "attention_bwd.json")
# One prefix per refusal reason of validate() and of spec parsing.
REASONS = ("dtype must", "head_dim must", "block must be a positive multiple", "block must be at most",
           "bytes of LDS", "registers per lane live", "unknown field", "must be an integer", "must be a string", "must be a boolean",
           "must fit in 32 bits", "unknown arch")
GFX90A, GFX942, GFX950, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx950", "gfx1100"))


# ---- the reference ------------------------------------------------------------------------------
def loss(q, k, v, do, causal, scale):
    """sum(o * do) of the forward in f64, o unrounded: its gradients are the backward's."""
    s = (q @ np.swapaxes(k, 1, 2)) * scale
    if causal:
        s = np.where(np.arange(s.shape[2])[None, None, :] <= np.arange(s.shape[1])[None, :, None], s, -np.inf)
    p = np.exp(s - s.max(axis=2, keepdims=True))
    return float(((p / p.sum(axis=2, keepdims=True)) @ v * do).sum())


@pytest.mark.parametrize("causal", [False, True])
def test_the_reference_is_the_gradient_of_the_forward(causal):
    """Central differences of sum(o * do) in f64 against gradients() fed the f64 forward's o and lse."""
    rng = np.random.default_rng(5 + causal)
    q, do = rng.uniform(-1, 1, (2, 2, 5, 4))
    k, v = rng.uniform(-1, 1, (2, 2, 7, 4))
    scale = 0.5
    s = (q @ np.swapaxes(k, 1, 2)) * scale
    if causal:
        s = np.where(np.arange(7)[None, None, :] <= np.arange(5)[None, :, None], s, -np.inf)
    top = s.max(axis=2, keepdims=True)
    lse = (top + np.log(np.exp(s - top).sum(axis=2, keepdims=True)))[..., 0]
    o = np.exp(s - lse[..., None]) @ v
    got = gradients(q, k, v, o, do, lse, causal, scale)
    for which, (array, grad) in enumerate(zip((q, k, v), got)):
        numeric = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            step = np.zeros_like(array)
            step[index] = 1e-6
            args = [q, k, v]
            args[which] = array + step
            up = loss(*args, do, causal, scale)
            args[which] = array - step
            numeric[index] = (up - loss(*args, do, causal, scale)) / 2e-6
        assert np.allclose(grad, numeric, atol=1e-6), which


def test_the_forward_gives_o_in_the_dtype_and_lse_in_f32():
    q = np.ones((1, 3, 16), dtype=np.float32)
    v = np.arange(3 * 16, dtype=np.float32).reshape(1, 3, 16)
    o, lse = forward(q, q, v, True, 0.25, "bf16")
    assert lse.dtype == np.float32 and np.isclose(lse[0, 2], 4.0 + math.log(3))
    assert np.array_equal(o[0, 0], v[0, 0])


# ---- the validator ------------------------------------------------------------------------------
@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f32"}, GFX90A, "dtype must be one of f16, bf16 (got 'f32')"),
    ({"head_dim": 128}, GFX90A, "head_dim must be one of 16, 32, 64 (got 128)"),
    ({"block": 32}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 32)"),
    ({"block": 2048}, GFX1100, "block must be at most 1024 (got 2048)"),
    ({"block": 1024}, GFX942, "block 1024 and head_dim 64 need 135424 bytes of LDS, more than gfx942's 65536"),
    ({"head_dim": 64, "block": 32}, GFX1100, "head_dim 64 keeps 320 registers per lane live (dk's, dv's, q's and do's "
                                             "f32 rows, k's and v's rows), more than 256 on a wave32 lane of gfx1100"),
    ({"dtype": "f32", "block": 32}, GFX90A, "dtype must be one of f16, bf16 (got 'f32')"),  # the first rule decides
])
def test_each_rule_refuses_with_its_text(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_gfx950s_lds_takes_the_largest_block():
    assert family.validate(family.parse_spec({"block": 1024}), GFX950) == ""


def test_the_defaults_are_valid_on_wave64_and_head_dim_32_on_wave32():
    assert family.validate(family.parse_spec({}), GFX90A) == ""
    assert family.validate(family.parse_spec({"block": 32, "head_dim": 32}), GFX1100) == ""


# ---- the module and its plan -------------------------------------------------------------------
def test_three_kernels_in_launch_order_scalar_and_without_atomics():
    result = emit("attention_bwd", "gfx90a", {"causal": True}, ["llvm16"])
    assert not result.rejected
    kernels = [line.split()[1][1:] for line in result.canonical.split("\n") if line.startswith("kernel @")]
    assert kernels == ["attn_bwd_f16_d64_b64_causal_delta", "attn_bwd_f16_d64_b64_causal",
                       "attn_bwd_f16_d64_b64_causal_dq"]
    assert " mma " not in result.canonical and "atomic" not in result.canonical
    plan = result.plan.split("\n")
    assert [line.split()[1] for line in plan if line.startswith("launch ")] == kernels
    assert all(" chunks heads by 4194304/max(ceil(seq_k,64)*seq_q,seq_k) " in line
               for line in plan if line.startswith("launch "))
    assert "size seq_q 1..16384" in plan and "size seq_k 1..16384" in plan


@pytest.mark.parametrize("block, head_dim, buffer_range", [(64, 64, 1 << 31), (32, 16, 1 << 31), (128, 32, 1 << 20),
                                                           (256, 64, 123456)])
def test_seq_top_keeps_one_heads_dq_part_under_half_the_range(block, head_dim, buffer_range):
    spec = family.parse_spec({"block": block, "head_dim": head_dim})
    most_rows = buffer_range // 2 // (head_dim * 4)
    top = family.seq_top(spec, most_rows)
    assert top * -(-top // block) <= most_rows < (top + 1) * -(-(top + 1) // block)


def test_a_range_without_one_f32_row_is_refused():
    planned = family.plan_module(family.parse_spec({}), GFX90A, 256)
    assert planned.refusal == "one query row (256 bytes) does not fit half the 2^8-byte range of 32-bit buffer offsets"


# ---- the three launches in the interpreter -----------------------------------------------------
def launches(result):
    """(kernel, grid, argument words) of each launch line of the plan."""
    out = []
    for line in result.plan.split("\n"):
        if line.startswith("launch "):
            words = line.split()
            out.append((words[1], words[words.index("grid") + 1], words[words.index("args") + 1:]))
    return out


def run_launches(kemit_cpp, arch, spec, schedule, rewrite=lambda text: text):
    """The three launches of one head, unchunked, each over whole buffers and its grid from the sizes,
    on the canonical text (rewritten by `rewrite`); dq_part starts as NaN, so a part the reduce reads
    and the main kernel never wrote fails. Returns the names of dq, dk and dv that miss the reference."""
    parsed = family.parse_spec(spec)
    block, head_dim, dtype = parsed["block"], parsed["head_dim"], parsed["dtype"]
    seq_q, seq_k = block + 3, block + block // 2 + 1
    tiles = -(-seq_k // block)
    rng = np.random.default_rng(3)
    q, do = (round_to(rng.uniform(-2, 2, (1, seq_q, head_dim)), dtype) for _ in range(2))
    k, v = (round_to(rng.uniform(-2, 2, (1, seq_k, head_dim)), dtype) for _ in range(2))
    scale = float(np.float32(1 / math.sqrt(head_dim)))
    o, lse = forward(q, k, v, parsed["causal"], scale, dtype)
    memory = {"q": to_memory(q, dtype), "k": to_memory(k, dtype), "v": to_memory(v, dtype), "o": to_memory(o, dtype),
              "do": to_memory(do, dtype), "lse": lse.copy(), "delta": np.full(seq_q, np.nan, np.float32),
              "dq_part": np.full(tiles * seq_q * head_dim, np.nan, np.float32)}
    memory.update({n: np.full(shape, np.nan, np.float32) for n, shape in
                   (("dq", q.shape), ("dk", k.shape), ("dv", k.shape))})
    result = emit("attention_bwd", arch, spec, [])
    for kernel, grid, args in launches(result):
        buffers = {a.split("=")[0]: memory[a.split("=")[0]] for a in args if "=buffer:" in a}
        values = {"seq_q": seq_q, "seq_k": seq_k, "tiles": tiles, "part_rows": tiles * seq_q}
        scalars = {n: value for n, value in values.items() if any(a.startswith(n + "=") for a in args)}
        x = grid.split(",")[0]
        count = -(-seq_q // block) if x.startswith("ceil(seq_q,") else (
            -(-seq_q * head_dim // block) if x.startswith("ceil(seq_q*") else tiles)
        kemit_cpp.run(rewrite(result.canonical), count, block, buffers, scalars, kernel=kernel, schedule=schedule)
    wants = gradients(q, k, v, o, do, lse, parsed["causal"], scale)
    return [name for name, want in zip(("dq", "dk", "dv"), wants)
            if not np.allclose(memory[name], want, rtol=1e-4, atol=1e-4)]


@pytest.mark.parametrize("schedule", ["in-order", "reverse", "random:5"])
@pytest.mark.parametrize("arch, spec", [("gfx90a", {"head_dim": 16, "causal": True}),
                                        ("gfx1100", {"head_dim": 16, "block": 32, "dtype": "bf16"})])
def test_the_three_launches_give_the_references_gradients_under_every_schedule(kemit_cpp, schedule, arch, spec):
    assert run_launches(kemit_cpp, arch, spec, schedule) == []


def without_delta(text):
    """ds = p * dp: the main kernel's subtraction of delta_i takes the f32 zero defined before it."""
    lines = text.split("\n")
    main = next(i for i, line in enumerate(lines)
                if line.startswith("kernel @") and not line.endswith(("_delta {", "_dq {")))
    delta_param = next(line.split()[1] for line in lines[main:]
                       if line.strip().startswith("param ") and " delta " in line)
    address = next(line.split()[0] for line in lines[main:] if f"= ptr_add {delta_param}," in line)
    loaded = next(line.split()[0] for line in lines[main:] if f"= load {address} " in line)
    zero = next(line.split()[0] for line in lines[main:] if line.strip().endswith("const {value=0x00000000} : f32"))
    return "\n".join(line.replace(f", {loaded} : f32", f", {zero} : f32") if " fsub " in line else line
                      for line in lines)


def first_tile_skipped(text):
    """The reduce's tile loop starts at 1: the first key tile's part of dq is never added."""
    head, tail = text.split("_dq {", 1)
    loop = tail.index("= for ")
    start = tail[:loop].rindex("const {value=0} : i32")
    return head + "_dq {" + tail[:start] + "const {value=1} : i32" + tail[start + len("const {value=0} : i32"):]


@pytest.mark.parametrize("rewrite, broken", [(without_delta, ["dq", "dk"]), (first_tile_skipped, ["dq"])])
def test_a_dropped_delta_or_a_skipped_tile_misses_the_reference(kemit_cpp, rewrite, broken):
    """The mutations the numerics lane must catch (tests/mutate/test_attention_bwd_mutants.py judges
    them as a campaign does): each rewrite changes the text, and exactly the outputs it feeds fail."""
    text = emit("attention_bwd", "gfx90a", {"head_dim": 16, "causal": True}, []).canonical
    assert rewrite(text) != text
    assert run_launches(kemit_cpp, "gfx90a", {"head_dim": 16, "causal": True}, "in-order", rewrite) == broken


# ---- the configs -------------------------------------------------------------------------------
def test_the_configs_meet_the_floor_and_cover_the_code_paths():
    emitting = load_emitting_checked(CONFIGS)
    assert len(emitting) >= 60
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    specs = [family.parse_spec(c["spec"]) for c in emitting]
    assert {s["head_dim"] for s in specs} == set(family.HEAD_DIMS)
    assert {(s["dtype"], s["causal"]) for s in specs} == {(d, c) for d in family.DTYPES for c in (False, True)}
    # one wave to several sharing a key tile through LDS and barriers, wave32 and wave64
    assert {s["block"] for s in specs} >= {32, 64, 96, 128, 192, 256}
    assert wrong_expectations("attention_bwd", emitting) == []


def test_the_refusal_configs_pin_every_reason():
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert missing_reasons("attention_bwd", configs, list(REASONS)) == []
    assert wrong_expectations("attention_bwd", [c for c in configs if c["expect"] == "reject"]) == []

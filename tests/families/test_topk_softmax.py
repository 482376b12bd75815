"""topk_softmax: the reference's tie rule against a sort written out by hand, the kernel's argmax
tree replayed over the lanes against the reference (bpermute and DPP, wave 64 and 32, partial
slots), the validator's reason texts in order, kernel names, a kernel without LDS or barrier, and
the configs' coverage (every processor kind, dtype and cross-lane method, every refusal pinned)."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import topk_softmax as family
from kemit.target.arch import find_arch
from references.reduce_rows import wave_tree
from references.topk_softmax import ranked, topk_softmax
from row_configs import wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "topk_softmax.json")


# ---- the reference ------------------------------------------------------------------------------
def by_hand(row, k):
    """The tie rule spelled out: sort (-logit, index) pairs."""
    return [index for _, index in sorted((-float(v), i) for i, v in enumerate(row))][:k]


@pytest.mark.parametrize("row", [[1.0, 3.0, 3.0, -np.inf, 2.0], [0.0] * 6, [-np.inf, -np.inf, 5.0, -np.inf],
                                 [2.0, -1.0, 2.0, 2.0, -1.0, 7.0], [-3.5, -0.25, -0.25, -3.5]])
def test_reference_ranks_by_the_tie_rule(row):
    k = min(4, len(row))
    assert ranked(np.array([row]), k)[0].tolist() == by_hand(row, k)


def test_reference_weights_are_the_softmax_of_the_chosen_experts():
    x = np.array([[1.0, 3.0, 3.0, -np.inf, 2.0]], dtype=np.float32)
    weights, indices = topk_softmax(x, 3, False)
    e = np.exp(np.array([1.0, 3.0, 3.0, 0.0, 2.0]) - 3.0) * np.array([1, 1, 1, 0, 1])
    assert indices.tolist() == [[1, 2, 4]]
    assert np.allclose(weights[0], (e / e.sum())[[1, 2, 4]], rtol=2.0 ** -23)
    renormalized, _ = topk_softmax(x, 3, True)
    assert np.isclose(renormalized.sum(), 1.0, rtol=2.0 ** -22)


# ---- the kernel's argmax tree, replayed lane by lane ---------------------------------------------
def better(a, c):
    """The kernel's `better` over every lane at once: c where its key is larger, or equal with a
    lower index."""
    take = (c[0] > a[0]) | ((c[0] == a[0]) & (c[1] < a[1]))
    return np.where(take, c[0], a[0]), np.where(take, c[1], a[1])


def kernel_ranking(row, k, wave, cross):
    """The kernel's k rounds for one token: lane l holds experts l, l + W, ...; a slot past the
    row is the key -inf; a winner is removed as (-inf, NONE) in its lane."""
    experts = len(row)
    slots = -(-experts // wave)
    index = np.arange(slots * wave).reshape(slots, wave)
    keys = np.where(index < experts, np.concatenate([row, np.zeros(slots * wave - experts)])[index], -np.inf)
    chosen = []
    for _ in range(k):
        best = (keys[0], index[0])
        for slot in range(1, slots):
            best = better(best, (keys[slot], index[slot]))
        key, winner = wave_tree(best, cross, better)
        assert (winner == winner[0]).all() and (key == key[0]).all()  # every lane holds the winner
        chosen.append(int(winner[0]))
        won = index == winner[0]
        keys, index = np.where(won, -np.inf, keys), np.where(won, family.NONE, index)
    return chosen


@pytest.mark.parametrize("cross", ["bpermute", "dpp"])
@pytest.mark.parametrize("wave, experts, k", [(64, 64, 8), (64, 72, 5), (32, 256, 8), (32, 40, 3), (64, 8, 8),
                                              (32, 1, 1)])
def test_kernel_argmax_tree_ranks_by_the_tie_rule(cross, wave, experts, k):
    rng = np.random.default_rng(wave + experts + k)
    k = min(k, experts)
    for logits in (np.round(rng.uniform(-2, 2, experts) * 2) / 2, np.zeros(experts),
                   np.where(rng.uniform(size=experts) < 0.5, -np.inf, rng.integers(-1, 2, experts))):
        assert kernel_ranking(logits, k, wave, cross) == by_hand(logits, k)


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX942, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx1100"))


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f64"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"cross": "lds"}, GFX90A, "cross must be one of bpermute, dpp (got 'lds')"),
    ({"experts": 0, "k": 1}, GFX90A, "experts must be between 1 and 256 (got 0)"),
    ({"experts": 257}, GFX1100, "experts must be between 1 and 256 (got 257)"),
    ({"k": 0}, GFX90A, "k must be between 1 and 8 (got 0)"),
    ({"k": 9}, GFX942, "k must be between 1 and 8 (got 9)"),
    ({"experts": 3, "k": 4}, GFX90A, "k must be at most experts 3 (got 4)"),
    ({"block": 96}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 2048}, GFX1100, "block must be at most 1024 (got 2048)"),
    # checks run in order: the dtype before the block, k's range before k against experts
    ({"dtype": "f8", "block": 7}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f8')"),
    ({"experts": 4, "k": 12}, GFX90A, "k must be between 1 and 8 (got 12)"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_one_wave_and_one_expert_are_enough():
    assert family.validate(family.parse_spec({"block": 32, "experts": 1, "k": 1}), GFX1100) == ""
    assert family.validate(family.parse_spec({"block": 64, "experts": 8, "k": 8}), GFX90A) == ""


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "topk_f32_e64_k2_b256_bpermute"
    spec = family.parse_spec({"dtype": "bf16", "experts": 160, "k": 6, "renormalize": True, "cross": "dpp"})
    assert family.kernel_name(spec) == "topk_bf16_e160_k6_norm_b256_dpp"


def test_a_wave_owns_its_token_without_lds_or_barrier():
    text = emit("topk_softmax", "gfx90a", {"experts": 72, "k": 3}, []).canonical
    assert "lds " not in text and "barrier" not in text
    # experts 72 on wave 64: a second slot, masked past the row
    assert text.count("icmp %") >= 1 and "value=0xFF800000" in text


def test_dpp_kernel_uses_both_cross_lane_ops_and_writes_i32_indices():
    text = emit("topk_softmax", "gfx1100", {"cross": "dpp", "block": 64}, ["llvm16"]).ll[0].text
    assert "@llvm.amdgcn.update.dpp.i32(i32 %" in text and "@llvm.amdgcn.ds.bpermute(" in text
    assert "store i32 %" in text and "store float %" in text


# ---- the configs --------------------------------------------------------------------------------
def load_configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


def test_configs_meet_the_floor_and_cover_every_case():
    configs = load_configs()
    assert [c["id"] for c in configs] == list(range(1, len(configs) + 1))
    emitting = [c for c in configs if c["expect"] == "emit"]
    assert len(emitting) >= 60 and len([c for c in emitting if c["arch"] in ("gfx90a", "gfx1100")]) >= 10
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    assert {(c["spec"]["dtype"], c["spec"]["cross"], c["spec"]["renormalize"]) for c in emitting} == {
        (d, x, r) for d in family.DTYPES for x in ("bpermute", "dpp") for r in (False, True)}
    assert {c["spec"]["k"] for c in emitting} == set(range(1, family.MAX_K + 1))


def test_configs_hold_experts_below_at_and_past_the_wave_with_partial_slots():
    relations = set()
    for c in load_configs():
        if c["expect"] == "emit":
            wave, experts = find_arch(c["arch"]).wave_size, c["spec"]["experts"]
            relations.add((wave, "below" if experts < wave else "whole" if experts % wave == 0 else "partial"))
            relations.add((wave, "k = experts") if c["spec"]["k"] == experts else (wave, "k < experts"))
    assert relations == {(w, r) for w in (32, 64) for r in ("below", "whole", "partial", "k = experts", "k < experts")}


REASONS = ("dtype must", "cross must", "experts must", "k must be between", "k must be at most",
           "block must be a positive", "block must be at most", "unknown field", "must be an integer",
           "must be a string", "must be a boolean", "must fit in 32 bits", "unknown arch")


def test_every_refusal_reason_is_pinned_by_a_config():
    configs = load_configs()
    reasons = {emit("topk_softmax", c["arch"], c["spec"], []).reason for c in configs if c["expect"] == "reject"}
    assert [prefix for prefix in REASONS if not any(prefix in reason for reason in reasons)] == []
    assert wrong_expectations("topk_softmax", configs) == []

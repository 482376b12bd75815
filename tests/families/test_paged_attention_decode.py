"""paged_attention_decode: the reference against attention over contiguous keys, the plan's block
tables (a permutation, a shared prefix, garbage past each sequence), the two kernels in the
interpreter against the reference (a sequence of no keys included), their memory safety whatever
block_table and context_lens hold, the validator's reason texts in order, the launch plan, and the
configs' coverage (every processor, both wave sizes, MHA, GQA and MQA, every refusal pinned)."""
import json
import math
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import paged_attention_decode as family
from kemit.ir.printer import print_kernel
from kemit.target.arch import find_arch
from plans import Inputs, from_memory, nan_memory, round_to, to_memory
from references.attention_fwd import attention
from references.paged_attention_decode import block_tables, context_lengths, paged_decode
from row_configs import load_emitting_checked, missing_reasons, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "paged_attention_decode.json")
GFX90A, GFX942, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx1100"))
SMALL = {"head_dim": 64, "block_size": 16, "group": 2, "partition": 32, "waves": 2}


# ---- the reference ------------------------------------------------------------------------------
def test_the_reference_is_attention_over_the_gathered_keys():
    """Through a shuffled block table the reference is attention_fwd's over the same keys laid out
    contiguously (one query, no mask)."""
    rng = np.random.default_rng(5)
    block_size, head_dim, length = 16, 64, 37
    keys = round_to(rng.uniform(-2, 2, (length, head_dim)), "f16")
    values = round_to(rng.uniform(-2, 2, (length, head_dim)), "f16")
    query = round_to(rng.uniform(-2, 2, (1, 1, head_dim)), "f16")
    order = np.array([2, 0, 3])  # logical block i lives in physical block order[i]
    k_cache = np.zeros((4, block_size, 1, head_dim), dtype=np.float32)
    v_cache = np.zeros_like(k_cache)
    for t in range(length):
        k_cache[order[t // block_size], t % block_size, 0] = keys[t]
        v_cache[order[t // block_size], t % block_size, 0] = values[t]
    scale = 1.0 / math.sqrt(head_dim)
    got = paged_decode(query, k_cache, v_cache, order[None, :], np.array([length]), 1, scale, "f16")
    want = attention(query[0][None], keys[None], values[None], False, scale, "f16")
    assert np.array_equal(got[0, 0], want[0, 0])


def test_the_plans_block_tables_permute_share_a_prefix_and_hold_garbage_past_each_sequence():
    spec = family.parse_spec({"block_size": 16, "partition": 64})
    lengths = context_lengths(spec)
    assert lengths[0] == 1 and 0 < lengths[1] % 16 and lengths[2] == 64 and lengths[3] > 2 * 64
    max_blocks = -(-max(lengths) // 16) + 1
    tables, num_blocks = block_tables(Inputs(np.random.default_rng(1), "random"), lengths, 16, max_blocks)
    used = [tables[s, :-(-n // 16)] for s, n in enumerate(lengths)]
    assert all(((u >= 0) & (u < num_blocks)).all() for u in used)
    assert not all((u == np.arange(len(u))).all() for u in used)  # not the identity
    assert used[-1][0] == used[-2][0]  # the shared prefix
    assert all(((tables[s, len(u):] < 0) | (tables[s, len(u):] >= num_blocks)).all() for s, u in enumerate(used))


# ---- the kernels in the interpreter -----------------------------------------------------------
def bound(kernel, buffers):
    """The buffers a kernel's pointer params take (the same arrays: what one writes the next reads)."""
    return {p.name: buffers[p.name] for p in kernel.params if p.name in buffers}


def run(kemit_cpp, spec, arch, lengths, tables, num_blocks, kv_heads=2, seed=3):
    """Both kernels in the interpreter, the plan's grids; returns (o, the reference's o)."""
    parsed = family.parse_spec(spec)
    arch = find_arch(arch)
    group, head_dim, block_size, dtype = parsed["group"], parsed["head_dim"], parsed["block_size"], parsed["dtype"]
    seqs, heads, max_blocks = len(lengths), kv_heads * group, tables.shape[1]
    partitions = -(-max_blocks * block_size // parsed["partition"])
    rng = np.random.default_rng(seed)
    q = round_to(rng.uniform(-2, 2, (seqs, heads, head_dim)), dtype)
    k_cache, v_cache = (round_to(rng.uniform(-2, 2, (num_blocks, block_size, kv_heads, head_dim)), dtype)
                        for _ in range(2))
    slots = seqs * heads * partitions
    buffers = {"q": to_memory(q, dtype), "k_cache": to_memory(k_cache, dtype), "v_cache": to_memory(v_cache, dtype),
               "block_table": np.asarray(tables, dtype=np.int32), "context_lens": np.asarray(lengths, dtype=np.int32),
               "max_logits": nan_memory(slots, "f32"), "exp_sums": nan_memory(slots, "f32"),
               "partial_out": nan_memory(slots * head_dim, "f32"), "o": nan_memory(seqs * heads * head_dim, dtype)}
    sizes = {"seqs": seqs, "kv_heads": kv_heads, "max_blocks": max_blocks}
    first, reduce = family.build_module(parsed, arch)
    kemit_cpp.run(print_kernel(first), (-(-partitions // parsed["waves"]), kv_heads, seqs),
                  parsed["waves"] * arch.wave_size, bound(first, buffers),
                  dict(sizes, num_blocks=num_blocks, partitions=partitions))
    kemit_cpp.run(print_kernel(reduce), (group, kv_heads, seqs), arch.wave_size, bound(reduce, buffers),
                  {"seqs": seqs, "kv_heads": kv_heads, "partitions": partitions})
    scale = family.softmax_scale(parsed)
    # the kernels' reading of contents outside the contract: a length as unsigned, clamped to the
    # table's keys; a block number outside [0, num_blocks) as block 0
    lengths = np.asarray(lengths, dtype=np.int64)
    clamped = np.where((lengths < 0) | (lengths > max_blocks * block_size), max_blocks * block_size, lengths)
    blocks = np.where((tables >= 0) & (tables < num_blocks), tables, 0)
    want = paged_decode(q, k_cache, v_cache, blocks, clamped, group, scale, dtype)
    return from_memory(buffers["o"], dtype).reshape(seqs, heads, head_dim), want


@pytest.mark.parametrize("arch, kv_heads", [("gfx90a", 2), ("gfx1100", 2), ("gfx1100", 1)])  # kv_heads 1: MQA
def test_the_kernels_compute_the_reference_and_zero_for_a_sequence_of_no_keys(kemit_cpp, arch, kv_heads):
    lengths = [0, 1, 40, 64]
    tables = np.array([[5, 1, 2, 0, 7], [3, 4, 6, 6, 6], [6, 0, 4, 9, 9], [2, 7, 1, 3, 9]])
    got, want = run(kemit_cpp, SMALL, arch, lengths, tables, 9, kv_heads)
    assert np.array_equal(got[0], np.zeros_like(got[0]))
    assert np.allclose(got, want, rtol=2.0 ** -8, atol=2.0 ** -10)


@pytest.mark.parametrize("tables, lengths", [
    (np.array([[-1, 2 ** 31 - 1, 9, -7]]), [64]),          # every entry outside [0, num_blocks)
    (np.array([[0, 1, 2, 3]]), [-5]),                        # a negative length: clamped to the table
    (np.array([[3, 2, 1, 0]]), [2 ** 31 - 1]),               # a length far past the table
])
def test_contents_outside_the_input_contract_stay_inside_every_buffer(kemit_cpp, tables, lengths):
    """The interpreter raises on any access past a buffer or a broken promise: none happens; a
    block number outside [0, num_blocks) reads block 0, a length (read as unsigned) is clamped to
    the table's max_blocks * block_size keys."""
    got, want = run(kemit_cpp, SMALL, "gfx90a", lengths, tables, 4)
    assert np.isfinite(got).all()
    assert np.allclose(got, want, rtol=2.0 ** -8, atol=2.0 ** -10)


def test_every_loaded_index_is_clamped_before_an_address_is_made():
    text = print_kernel(family.build(family.parse_spec(SMALL), GFX90A))
    loads = [line for line in text.split("\n") if "= load" in line and ": i32" in line]
    assert len(loads) == 2  # context_lens[s] and one block-table entry a key
    for line in loads:
        value = line.split("=")[0].strip()
        assert f"icmp {value}, " in text and f"select %" in text and f", {value}, " in text


# ---- the validator ----------------------------------------------------------------------------
@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f32"}, GFX90A, "dtype must be one of f16, bf16 (got 'f32')"),
    ({"cross": "lds"}, GFX90A, "cross must be one of bpermute, dpp (got 'lds')"),
    ({"head_dim": 96}, GFX90A, "head_dim must be one of 64, 128 (got 96)"),
    ({"block_size": 8}, GFX1100, "block_size must be one of 16, 32 (got 8)"),
    ({"group": 0}, GFX90A, "group must be between 1 and 8 (got 0)"),
    ({"group": 9}, GFX942, "group must be between 1 and 8 (got 9)"),
    ({"partition": 48}, GFX90A, "partition must be a power of two from block_size 16 to 1024 (got 48)"),
    ({"block_size": 32, "partition": 16}, GFX90A,
     "partition must be a power of two from block_size 32 to 1024 (got 16)"),
    ({"partition": 2048}, GFX90A, "partition must be a power of two from block_size 16 to 1024 (got 2048)"),
    ({"waves": 0}, GFX90A, "waves must be between 1 and 16 on gfx90a (got 0)"),
    ({"waves": 17}, GFX90A, "waves must be between 1 and 16 on gfx90a (got 17)"),
    ({"waves": 33}, GFX1100, "waves must be between 1 and 32 on gfx1100 (got 33)"),
    # checks run in order: the dtype before the partition, the head_dim before the waves
    ({"dtype": "f8", "partition": 7}, GFX90A, "dtype must be one of f16, bf16 (got 'f8')"),
    ({"head_dim": 32, "waves": 0}, GFX90A, "head_dim must be one of 64, 128 (got 32)"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_the_largest_workgroup_and_one_block_partitions_are_valid():
    assert family.validate(family.parse_spec({"waves": 32, "partition": 16}), GFX1100) == ""
    assert family.validate(family.parse_spec({"waves": 16, "block_size": 32, "partition": 32}), GFX90A) == ""


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "paged_decode_f16_d128_bs16_g1_p256_w4_bpermute"
    spec = family.parse_spec({"dtype": "bf16", "head_dim": 64, "block_size": 32, "group": 8, "partition": 64,
                              "waves": 1, "cross": "dpp"})
    assert family.kernel_name(spec) == "paged_decode_bf16_d64_bs32_g8_p64_w1_dpp"


# ---- the module and its plan ------------------------------------------------------------------
def test_two_kernels_in_launch_order_without_lds_or_barrier():
    result = emit("paged_attention_decode", "gfx1100", {"group": 4, "cross": "dpp"}, ["llvm16"])
    assert not result.rejected
    kernels = [line.split()[1][1:] for line in result.canonical.split("\n") if line.startswith("kernel @")]
    assert kernels == ["paged_decode_f16_d128_bs16_g4_p256_w4_dpp", "paged_decode_f16_d128_bs16_g4_p256_w4_dpp_reduce"]
    assert "lds " not in result.canonical and "barrier" not in result.canonical
    assert "@llvm.amdgcn.update.dpp.i32(" in result.ll[0].text


def test_the_plan_launches_the_partitions_then_the_reduce_over_whole_buffers():
    plan = emit("paged_attention_decode", "gfx90a", {"group": 2, "waves": 2}, []).plan
    launches = [line for line in plan.split("\n") if line.startswith("launch ")]
    assert len(launches) == 2
    assert "ceil(ceil(max_blocks*16,256),2)" in launches[0] and "kv_heads" in launches[0] and "seqs" in launches[0]
    assert "partitions=ceil(max_blocks*16,256)" in launches[0].replace(" ", "") or "ceil(max_blocks*16,256)" in plan
    assert "buffer partial_out seqs*kv_heads*2*ceil(max_blocks*16,256)*512" in plan
    assert "size max_blocks 1..8192" in plan and "size kv_heads 1..64" in plan


# ---- the configs --------------------------------------------------------------------------------
def load_configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


def test_configs_cover_every_processor_wave_size_and_attention_kind():
    emitting = load_emitting_checked(CONFIGS)
    assert len(emitting) >= 60
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    specs = [c["spec"] for c in emitting]
    assert {(s["dtype"], s["head_dim"], s["block_size"], s["cross"]) for s in specs} == {
        (d, h, b, x) for d in family.DTYPES for h in family.HEAD_DIMS for b in family.BLOCK_SIZES
        for x in ("bpermute", "dpp")}
    assert {s["group"] for s in specs} == {1, 2, 4, 8}
    assert any(s["partition"] == s["block_size"] for s in specs)
    assert {s["partition"] for s in specs} >= {32, 64, 128, 256, 512, 1024}
    most = {c["arch"]: family.MAX_BLOCK // find_arch(c["arch"]).wave_size for c in emitting}
    assert any(c["spec"]["waves"] == most[c["arch"]] for c in emitting if c["arch"] == "gfx90a")
    assert any(c["spec"]["waves"] == most[c["arch"]] for c in emitting if c["arch"] == "gfx1100")


REASONS = ("dtype must", "cross must", "head_dim must", "block_size must", "group must", "partition must",
           "waves must", "unknown field", "must be an integer", "must be a string", "must fit in 32 bits",
           "unknown arch")


def test_every_refusal_reason_is_pinned_by_a_config():
    configs = load_configs()
    assert missing_reasons("paged_attention_decode", configs, REASONS) == []
    assert wrong_expectations("paged_attention_decode", configs) == []

"""Mutation tests of the numerics lane: an off-by-one applied to BOTH engines (so they still agree)
is caught by the numerics lane and by nothing else.

The mutation is made in the Python builder (monkeypatching the family while it builds), never in
the engines' files: the mutated canonical text stands for what both engines would emit. For each
mutation the test proves that
- the unmutated config is NUMERIC_OK (so the verdict below is the mutation's doing);
- the mutated text is valid canonical IR that the C++ parser reads back byte for byte (the
  canonical section of the parity lane would compare it IDENTICAL) and that lowers at every flavor
  of the config (the LLVM lanes have a module to accept);
- the numerics lane reports NUMERIC_MISMATCH with a first bad index.
"""
import json
import os
import sys

import pytest

from kemit.engine import emit, find_family
from kemit.families import attention_fwd, conv_depthwise_tiled, conv_depthwise_wgrad, conv_implicit_gemm, norm_rows
from kemit.families import paged_attention_decode, rows_common
from kemit.families import scan_rows, softmax_rows
from kemit.ir import builder as builder_module
from kemit.llvm.flavors import flavor_names
from kemit.target.arch import find_arch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import numerics_worker  # noqa: E402
from module_source import ArchFacts, Built  # noqa: E402


class InProcessPythonSource:
    """The lane's module source, built in this process by the (monkeypatched) Python engine: the
    mutation stands for what both engines would emit (the lane itself asks a protocol worker)."""

    def arch(self, name):
        arch = find_arch(name)
        return ArchFacts(name, arch.wave_size, arch.fp8_format), ""

    def parse_spec(self, family, spec):
        return find_family(family).parse_spec(spec), ""

    def build(self, family, config_id, arch, spec, buffer_range=None):
        result = emit(family, arch, spec, flavor_names(), buffer_range)
        if result.rejected:
            return Built(None, {}, "", refused=result.reason)
        return Built(result.canonical, {s.flavor: None if s.rejected else s.text for s in result.ll}, result.kernel_name,
                     plan=result.plan)


def check_canonical(kemit_cpp, family, entry):
    """The config's canonical-section Result (the interpreter's opinion)."""
    [result] = numerics_worker.check_config(kemit_cpp, family, entry, InProcessPythonSource(), sections=("canonical",))
    return result


def config(family, config_id):
    with open(os.path.join(REPO, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        return next(c for c in json.load(handle)["configs"] if c["id"] == config_id)


def missed_tail_element(monkeypatch):
    """elementwise: the tail guard `gid < tail` becomes `gid < tail - 1` (the last tail element is lost)."""
    original = builder_module.Builder.icmp

    def icmp(self, pred, a, b):
        if pred == "slt":
            b = self.sub(b, self.const_int(builder_module.scalar("i32"), 1))
        return original(self, pred, a, b)

    monkeypatch.setattr(builder_module.Builder, "icmp", icmp)


def wrong_reduction_lane(monkeypatch):
    """reduce_rows: the cross-lane tree's first bpermute reads lane + 2 instead of lane + 1."""
    original = builder_module.Builder.bpermute

    def bpermute(self, v, lane):
        if not getattr(self, "mutated", False):  # the first bpermute of each kernel built
            self.mutated = True
            lane = self.add(lane, self.const_int(builder_module.scalar("i32"), 1), ("nuw", "nsw"))
            lane = self.bit_and(lane, self.const_int(builder_module.scalar("i32"), 63))
        return original(self, v, lane)

    monkeypatch.setattr(builder_module.Builder, "bpermute", bpermute)


def wrong_rotated_filter_row(monkeypatch):
    """conv_depthwise_tiled dgrad: filter row r reads the unrotated filter (row r, columns in order)
    instead of row KH-1-r reversed."""
    original = conv_depthwise_tiled.load_filter_row

    def load_filter_row(b, spec, wt, weight_base, r):
        return original(b, dict(spec, dgrad=False), wt, weight_base, r) if spec["dgrad"] else original(
            b, spec, wt, weight_base, r)

    monkeypatch.setattr(conv_depthwise_tiled, "load_filter_row", load_filter_row)


def unscaled_merge(monkeypatch):
    """softmax_rows: merging two lanes' (max, sum) pairs adds the sums without rescaling the
    smaller max's sum to the larger max."""

    def merge(b, a, c):
        return [b.fmax(a[0], c[0]), b.fadd(a[1], c[1])]

    monkeypatch.setattr(softmax_rows, "merge", merge)


def statistics_of_one_wave(monkeypatch):
    """norm_rows: the row's sums reduce across the wave only, so in scope block each wave
    normalizes its part of the row by its own statistics."""

    def reduce_row(ctx, values, identities, combine):
        return rows_common.wave_reduce(ctx["b"], ctx["arch"], ctx["lane"], ctx["spec"]["cross"], values, combine)

    monkeypatch.setattr(norm_rows, "reduce_row", reduce_row)


def carry_not_grown(monkeypatch):
    """scan_rows: a chunk hands on the carry it got instead of the carry grown by its total, so
    every chunk after the first misses the row's elements before it."""
    original = scan_rows.scan_chunk

    def scan_chunk(ctx, start, length, column, carry):
        original(ctx, start, length, column, carry)
        return carry

    monkeypatch.setattr(scan_rows, "scan_chunk", scan_chunk)


def exclusive_as_inclusive(monkeypatch):
    """scan_rows: an exclusive scan's outputs include their own element."""
    original = scan_rows.chunk_output
    monkeypatch.setattr(scan_rows, "chunk_output", lambda b, op, exclusive, base, local: original(b, op, False, base, local))


def accumulator_not_rescaled(monkeypatch):
    """attention_fwd: O^T keeps its old weight when the running max grows (no exp(m_old - m_new)),
    while the sum l is rescaled: the earlier key tiles count too much."""
    original = attention_fwd.multiply_pv

    def multiply_pv(ctx, alpha, outputs):
        return original(ctx, ctx["b"].const_float(builder_module.scalar("f32"), 1.0), outputs)

    monkeypatch.setattr(attention_fwd, "multiply_pv", multiply_pv)


def one_key_too_many(monkeypatch):
    """attention_fwd: each query sees one key past its last: the clamped copy of the last key in a
    partial tile, or causal, the next query's key."""
    original = attention_fwd.attention_context

    def attention_context(b, spec, arch, seq_q, seq_k):
        ctx = original(b, spec, arch, seq_q, seq_k)
        ctx["query_keys"] = b.add(ctx["query_keys"], b.const_int(builder_module.scalar("i32"), 1), ("nuw", "nsw"))
        return ctx

    monkeypatch.setattr(attention_fwd, "attention_context", attention_context)


def weight_sums_without_the_last_wave(monkeypatch):
    """conv_depthwise_wgrad: folding the waves' partials stops one wave short, so the last wave's
    share of the positions is lost."""
    common, f32 = conv_depthwise_wgrad.common, conv_depthwise_wgrad.F32

    def fold_waves(b, spec, partials, k):
        first = common.mul_const(b, k, spec["block_waves"])
        total = b.load(f32, b.ptr_add(partials, first, f32), 4)
        for w in range(1, spec["block_waves"] - 1):
            total = b.fadd(total, b.load(f32, b.ptr_add(partials, common.add_const(b, first, w), f32), 4))
        return total

    monkeypatch.setattr(conv_depthwise_wgrad, "fold_waves", fold_waves)


def positions_lost_between_splits(monkeypatch):
    """conv_depthwise_wgrad: each split's slice of the positions is one short, so the slices
    together miss the last `split` positions of the batch."""
    original = conv_depthwise_wgrad.positions

    def positions(spec):
        total, per_split = original(spec)
        return total, per_split - 1

    monkeypatch.setattr(conv_depthwise_wgrad, "positions", positions)


def lost_atomic(monkeypatch):
    """moe_sorting: the count's atomic add becomes a plain load of the count (the update is lost)."""
    def atomic_add(self, p, v, order, scope, align):
        return self.load(builder_module.scalar("i32"), p, align)

    monkeypatch.setattr(builder_module.Builder, "atomic_add", atomic_add)


def offsets_one_too_far(monkeypatch):
    """moe_sorting: the scan stores every offset (and the total) one past the sum before it."""
    original = builder_module.Builder.store

    def store(self, v, p, align):
        if self._kernel.name.endswith("_scan"):
            v = self.add(v, self.const_int(builder_module.scalar("i32"), 1))
        return original(self, v, p, align)

    monkeypatch.setattr(builder_module.Builder, "store", store)


def padding_off_by_one(monkeypatch):
    """conv_implicit_gemm fwd: the input position subtracts pad + 1 (iy = oy * stride + ry * dil - pad
    - 1, ix alike): every read moves up and left by one, still inside the masked image."""
    original = builder_module.Builder.sub

    def sub(self, a, b, flags=()):
        if self._kernel.name.startswith("cig_fwd") and not flags:  # iy and ix (batch - 1 is flagged)
            b = self.add(b, self.const_int(builder_module.scalar("i32"), 1))
        return original(self, a, b, flags)

    monkeypatch.setattr(builder_module.Builder, "sub", sub)


def dilation_of_one(monkeypatch):
    """conv_implicit_gemm dgrad: a tap's reach ry * dil_h (rx alike) made with dilation 1: the taps read
    dy at the undilated filter's positions, each still guarded to a mapped output."""
    original = conv_implicit_gemm.scaled_sum

    def scaled_sum(b, terms):
        if len(terms) == 1:
            terms = [(terms[0][0], 1)]
        return original(b, terms)

    monkeypatch.setattr(conv_implicit_gemm, "scaled_sum", scaled_sum)


def next_block_entry(monkeypatch):
    """paged_attention_decode: each key's block is read from block_table[s, i + 1] instead of
    block_table[s, i] (the same row within the block; the next entry stays inside the table)."""
    original = paged_attention_decode.cache_offset

    def cache_offset(ctx, key):
        b = ctx["b"]
        ahead = b.add(key, b.const_int(builder_module.scalar("i32"), ctx["spec"]["block_size"]), ("nuw", "nsw"))
        return original(ctx, ahead)

    monkeypatch.setattr(paged_attention_decode, "cache_offset", cache_offset)


def partition_not_rescaled(monkeypatch):
    """paged_attention_decode: the reduce adds each partition's output without its weight
    exp(m_p - M) (the sums keep theirs)."""
    def merge_partition(b, weight, values, sums):
        return [b.fma(weight, values[0], sums[0])] + [b.fadd(value, total) for value, total in
                                                       zip(values[1:], sums[1:])]

    monkeypatch.setattr(paged_attention_decode, "merge_partition", merge_partition)


MUTATIONS = [
    ("elementwise", 28, missed_tail_element),          # f16 x8: a tail of 7 elements
    ("reduce_rows", 1, wrong_reduction_lane),          # f32 sum, bpermute tree, wave64
    ("conv_depthwise_tiled", 25, wrong_rotated_filter_row),  # dgrad f16 13x13
    ("softmax_rows", 1, unscaled_merge),               # f32 scope block, bpermute tree, wave64
    ("norm_rows", 1, statistics_of_one_wave),          # layernorm f32 scope block, 4 waves
    ("scan_rows", 5, carry_not_grown),                 # f16 exclusive sum, scope block, 3 chunks a row
    ("scan_rows", 32, exclusive_as_inclusive),         # f32 x8 exclusive max, scope wave, dpp, wave32
    ("attention_fwd", 3, accumulator_not_rescaled),    # f16 causal, mfma_32x32x8, 4 key tiles of 32
    ("attention_fwd", 2, one_key_too_many),            # f16, a partial second key tile of 35 keys
    ("attention_fwd", 19, one_key_too_many),           # f16 causal, wmma_16x16x16 on wave32
    ("conv_depthwise_wgrad", 1, weight_sums_without_the_last_wave),  # f16 3x3, 4 waves, wave64
    ("conv_depthwise_wgrad", 11, positions_lost_between_splits),  # f16 3x3 stride 2, cpl 4, split 8, dpp
    ("moe_sorting", 3, lost_atomic),                   # 8 experts, top-2, block 128, wave64
    ("moe_sorting", 13, offsets_one_too_far),          # 8 experts, top-2, block 128, wave32
    ("conv_implicit_gemm", 1, padding_off_by_one),     # fwd f16 3x3 pad 1, mfma_32x32x8
    ("conv_implicit_gemm", 21, dilation_of_one),       # dgrad f16 3x3 dilation 2 pad 2, mfma_32x32x8
    ("paged_attention_decode", 1, next_block_entry),   # f16 d64 bs16 MHA, partition 64, wave64
    ("paged_attention_decode", 2, partition_not_rescaled),  # bf16 d64 bs16 MHA, partition 128, wave32
]


@pytest.mark.parametrize("family,config_id,mutate", MUTATIONS, ids=[m[2].__name__ for m in MUTATIONS])
def test_numerics_lane_catches_a_mutation_both_engines_share(kemit_cpp, monkeypatch, family, config_id, mutate):
    entry = config(family, config_id)
    clean = check_canonical(kemit_cpp, family, entry)
    assert clean.verdict == "NUMERIC_OK", clean.detail
    clean_text = emit(family, entry["arch"], clean.spec, []).canonical

    mutate(monkeypatch)
    result = emit(family, entry["arch"], clean.spec, flavor_names())
    assert not result.rejected
    assert result.canonical != clean_text, "the mutation must change the kernel"
    assert kemit_cpp.reprint(result.canonical) == result.canonical  # the canonical section would agree
    assert any(not section.rejected for section in result.ll)       # a module for the LLVM lanes

    mutated = check_canonical(kemit_cpp, family, entry)
    assert mutated.verdict == "NUMERIC_MISMATCH", mutated.detail
    assert mutated.mismatch["first_bad_index"] >= 0 and mutated.mismatch["max_abs_error"] > 0

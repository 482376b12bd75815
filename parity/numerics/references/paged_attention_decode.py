"""numpy reference for the paged_attention_decode family.

`paged_decode` is the definition: for each sequence s and query head h, the keys and values of the
sequence's context_lens[s] tokens gathered through its block table (token t in physical block
block_table[s, t // block_size], row t % block_size, kv head h // group), then softmax(q . k *
scale) v in f64 (attention_fwd's `probabilities` and `weighted`), rounded once to the dtype; a
sequence of no keys gives 0.

The plan's sequences cover a single key, a partial block, a length that ends exactly on a
partition boundary, several partitions with a partial last block and a length one past a
boundary; every sequence but the longest leaves partitions past its length (empty partitions the
reduce must skip). Block tables map logical blocks to a random permutation of the physical ones
(never the identity) and the last sequence shares its leading blocks with the one before it (a
shared prefix); entries no key reaches hold garbage (-1, num_blocks, 2^31 - 1) that a correct
kernel never reads. The `large_logits` set (plans.py) puts every logit in the hundreds: exp
overflows f32 without the max subtraction.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import math

import numpy as np

from plans import ACCUMULATION, Case, Output, RTOL, ceil_div, nan_memory, random_values, require_small, to_memory
from references.attention_fwd import probabilities, weighted

# entries of a block table that no key reaches: outside [0, num_blocks), or the largest i32
GARBAGE = (-1, None, (1 << 31) - 1)


def gathered(cache, table, length, block_size, kv_head):
    """The sequence's first `length` keys (or values) of kv head kv_head, in token order; a block
    number outside [0, num_blocks) is read as block 0, as the kernel defines it (docs/contracts.md)."""
    tokens = np.arange(length)
    blocks = table[tokens // block_size].astype(np.int64)
    blocks = np.where((blocks >= 0) & (blocks < cache.shape[0]), blocks, 0)
    return cache[blocks, tokens % block_size, kv_head]


def paged_decode(q, k_cache, v_cache, block_table, context_lens, group, scale, dtype):
    """o [seqs, heads, head_dim] of the definition (f32 values of dtype)."""
    seqs, heads, head_dim = q.shape
    o = np.zeros((seqs, heads, head_dim), dtype=np.float32)
    for s, heads_of, keys, values in kv_groups(q, k_cache, v_cache, block_table, context_lens, group):
        weights = probabilities(q[s, heads_of][None], keys[None], False, scale)
        o[s, heads_of] = weighted(weights, values[None], dtype)[0]
    return o


def kv_groups(q, k_cache, v_cache, block_table, context_lens, group):
    """(s, the query heads of one kv head, its keys, its values) per sequence with keys and kv
    head: the group's heads share one gather, so their weights come as one product."""
    seqs, heads, _ = q.shape
    block_size = k_cache.shape[1]
    for s in range(seqs):
        if context_lens[s] == 0:
            continue
        for kv_head in range(heads // group):
            keys, values = (gathered(cache, block_table[s], context_lens[s], block_size, kv_head)
                            for cache in (k_cache, v_cache))
            yield s, slice(kv_head * group, (kv_head + 1) * group), keys, values


def error_scale(q, k_cache, v_cache, block_table, context_lens, group, scale):
    """Per output element, the magnitude its error is measured against: sum_j p_j |v_j| times
    (4 + 2 eps / ACCUMULATION), eps the logits' worst f32 error (head_dim roundings of a sum of
    |q_i k_i| scale), which moves every weight by a factor of exp(eps)."""
    head_dim = q.shape[2]
    out = np.zeros(q.shape, dtype=np.float64)
    for s, heads_of, keys, values in kv_groups(q, k_cache, v_cache, block_table, context_lens, group):
        keys, values, queries = keys.astype(np.float64), values.astype(np.float64), q[s, heads_of].astype(np.float64)
        weights = probabilities(queries[None], keys[None], False, scale)[0]
        eps = head_dim * 2.0 ** -23 * (np.abs(queries) @ np.abs(keys).T).max(axis=1) * scale
        out[s, heads_of] = (weights @ np.abs(values)) * (4 + 2 * eps / ACCUMULATION)[:, None]
    return out


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """large_logits: logits in the hundreds, so only the max subtraction keeps exp finite;
    wild_tables: one block each sequence reaches numbered out of range (-1, num_blocks itself, the
    largest i32), which the kernel reads as block 0; one_block: tables of one block (max_blocks 1,
    the least the launch plan allows) and three sequences within it, so every size made from
    max_blocks - 1 is 0."""
    return ("large_logits", "wild_tables", "one_block")


def wild_entries(tables, lengths, block_size, num_blocks):
    """Sequence s's reached block s mod its blocks renumbered -1, num_blocks or 2^31 - 1 in turn."""
    for s, length in enumerate(lengths):
        wild = [num_blocks if g is None else g for g in GARBAGE][s % len(GARBAGE)]
        tables[s, s % ceil_div(length, block_size)] = wild
    return tables


def context_lengths(spec):
    """A key, a partial block, exactly one partition, several partitions ending in a partial
    block, one key past a partition boundary."""
    block_size, partition = spec["block_size"], spec["partition"]
    return [1, block_size // 2 + 3, partition, 2 * partition + block_size + 5, partition + 1]


def block_tables(rng, lengths, block_size, max_blocks):
    """(tables [seqs, max_blocks] i32, num_blocks): each sequence's blocks a slice of a random
    permutation of the physical blocks, the last sequence's leading blocks shared with the one
    before it, unreached entries garbage."""
    needed = [ceil_div(n, block_size) for n in lengths]
    shared = min(needed[-1], needed[-2]) - 1
    num_blocks = sum(needed) - shared + 3
    physical = rng.permutation(num_blocks)
    tables = np.zeros((len(lengths), max_blocks), dtype=np.int64)
    used = 0
    for s, count in enumerate(needed):
        fresh = count - shared if s == len(lengths) - 1 else count
        tables[s, count - fresh:count] = physical[used:used + fresh]
        used += fresh
        garbage = [num_blocks if g is None else g for g in GARBAGE]
        tables[s, count:] = [garbage[i % len(garbage)] for i in range(max_blocks - count)]
    tables[-1, :shared] = tables[-2, :shared]
    return tables.astype(np.int32), num_blocks


def plan(spec, arch, rng):
    """kv_heads 2 (heads 2 * group), the five sequences of context_lengths, block tables of at
    least 2 * waves partitions; every buffer the contract's bytes, the partial buffers and o NaN
    before the kernels run."""
    dtype, group, head_dim, block_size = spec["dtype"], spec["group"], spec["head_dim"], spec["block_size"]
    lengths = context_lengths(spec) if rng.inputs != "one_block" else [1, block_size // 2 + 3, block_size]
    kv_heads, seqs = 2, len(lengths)
    heads = kv_heads * group
    # at least two workgroups of partitions on the grid's x, so a workgroup other than the first
    # places its waves' partitions: a wrong first partition of a workgroup leaves one unwritten
    two_workgroups = ceil_div(2 * spec["waves"] * spec["partition"], block_size)
    max_blocks = max(ceil_div(max(lengths), block_size) + 1, two_workgroups) if rng.inputs != "one_block" else 1
    partitions = ceil_div(max_blocks * block_size, spec["partition"])
    tables, num_blocks = block_tables(rng, lengths, block_size, max_blocks)
    if rng.inputs == "wild_tables":
        tables = wild_entries(tables, lengths, block_size, num_blocks)
    cache_shape = (num_blocks, block_size, kv_heads, head_dim)
    require_small(num_blocks * block_size * kv_heads * head_dim, sum(lengths) * heads * head_dim * 2,
                  "the paged attention problem")
    q, k_cache, v_cache = (random_values(rng, shape, dtype) for shape in ((seqs, heads, head_dim), cache_shape,
                                                                           cache_shape))
    scale = float(np.float32(1.0 / math.sqrt(head_dim)))
    context_lens = np.array(lengths, dtype=np.int32)
    want = paged_decode(q, k_cache, v_cache, tables, context_lens, group, scale, dtype)
    scale_of = error_scale(q, k_cache, v_cache, tables, context_lens, group, scale)
    slots = seqs * heads * partitions
    buffers = {"q": to_memory(q, dtype), "k_cache": to_memory(k_cache, dtype), "v_cache": to_memory(v_cache, dtype),
               "block_table": tables, "context_lens": context_lens, "max_logits": nan_memory(slots, "f32"),
               "exp_sums": nan_memory(slots, "f32"), "partial_out": nan_memory(slots * head_dim, "f32"),
               "o": nan_memory(seqs * heads * head_dim, dtype)}
    sizes = {"seqs": seqs, "kv_heads": kv_heads, "max_blocks": max_blocks, "num_blocks": num_blocks}
    return Case(spec, (1,), spec["waves"] * arch.wave_size, buffers, {}, [
        Output("o", dtype, want.reshape(-1), scale_of.reshape(-1), RTOL[dtype])], sizes=sizes)

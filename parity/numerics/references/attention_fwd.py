"""numpy references for the attention_fwd family.

`attention` is the definition: per head, softmax(q k^T * scale) v in f64 from the inputs (which
hold values of their dtype), causal keys past the query masked out, rounded once to the dtype.
`probabilities` gives the softmax weights behind each output row, so the numerics plan can bound
what rounding p to the input dtype before P V costs (docs/numerics.md).

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import math

import numpy as np

from plans import (ACCUMULATION, Case, ELEMENT_BYTES, Output, RTOL, ceil_div, nan_memory, random_values, require_small,
                   round_to, slot_ends, to_memory, two_chunk_range)
from witness import Sampled, view_values



def probabilities(q, k, causal, scale):
    """P[h, i, j] = softmax over keys j of q[h, i] . k[h, j] * scale (j > i masked when causal), f64."""
    return probabilities_at(q, k, np.arange(np.shape(q)[1]) if causal else None, scale)


def probabilities_at(q, k, positions, scale):
    """probabilities of queries at `positions` of their head (keys past each masked; None: none), f64."""
    scores = (np.asarray(q, dtype=np.float64) @ np.swapaxes(np.asarray(k, dtype=np.float64), 1, 2)) * scale
    if positions is not None:
        scores = np.where(np.arange(scores.shape[2])[None, None, :] <= np.asarray(positions)[None, :, None], scores,
                          -np.inf)
    shifted = np.exp(scores - scores.max(axis=2, keepdims=True))
    return shifted / shifted.sum(axis=2, keepdims=True)


def attention(q, k, v, causal, scale, dtype):
    """o[h] = P[h] v[h] in f64, rounded to dtype (as f32 values); q, k, v are (heads, seq, head_dim)."""
    return weighted(probabilities(q, k, causal, scale), v, dtype)


def weighted(weights, v, dtype):
    """P v in f64 (P from `probabilities`), rounded to dtype (as f32 values)."""
    return round_to((weights @ np.asarray(v, dtype=np.float64)).astype(np.float32), dtype)


def attention_online(q, k, v, causal, scale, dtype, tile_kv):
    """The kernel's algorithm in f32 for every query row: key tiles of tile_kv, masked keys (past
    seq_k or, causal, past the query) scored LOWEST with p = 0, the running max m and sum l,
    the accumulator rescaled by exp(m_old - m_new), p rounded to dtype before p v, o = acc / l
    rounded to dtype. A test checks that it computes `attention`."""
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    heads, seq_q, head_dim = q.shape
    seq_k = k.shape[1]
    lowest = np.float32(-np.finfo(np.float32).max)
    out = np.empty_like(q)
    for h in range(heads):
        for i in range(seq_q):
            end = min(seq_k, i + 1) if causal else seq_k
            m, l, acc = lowest, np.float32(0.0), np.zeros(head_dim, dtype=np.float32)
            for k0 in range(0, seq_k, tile_kv):
                keys = np.arange(k0, k0 + tile_kv)
                valid = keys < end
                rows = np.minimum(keys, seq_k - 1)
                scores = np.where(valid, (k[h, rows] @ q[h, i]).astype(np.float32) * np.float32(scale), lowest)
                m_new = np.float32(max(m, scores.max()))
                p = np.where(valid, np.exp(scores - m_new), np.float32(0.0)).astype(np.float32)
                alpha = np.float32(np.exp(np.float32(m - m_new)))
                l = np.float32(l * alpha + p.sum(dtype=np.float32))
                acc = (acc * alpha + round_to(p, dtype) @ v[h, rows]).astype(np.float32)
                m = m_new
            out[h, i] = acc / l
    return round_to(out, dtype)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Rows of one value: scores in exact ties, so a query's weights are equal over each run of
    equal keys; tile_ends: seq_k at every block of the key tile; causal, zero_signs: outputs of -0
    that a masked key's 0 x v must leave alone."""
    return ("ties", "tile_ends") + (("zero_signs",) if spec["causal"] else ())


# p is rounded to the input dtype before P V (the mma's operand): a relative error of up to half
# an ulp per term, so up to P_ROUNDING * sum_j p_j |v_j| in an output. SCORE_SLACK covers the f32
# side on the same magnitudes: the scores' f32 sums, exp, and the running sums rescaled in another
# order than the reference (every config stays GREEN at 2^-16: a margin of 4; a softmax scale off
# by 0.1% fails f16 configs).
P_ROUNDING = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
SCORE_SLACK = 2.0 ** -14


def sampled_outputs(spec, launch):
    """o's reference at the rows a witness run wrote (a workgroup's query tile of one head): each
    row from its query and all of its head's keys and values, read from the fill."""
    dtype, head_dim = spec["dtype"], spec["head_dim"]
    seq_q, seq_k = launch["args"]["seq_q"], launch["args"]["seq_k"]
    scale = float(np.float32(1.0 / math.sqrt(head_dim)))
    dims = np.arange(head_dim)

    def want(indices):
        indices = np.asarray(indices, dtype=np.int64)
        out, behind = np.zeros(len(indices)), np.zeros(len(indices))
        for head in np.unique(indices // (seq_q * head_dim)):
            at = np.flatnonzero(indices // (seq_q * head_dim) == head)
            rows, row_at = np.unique(indices[at] // head_dim, return_inverse=True)
            keys = (head * seq_k + np.arange(seq_k))[:, None] * head_dim + dims
            q = view_values(launch, "q", dtype, rows[:, None] * head_dim + dims)[None]
            k, v = (view_values(launch, name, dtype, keys)[None] for name in ("k", "v"))
            p = probabilities_at(q, k, rows % seq_q if spec["causal"] else None, scale)  # a query's place masks keys
            o, b = (p @ v)[0], (p @ np.abs(v))[0]
            out[at], behind[at] = o[row_at, indices[at] % head_dim], b[row_at, indices[at] % head_dim]
        return (round_to(out.astype(np.float32), dtype),
                behind * ((P_ROUNDING[dtype] + SCORE_SLACK) / ACCUMULATION))
    return [Sampled("o", dtype, want, RTOL[dtype])]


def plan(spec, arch, rng):
    """Three heads in two chunks, two heads in the first (so a workgroup's head comes from its id
    within a chunk as well as from the chunk's views); two query tiles of the workgroup (waves * M
    queries, M the instruction's, from its spec name; causal: at least two key tiles' worth) and
    at least two key tiles; seq_k leaves a partial last key tile: causal, 3
    keys short of seq_q (so the last workgroup's loop ends in the tail), else a tile and a half
    and 3 keys. Inputs in [-2, 2]. The scale of an output is sum_j p_j |v_j| times
    (P_ROUNDING + SCORE_SLACK) / ACCUMULATION, so the compare's ACCUMULATION term is that bound.
    tile_ends: a case per place in the key tile where seq_k can end (tile_end_cases)."""
    head_dim, tile_kv = spec["head_dim"], spec["tile_kv"]
    tile_q = spec["waves"] * mma_m(spec)
    # causal: seq_q past two key tiles, so that its keys fill them; else two query tiles
    seq_q = ceil_div(max(2 * tile_q, 2 * tile_kv if spec["causal"] else 0), tile_q) * tile_q
    seq_k = seq_q - 3 if spec["causal"] else tile_kv + tile_kv // 2 + 3
    # two heads per chunk (a lowered buffer range): two chunks, the second of one head
    _, buffer_range = two_chunk_range(2 * max(seq_q, seq_k), [head_dim * ELEMENT_BYTES[spec["dtype"]]])
    if rng.inputs == "tile_ends":
        return tile_end_cases(spec, arch, rng, buffer_range)
    if rng.inputs == "zero_signs":
        return zero_sign_case(spec, arch, buffer_range)
    return attention_case(spec, arch, rng, (3, seq_q, seq_k), buffer_range)


def mma_m(spec):
    """The instruction's M (queries per wave), from its spec name (mfma_16x16x16: 16)."""
    return int(spec["mma"].split("_")[1].split("x")[0])


def tile_end_cases(spec, arch, rng, buffer_range):
    """One head, seq_k at each place of the key tile where it meets a block's compare with seq_k
    (plans.slot_ends: every fragment of M keys for the clamp of the key it loads, every accumulator
    element for the mask of its score): a compare made `<=` loads key seq_k, one past k's last row
    in the last head, or counts its score. One query tile (causal: enough tiles that the last
    query's keys reach seq_k) and one key tile, so each case costs a workgroup or a few. A slot's
    end at 1 moves a tile on: the key a compare made `<=` lets through at seq_k 1 is a copy of the
    only key (the clamp loads key 0 for it), which changes no weight; at tile_kv + 1 the same slot
    meets a copy of key tile_kv among tile_kv others. seq_k 1 runs first on its own: the one length
    where a clamp one key lower (seq_k - 2) reads before k."""
    tile_q, tile_kv = spec["waves"] * mma_m(spec), spec["tile_kv"]
    cases = []
    for seq_k in [1] + [end if end > 1 else tile_kv + end for end in slot_ends(tile_kv, spec["mma"], arch)]:
        seq_q = ceil_div(seq_k, tile_q) * tile_q if spec["causal"] else tile_q
        case = attention_case(spec, arch, rng, (1, seq_q, seq_k), buffer_range)
        case.note = f"seq_k {seq_k}"
        cases.append(case)
    return cases


def zero_sign_case(spec, arch, buffer_range):
    """Causal, one head whose outputs past the first key tile are -0, and one key past the last
    query (seq_k = seq_q + 1) with v = +1, which no query may weigh. Every q is a, k is 0 over the
    first key tile and b after it, so a query past that tile scores S >= 160 there and 0 before:
    the accumulator of the first tile's v = -1 is rescaled by exp(-S), 0 in f32, to -0, and the
    tiles after it add p v of v = -0, so o = -0 / l = -0. A key loop that runs past the last
    query's tile adds 0 x (+1) = +0, and -0 + +0 is +0: only the bits show it, in the sections'
    comparison (NUMERIC_DIVERGED). seq_q is the first multiple of the query tile past one key tile."""
    head_dim, tile_kv = spec["head_dim"], spec["tile_kv"]
    tile_q = spec["waves"] * mma_m(spec)
    seq_q = ceil_div(tile_kv + 1, tile_q) * tile_q
    a, b = 4.0, float(math.ceil(40.0 / math.sqrt(head_dim)))  # S = sqrt(head_dim) a b >= 160, exact in bf16
    q = np.full((1, seq_q, head_dim), a)
    k = np.zeros((1, seq_q + 1, head_dim))
    k[:, tile_kv:seq_q] = b
    v = np.full((1, seq_q + 1, head_dim), -0.0)
    v[:, :tile_kv], v[:, seq_q] = -1.0, 1.0
    return attention_case_of(spec, arch, (q, k, v), buffer_range)


def attention_case(spec, arch, rng, shape, buffer_range):
    """The case of `heads` heads of seq_q queries over seq_k keys (shape), inputs in [-2, 2]."""
    dtype, head_dim = spec["dtype"], spec["head_dim"]
    heads, seq_q, seq_k = shape
    require_small(heads * max(seq_q, seq_k) * head_dim, 2 * heads * seq_q * seq_k * head_dim,
                  "the attention_fwd problem")
    q, k, v = (random_values(rng, (heads, seq, head_dim), dtype) for seq in (seq_q, seq_k, seq_k))
    return attention_case_of(spec, arch, (q, k, v), buffer_range)


def attention_case_of(spec, arch, qkv, buffer_range):
    """The case of the given q, k and v ((heads, seq, head_dim) each, values of the dtype)."""
    dtype, head_dim = spec["dtype"], spec["head_dim"]
    q, k, v = qkv
    heads, seq_q, seq_k = q.shape[0], q.shape[1], k.shape[1]
    tile_q = spec["waves"] * mma_m(spec)
    scale = float(np.float32(1.0 / math.sqrt(head_dim)))
    weights = probabilities(q, k, spec["causal"], scale)
    want, behind = weighted(weights, v, dtype), weights @ np.abs(v)
    buffers = {"q": to_memory(q, dtype), "k": to_memory(k, dtype), "v": to_memory(v, dtype),
               "o": nan_memory(q.shape, dtype)}
    sizes = {"heads": heads, "q_tiles": seq_q // tile_q, "seq_k": seq_k}
    return Case(spec, (seq_q // tile_q, heads), spec["waves"] * arch.wave_size, buffers,
                {"seq_q": seq_q, "seq_k": seq_k},
                [Output("o", dtype, want.reshape(-1),
                        (behind * ((P_ROUNDING[dtype] + SCORE_SLACK) / ACCUMULATION)).reshape(-1), RTOL[dtype])],
                buffer_range=buffer_range, sizes=sizes)

"""numpy references for the attention_bwd family.

`forward` makes the inputs a forward pass would leave: o (rounded to the dtype) and lse (the
log-sum-exp of the scaled scores, rounded to f32), in f64 from q, k, v. `gradients` is the
definition of the backward pass, in f64 from the inputs the kernels read (o and lse as stored):
P = exp(q k^T * scale - lse) (causal: keys past the query 0), delta = rowsum(do * o),
dS = P * (do v^T - delta), dq = scale * dS k, dk = scale * dS^T q, dv = P^T do. `bounds` gives
the magnitude behind each output that the kernels' f32 arithmetic can move it by.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import math

import numpy as np

from plans import ACCUMULATION, Case, ELEMENT_BYTES, Output, RTOL, nan_memory, random_values, require_small, \
    round_to, to_memory


def scores(q, k, causal, scale):
    """q k^T * scale in f64 per head, keys past the query -inf when causal."""
    s = (np.asarray(q, dtype=np.float64) @ np.swapaxes(np.asarray(k, dtype=np.float64), 1, 2)) * scale
    if causal:
        s = np.where(np.arange(s.shape[2])[None, None, :] <= np.arange(s.shape[1])[None, :, None], s, -np.inf)
    return s


def forward(q, k, v, causal, scale, dtype):
    """(o rounded to dtype, lse rounded to f32) of attention over (heads, seq, head_dim) inputs."""
    s = scores(q, k, causal, scale)
    top = s.max(axis=2, keepdims=True)
    total = np.exp(s - top).sum(axis=2, keepdims=True)
    o = (np.exp(s - top) / total) @ np.asarray(v, dtype=np.float64)
    lse = (top + np.log(total))[..., 0]
    return round_to(o.astype(np.float32), dtype), lse.astype(np.float32)


def probabilities(q, k, lse, causal, scale):
    """P = exp(q k^T * scale - lse) in f64, the stored lse (0 where causal masks a key)."""
    return np.exp(scores(q, k, causal, scale) - np.asarray(lse, dtype=np.float64)[..., None])


def gradients(q, k, v, o, do, lse, causal, scale):
    """(dq, dk, dv) in f64."""
    q, k, v, o, do = (np.asarray(a, dtype=np.float64) for a in (q, k, v, o, do))
    p = probabilities(q, k, lse, causal, scale)
    delta = (do * o).sum(axis=2)
    ds = p * (do @ np.swapaxes(v, 1, 2) - delta[..., None])
    return scale * ds @ k, scale * np.swapaxes(ds, 1, 2) @ q, np.swapaxes(p, 1, 2) @ do


def bounds(p, q, k, v, o, do, lse, scale):
    """The magnitudes behind (dq, dk, dv), p the probabilities (`probabilities`): p's error is
    relative to the f32 score's terms and lse (each p weighted by 1 + |q| |k| scale + |lse|); ds's
    comes from p's and from dp's and delta's f32 sums (|do| |v| and |do| |o|)."""
    q, k, v, o, do = (np.abs(np.asarray(a, dtype=np.float64)) for a in (q, k, v, o, do))
    terms = 1.0 + (q @ np.swapaxes(k, 1, 2)) * scale + np.abs(np.asarray(lse, dtype=np.float64))[..., None]
    weighted = p * terms
    sums = do @ np.swapaxes(v, 1, 2) + (do * o).sum(axis=2)[..., None]
    ds = (weighted + p) * sums
    return scale * ds @ k, scale * np.swapaxes(ds, 1, 2) @ q, np.swapaxes(weighted, 1, 2) @ do


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Rows of one value (scores in exact ties: a query's weights equal over its keys), rows
    whose pairs cancel (delta = rowsum(do * o) near 0 beside large terms), and causal: queries that
    end on a tile's end below seq_k (tile_queries)."""
    return ("ties", "cancelling") + (("tile_queries",) if spec["causal"] else ())


# The f32 side: the scores' and dp's sums, exp and the sums over queries and keys in another order
# than the reference's f64; a multiple of f32's epsilon on the magnitudes `bounds` gives.
SLACK = 2.0 ** -16


def query_rows(block, head_dim):
    """The queries of a case that is not causal: at least 3 (a query loop of several trips) and
    more than a workgroup of dq's elements (seq_q x head_dim), the reduce's last workgroup partial
    where a count can make it so (none can when block divides head_dim); fewer than a block, so the
    delta kernel's one workgroup is partial. The main kernel pays every query in every key tile."""
    first = max(3, block // head_dim + 1)
    return next((rows for rows in range(first, first + block) if rows * head_dim % block), first)


def sequences(spec, inputs):
    """(seq_q, seq_k). The random inputs: seq_k two key tiles, the second partial (a tile and a half
    and 3 keys; causal a tile and 2); causal seq_q 1 past seq_k, so the second tile's first query
    sees one of its two keys (the diagonal inside a partial tile) and the last query sees a key at
    seq_k that only the key guard hides; the first tile runs every query from 0, seq_q x block the
    interpreter pays (the kernel's design: a workgroup per key tile loops over every query from the
    tile's first key). The named sets shape values, not paths: one partial tile of 3 keys, causal 5
    queries (the diagonal, then two past seq_k). tile_queries (causal): seq_q one tile, seq_k a tile
    and 2, so the second key tile's query loop starts at seq_q itself and runs no trip."""
    block, head_dim, causal = spec["block"], spec["head_dim"], spec["causal"]
    if inputs == "tile_queries":
        return block, block + 2
    if inputs != "random":
        return (5 if causal else query_rows(block, head_dim)), 3
    if causal:
        return block + 3, block + 2
    return query_rows(block, head_dim), block + block // 2 + 3


def plan(spec, arch, rng):
    """Three heads in two chunks of two heads (a lowered buffer range, the random case's: every set
    runs under it); seq_q and seq_k by `sequences`. Inputs in [-2, 2]; o and lse from the forward
    in f64."""
    dtype, head_dim, block, causal, heads = spec["dtype"], spec["head_dim"], spec["block"], spec["causal"], 3
    seq_q, seq_k = sequences(spec, rng.inputs)
    key_tiles = -(-seq_k // block)
    require_small(heads * max(seq_q, seq_k) * head_dim, 4 * heads * seq_q * seq_k * head_dim,
                  "the attention_bwd problem")
    q, do = (random_values(rng, (heads, seq_q, head_dim), dtype) for _ in range(2))
    k, v = (random_values(rng, (heads, seq_k, head_dim), dtype) for _ in range(2))
    scale = float(np.float32(1.0 / math.sqrt(head_dim)))
    o, lse = forward(q, k, v, causal, scale, dtype)
    wants = gradients(q, k, v, o, do, lse, causal, scale)
    behind = bounds(probabilities(q, k, lse, causal, scale), q, k, v, o, do, lse, scale)
    buffers = {"q": to_memory(q, dtype), "k": to_memory(k, dtype), "v": to_memory(v, dtype), "o": to_memory(o, dtype),
               "do": to_memory(do, dtype), "lse": to_memory(lse, "f32"), "delta": nan_memory((heads, seq_q), "f32"),
               "dq_part": nan_memory((heads, key_tiles, seq_q, head_dim), "f32"),
               "dq": nan_memory(q.shape, "f32"), "dk": nan_memory(k.shape, "f32"), "dv": nan_memory(k.shape, "f32")}
    outputs = [Output(name, "f32", want.astype(np.float32).reshape(-1), (scale_ * (SLACK / ACCUMULATION)).reshape(-1),
                      RTOL["f32"]) for name, want, scale_ in zip(("dq", "dk", "dv"), wants, behind)]
    # a chunk of two heads of the random case: the largest view per head is dq_part's key_tiles *
    # seq_q f32 rows (or dk's seq_k); a range of under three heads of it leaves chunks of two
    random_q, random_k = sequences(spec, "random")
    most_rows = 3 * max(-(-random_k // block) * random_q, random_k) - 1
    return Case(spec, (key_tiles, heads), block, buffers, {"seq_q": seq_q, "seq_k": seq_k}, outputs,
                buffer_range=2 * most_rows * head_dim * ELEMENT_BYTES["f32"],
                sizes={"heads": heads, "seq_q": seq_q, "seq_k": seq_k})

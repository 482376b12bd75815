"""numpy references for the attention_fwd family.

`attention` is the definition: per head, softmax(q k^T * scale) v in f64 from the inputs (which
hold values of their dtype), causal keys past the query masked out, rounded once to the dtype.
`probabilities` gives the softmax weights behind each output row, so the numerics plan can bound
what rounding p to the input dtype before P V costs (docs/numerics.md).
"""
import numpy as np

from .reduce_rows import round_to


def probabilities(q, k, causal, scale):
    """P[h, i, j] = softmax over keys j of q[h, i] . k[h, j] * scale (j > i masked when causal), f64."""
    scores = np.einsum("hid,hjd->hij", np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)) * scale
    if causal:
        queries, keys = scores.shape[1], scores.shape[2]
        scores = np.where(np.arange(keys)[None, :] <= np.arange(queries)[:, None], scores, -np.inf)
    shifted = np.exp(scores - scores.max(axis=2, keepdims=True))
    return shifted / shifted.sum(axis=2, keepdims=True)


def attention(q, k, v, causal, scale, dtype):
    """o[h] = P[h] v[h] in f64, rounded to dtype (as f32 values); q, k, v are (heads, seq, head_dim)."""
    weights = probabilities(q, k, causal, scale)
    return round_to(np.einsum("hij,hjd->hid", weights, np.asarray(v, dtype=np.float64)).astype(np.float32), dtype)


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

"""numpy references for the gemm_mma family.

`gemm` is the definition (16-bit inputs, exact products, f32 accumulation). `LAYOUTS` writes
down docs/ir.md's fragment layout of every mma instruction independently of the family, and
`mma_by_fragments` computes one instruction lane by lane from it, so a test can check both the
layouts' consistency and the family's own fragment and accumulator index tables against them.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import Case, ELEMENT_BYTES, Output, two_chunk_range, RTOL, random_values, require_small, round_to, to_memory
from witness import Sampled, view_values



def gemm(a, b, c=None):
    """c + a @ b in f32 (a, b hold values of their 16-bit dtype); c None means zero."""
    product = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)
    if c is not None:
        product += np.asarray(c, dtype=np.float64)
    return product.astype(np.float32)


# kind -> (M, N, K, wave, operand length, accumulator length, a_k(lane, e), c_row(lane, e))
# with A[i][k] in lane L element e at i = L mod M, k = a_k(L, e); B symmetric (j = L mod N);
# C/D element e of lane L at i = c_row(L, e), j = L mod N (docs/ir.md, "Matrix ops").
LAYOUTS = {
    "mfma_32x32x8": (32, 32, 8, 64, 4, 16, lambda L, e: 4 * (L // 32) + e,
                     lambda L, e: 8 * (e // 4) + 4 * (L // 32) + e % 4),
    "mfma_16x16x16": (16, 16, 16, 64, 4, 4, lambda L, e: 4 * (L // 16) + e, lambda L, e: 4 * (L // 16) + e),
    "mfma_16x16x32": (16, 16, 32, 64, 8, 4, lambda L, e: 8 * (L // 16) + e, lambda L, e: 4 * (L // 16) + e),
    "wmma_gfx11": (16, 16, 16, 32, 16, 8, lambda L, e: e, lambda L, e: 2 * e + L // 16),
    "wmma_gfx12": (16, 16, 16, 32, 8, 8, lambda L, e: 8 * (e // 4) + 4 * (L // 16) + e % 4, lambda L, e: e + 8 * (L // 16)),
    "wmma_gfx1250": (16, 16, 32, 32, 16, 8,
                     lambda L, e: 8 * (L // 16) + e if e < 8 else 16 + 8 * (L // 16) + e - 8,
                     lambda L, e: e + 8 * (L // 16)),
    # the integer instructions' own layouts (their operands are bytes: one element per byte)
    "mfma_32x32x16": (32, 32, 16, 64, 8, 16, lambda L, e: 8 * (L // 32) + e,
                      lambda L, e: 8 * (e // 4) + 4 * (L // 32) + e % 4),
    "wmma_gfx12_iu8": (16, 16, 16, 32, 8, 8, lambda L, e: 8 * (L // 16) + e, lambda L, e: e + 8 * (L // 16)),
}


def fragments(kind, a, b, c):
    """Per-lane operand and accumulator vectors of A (M x K), B (K x N), C (M x N)."""
    m, n, _, wave, length, acc, a_k, c_row = LAYOUTS[kind]
    fa = np.array([[a[L % m, a_k(L, e)] for e in range(length)] for L in range(wave)])
    fb = np.array([[b[a_k(L, e), L % n] for e in range(length)] for L in range(wave)])
    fc = np.array([[c[c_row(L, e), L % n] for e in range(acc)] for L in range(wave)])
    return fa, fb, fc


def mma_by_fragments(kind, fa, fb, fc):
    """D fragments from A, B, C fragments: gather the matrices back by the layout, D = C + A B."""
    m, n, k, wave, length, acc, a_k, c_row = LAYOUTS[kind]
    a, b, c = np.zeros((m, k)), np.zeros((k, n)), np.zeros((m, n))
    for L in range(wave):
        for e in range(length):
            a[L % m, a_k(L, e)] = fa[L, e]
            b[a_k(L, e), L % n] = fb[L, e]
        for e in range(acc):
            c[c_row(L, e), L % n] = fc[L, e]
    d = gemm(a, b, c)
    return np.array([[d[c_row(L, e), L % n] for e in range(acc)] for L in range(wave)])


def witness_fills(spec):
    """The element kind of each buffer's initial values in a witness run: c is f32."""
    return {"a": spec["dtype"], "b": spec["dtype"], "c": "f32"}


def sampled_outputs(spec, launch):
    """c's reference at the elements a witness run wrote (a tile of C is a workgroup's): each from
    its row of a and column of b (and its initial value when accumulating), read from the fill."""
    n, k, dtype = launch["args"]["n"], launch["args"]["k"], spec["dtype"]

    def want(indices):
        indices = np.asarray(indices, dtype=np.int64)
        rows, row_at = np.unique(indices // n, return_inverse=True)
        cols, col_at = np.unique(indices % n, return_inverse=True)
        a = view_values(launch, "a", dtype, rows[:, None] * k + np.arange(k)).reshape(len(rows), k)
        b = view_values(launch, "b", dtype, np.arange(k)[:, None] * n + cols).reshape(k, len(cols))
        c = view_values(launch, "c", "f32", indices) if spec["accumulate"] else 0.0
        product = gemm(a, b)[row_at, col_at] + c
        scale = (np.abs(a) @ np.abs(b))[row_at, col_at] + np.abs(c)
        return product.astype(np.float32), scale
    return [Sampled("c", "f32", want, RTOL["f32"])]


__all__ = ["gemm", "LAYOUTS", "fragments", "mma_by_fragments", "round_to", "sampled_outputs", "witness_fills"]


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Every input in opposite pairs along its last axis: each odd column of A x B is exactly the
    negation of the one before, so a column read from a neighbour or a lost sign shows."""
    return ("cancelling",)


# The engine's contract limit of k (gemm_core MAX_K): its m chunks are sized by a's row of tiles at
# that k, the one view of 32-bit offsets (c and the epilogue's m x n views take i64 offsets).
CONTRACT_MAX_K = 16384


def gemm_contract(spec, element):
    """(sizes, lowered buffer range) of a two-tile-by-two case: m, n, k in tiles, and the range
    under which the engine's plan runs m one tile row per chunk (two chunks)."""
    _, buffer_range = two_chunk_range(1, [CONTRACT_MAX_K * element * spec["tile_m"]])
    return {"m_tiles": 2, "n_tiles": 2, "k_tiles": 2}, buffer_range


def plan(spec, arch, rng):
    m, n, k, dtype = 2 * spec["tile_m"], 2 * spec["tile_n"], 2 * spec["tile_k"], spec["dtype"]
    require_small(max(m * k, k * n, m * n), m * n * k, "the gemm problem")
    a, b = random_values(rng, (m, k), dtype), random_values(rng, (k, n), dtype)
    c = random_values(rng, (m, n), "f32") if spec["accumulate"] else None
    want = gemm(a, b, c)
    scale = np.abs(a) @ np.abs(b) + (np.abs(c) if c is not None else 0.0)
    buffers = {"a": to_memory(a, dtype), "b": to_memory(b, dtype),
               "c": c.copy() if c is not None else np.full((m, n), np.nan, dtype=np.float32)}
    block = spec["waves"] * arch.wave_size
    sizes, buffer_range = gemm_contract(spec, ELEMENT_BYTES[dtype])
    return Case(spec, (n // spec["tile_n"], m // spec["tile_m"]), block, buffers, {"n": n, "k": k},
                [Output("c", "f32", want.reshape(-1), scale.reshape(-1), RTOL["f32"])],
                buffer_range=buffer_range, sizes=sizes)

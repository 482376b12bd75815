"""numpy reference for the gemm_int8 family: c = out_dtype(f32(a @ b_t^T) * row_scale[i] *
col_scale[j]), replaying the kernel's f32 steps exactly: the i32 sums are exact (no wrap below
k = 131072, as every |a b| <= 16384, and the plans' k is at most 1024, so |sum| <= 2^24; here they
are f64 products, the BLAS's, exact in any order while k < 2^39, each sum then an int64),
f32(acc) rounds to nearest even, each product is one f32 multiply (row scale first, then column
scale) and the result is rounded once to f16 or bf16. So c is compared bit for bit, and so are the
raw accumulators of acc_out.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import Case, Output, nan_memory, random_values, require_small, round_to, to_memory
from witness import Sampled, view_values
from .gemm_mma import gemm_contract


def gemm_int8(a, b_t, row_scale, col_scale, out_dtype):
    """(c as out_dtype values in f32, acc as i32) of a (m x k) and b_t (n x k) integer values."""
    acc = (np.asarray(a, dtype=np.float64) @ np.asarray(b_t, dtype=np.float64).T).astype(np.int64)
    x = acc.astype(np.float32) * np.asarray(row_scale, dtype=np.float32)[:, None]
    x = x * np.asarray(col_scale, dtype=np.float32)[None, :]
    with np.errstate(over="ignore"):  # past f16's range the rounding gives inf, as the kernel's
        return round_to(x, out_dtype), acc.astype(np.int32)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Rows of a and of b_t all -128 or all 127 (plans.py row_ends), at a k of ENDS_K: every sum
    is k x 16384, k x -16256 or k x 16129, the accumulators' largest magnitudes."""
    return ("row_ends",)


# The k of the row_ends case: 1024 x 16384 = 2^24, the largest sum of the plans (and the largest
# integer up to which every i32 is an f32); far below a wrap (k = 131072).
ENDS_K = 1024
# The scales' range: a sum of at most 2^24 times two scales of at most 2^-8 stays below f16's
# largest finite value (2^24 x 2^-16 = 256).
SCALE_LOW, SCALE_HIGH = 2.0 ** -12, 2.0 ** -8


def int8_values(rng, shape):
    """Integers in [-128, 127]: uniform for the random set, else shaped by the case's set."""
    if rng.inputs == "random":
        return rng.integers(-128, 128, size=shape)
    return random_values(rng, shape, "f32", -128.0, 127.0).astype(np.int64)


def plan(spec, arch, rng):
    """Two tiles each way (two m chunks under the lowered range), two k steps (row_ends: ENDS_K
    rounded up to tile_k); the scales positive f32 in [2^-12, 2^-8]."""
    tile_m, tile_n, tile_k = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    k = 2 * tile_k if rng.inputs == "random" else -(-ENDS_K // tile_k) * tile_k
    m, n, out = 2 * tile_m, 2 * tile_n, spec["out_dtype"]
    require_small(max(m * k, k * n, m * n), m * n * k, "the gemm_int8 problem")
    a, b_t = int8_values(rng, (m, k)), int8_values(rng, (n, k))
    row_scale = round_to(rng.uniform(SCALE_LOW, SCALE_HIGH, size=m), "f32")
    col_scale = round_to(rng.uniform(SCALE_LOW, SCALE_HIGH, size=n), "f32")
    c, acc = gemm_int8(a, b_t, row_scale, col_scale, out)
    buffers = {"a": to_memory(a, "i8"), "b_t": to_memory(b_t, "i8"), "row_scale": row_scale.copy(),
               "col_scale": col_scale.copy(), "c": nan_memory((m, n), out)}
    outputs = [Output("c", out, c.reshape(-1), exact=True)]
    if spec["acc_out"]:
        buffers["acc"] = nan_memory((m, n), "i32")
        outputs.append(Output("acc", "i32", acc.reshape(-1), exact=True))
    sizes, buffer_range = gemm_contract(spec, 1)
    sizes["k_tiles"] = k // tile_k
    return Case(spec, (n // tile_n, m // tile_m), spec["waves"] * arch.wave_size, buffers, {"n": n, "k": k},
                outputs, buffer_range=buffer_range, sizes=sizes)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def witness_fills(spec):
    """a and b_t hold bytes (the u8 fill, read as signed i8 values), the scales f32 values, c
    out_dtype and acc i32."""
    return {"a": "u8", "b_t": "u8", "row_scale": "f32", "col_scale": "f32", "c": spec["out_dtype"], "acc": "i32"}


def signed_bytes(values):
    """u8 fill values as the signed bytes the kernel reads."""
    return (np.asarray(values, dtype=np.int64) + 128) % 256 - 128


def sampled_outputs(spec, launch):
    """c's (and acc's) reference at the elements a witness run wrote (a tile of C is a workgroup's),
    each from its row of a and of b_t and its two scales, read from the fills; exact, as the lane's."""
    n, k, out = launch["args"]["n"], launch["args"]["k"], spec["out_dtype"]

    def outputs(indices):
        indices = np.asarray(indices, dtype=np.int64)
        rows, row_at = np.unique(indices // n, return_inverse=True)
        cols, col_at = np.unique(indices % n, return_inverse=True)
        a = signed_bytes(view_values(launch, "a", "u8", rows[:, None] * k + np.arange(k)))
        b_t = signed_bytes(view_values(launch, "b_t", "u8", cols[:, None] * k + np.arange(k)))
        row_scale = view_values(launch, "row_scale", "f32", rows)
        col_scale = view_values(launch, "col_scale", "f32", cols)
        c, acc = gemm_int8(a.reshape(len(rows), k), b_t.reshape(len(cols), k), row_scale, col_scale, out)
        return c[row_at, col_at], acc[row_at, col_at]

    sampled = [Sampled("c", out, lambda indices: (outputs(indices)[0], None), 0.0)]
    if spec["acc_out"]:
        sampled.append(Sampled("acc", "i32", lambda indices: (outputs(indices)[1], None), 0.0))
    return sampled

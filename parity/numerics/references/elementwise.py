"""numpy reference for the elementwise family: y = op(a [, b [, c]]) computed in f64 from the inputs
(which hold values of their dtype), rounded once to the dtype, as the kernel computes in f32 and
rounds once (the f64 -> f32 path and the kernel's f32 arithmetic differ by at most an f32 ulp,
and only for fma and silu).

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, EXP_RTOL, Output, RTOL, nan_memory, two_chunk_range, random_values,
                   require_small, round_to, to_memory)
from witness import Sampled, view_values


ARITY = {"add": 2, "sub": 2, "mul": 2, "max": 2, "min": 2, "fma": 3, "relu": 1, "silu": 1}


def elementwise(op, inputs, dtype):
    """inputs: f32 arrays holding values of `dtype`; the result as f32 values of `dtype`."""
    x = [np.asarray(v, dtype=np.float64) for v in inputs]
    if op == "add":
        y = x[0] + x[1]
    elif op == "sub":
        y = x[0] - x[1]
    elif op == "mul":
        y = x[0] * x[1]
    elif op == "max":
        y = np.fmax(x[0], x[1])
    elif op == "min":
        y = np.fmin(x[0], x[1])
    elif op == "fma":
        y = x[0] * x[1] + x[2]
    elif op == "relu":
        y = np.fmax(x[0], 0.0)
    elif op == "silu":
        y = x[0] / (1.0 + np.exp(-x[0]))
    else:
        raise ValueError(f"unknown elementwise op '{op}'")
    return round_to(y.astype(np.float32), dtype)


# ---- the numerics plan --------------------------------------------------------------------
EXACT_OPS = ("max", "min", "relu")


def input_sets(spec):
    """max, min and relu are exact at the dtype's ends; a sum or difference of opposite values
    cancels exactly."""
    if spec["op"] in EXACT_OPS:
        return ("extremes",)
    return ("cancelling",) if spec["op"] in ("add", "sub", "fma") else ()


def plan(spec, arch, rng):
    block, vec, dtype = spec["block"], spec["vec"], spec["dtype"]
    grid = 2
    # two grid-stride trips for some lanes, one for others, and an n % vec tail of vec - 1
    case = (2 * grid * block + block // 2 + 1) * vec + (vec - 1)
    # run as two chunks (a lowered buffer range): the first a whole case, the second a workgroup
    # and a half of vectors and the tail, which the clamped grid covers (two workgroups): a lane
    # starts exactly at the last whole vector's end and meets the loop's guard there
    chunk, buffer_range = two_chunk_range(case, [ELEMENT_BYTES[dtype]])
    n = chunk + (block + block // 2) * vec + vec - 1
    require_small(n, 0, "the elementwise problem")
    names = ("a", "b", "c")[:ARITY[spec["op"]]]
    inputs = [random_values(rng, n, dtype) for _ in names]
    buffers = {name: to_memory(v, dtype) for name, v in zip(names, inputs)}
    buffers["y"] = nan_memory(n, dtype)
    rtol = RTOL[dtype] + (EXP_RTOL if spec["op"] == "silu" else 0.0)
    want = elementwise(spec["op"], inputs, dtype)
    return Case(spec, (grid,), block, buffers, {"n": n}, [Output("y", dtype, want, None, rtol, exact=spec["op"] in EXACT_OPS)],
                buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def sampled_outputs(spec, launch):
    """y's reference at the elements a witness run wrote, from the inputs' page-fill values
    (witness.Sampled, for witness.compare_sampled)."""
    dtype = spec["dtype"]
    names = ("a", "b", "c")[:ARITY[spec["op"]]]
    rtol = RTOL[dtype] + (EXP_RTOL if spec["op"] == "silu" else 0.0)

    def want(indices):
        inputs = [view_values(launch, name, dtype, indices) for name in names]
        return elementwise(spec["op"], inputs, dtype), None
    return [Sampled("y", dtype, want, rtol)]

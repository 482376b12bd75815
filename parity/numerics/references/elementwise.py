"""numpy reference for the elementwise family: y = op(a [, b [, c]]) computed in f64 from the inputs
(which hold values of their dtype), rounded once to the dtype, as the kernel computes in f32 and
rounds once (the f64 -> f32 path and the kernel's f32 arithmetic differ by at most an f32 ulp,
and only for fma and silu)."""
import numpy as np

from .reduce_rows import round_to

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

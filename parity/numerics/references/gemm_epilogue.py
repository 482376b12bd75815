"""numpy reference for the gemm_epilogue family: c = act(a @ b + bias) + residual, computed in f64
from the inputs (which hold values of their dtype) and rounded once to out_dtype, as the kernel
keeps every step in f32 and rounds once (its f32 steps differ from f64 by a few f32 ulps, which
the plan's tolerance covers). gelu_tanh is the tanh approximation of gelu, written with tanh
itself here, not in the kernel's exp form, so the rewrite is checked too.
"""
import numpy as np

from .reduce_rows import round_to

ACTIVATIONS = ("none", "relu", "gelu_tanh", "silu")


def activate(activation, x):
    """The activation in f64."""
    x = np.asarray(x, dtype=np.float64)
    if activation == "none":
        return x
    if activation == "relu":
        return np.fmax(x, 0.0)
    if activation == "silu":
        with np.errstate(over="ignore"):
            return x / (1.0 + np.exp(-x))
    if activation == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    raise ValueError(f"unknown activation '{activation}'")


def gemm_epilogue(a, b, bias, residual, activation, out_dtype):
    """a (m x k) @ b (k x n) + bias (n, or None), activated, + residual (m x n, or None); out_dtype values."""
    y = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)[None, :]
    y = activate(activation, y)
    if residual is not None:
        y = y + np.asarray(residual, dtype=np.float64)
    return round_to(y.astype(np.float32), out_dtype)


__all__ = ["ACTIVATIONS", "activate", "gemm_epilogue", "round_to"]

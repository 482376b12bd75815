"""numpy reference for the gemm_epilogue family: c = act(a @ b + bias) + residual, computed in f64
from the inputs (which hold values of their dtype) and rounded once to out_dtype, as the kernel
keeps every step in f32 and rounds once (its f32 steps differ from f64 by a few f32 ulps, which
the plan's tolerance covers). gelu_tanh is the tanh approximation of gelu, written with tanh
itself here, not in the kernel's exp form, so the rewrite is checked too.

fp8 / bf8 inputs are bytes in one of the four 8-bit float formats the matrix cores read, decoded
here from their definitions: gfx942 reads the FNUZ variants (E4M3 bias 8, E5M2 bias 16; 0x80 is
the only NaN, there is no infinity and no negative zero), gfx950 OCP's (E4M3FN bias 7, whose only
NaNs are S.1111.111 and which has no infinity; E5M2 bias 15, IEEE-like with infinities and NaNs).
"""
import numpy as np

from .reduce_rows import round_to

ACTIVATIONS = ("none", "relu", "gelu_tanh", "silu")
# format -> (exponent bits, mantissa bits, bias)
FP8_FORMATS = {"e4m3_fnuz": (4, 3, 8), "e5m2_fnuz": (5, 2, 16), "e4m3_ocp": (4, 3, 7), "e5m2_ocp": (5, 2, 15)}


def fp8_value(byte, fmt):
    """The value of one byte in an 8-bit float format (NaN and infinities as the format has them)."""
    exponent_bits, mantissa_bits, bias = FP8_FORMATS[fmt]
    sign = -1.0 if byte & 0x80 else 1.0
    exponent = (byte & 0x7F) >> mantissa_bits
    mantissa = byte & ((1 << mantissa_bits) - 1)
    top = (1 << exponent_bits) - 1
    if fmt.endswith("_fnuz") and byte == 0x80:
        return float("nan")
    if fmt == "e4m3_ocp" and exponent == top and mantissa == (1 << mantissa_bits) - 1:
        return float("nan")
    if fmt == "e5m2_ocp" and exponent == top:
        return sign * float("inf") if mantissa == 0 else float("nan")
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - mantissa_bits)
    return sign * (1 + mantissa / 2.0 ** mantissa_bits) * 2.0 ** (exponent - bias)


def decode_fp8(data, fmt):
    """f64 values of an array of bytes in `fmt`."""
    table = np.array([fp8_value(byte, fmt) for byte in range(256)])
    return table[np.asarray(data, dtype=np.uint8)]


def random_fp8(rng, shape, fmt, limit=32.0):
    """Bytes of finite values of `fmt` with magnitude at most `limit`, drawn evenly over the codes."""
    codes = np.array([byte for byte in range(256)
                      if np.isfinite(fp8_value(byte, fmt)) and abs(fp8_value(byte, fmt)) <= limit], dtype=np.uint8)
    return rng.choice(codes, size=shape)


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


__all__ = ["ACTIVATIONS", "FP8_FORMATS", "activate", "decode_fp8", "fp8_value", "gemm_epilogue", "random_fp8",
           "round_to"]

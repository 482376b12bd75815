"""numpy reference for the gemm_epilogue family: c = act(a @ b + bias) + residual, computed in f64
from the inputs (which hold values of their dtype) and rounded once to out_dtype, as the kernel
keeps every step in f32 and rounds once (its f32 steps differ from f64 by a few f32 ulps, which
the plan's tolerance covers). gelu_tanh is the tanh approximation of gelu, written with tanh
itself here, not in the kernel's exp form, so the rewrite is checked too.

fp8 / bf8 inputs are bytes in one of the four 8-bit float formats the matrix cores read, decoded
here from their definitions: gfx942 reads the FNUZ variants (E4M3 bias 8, E5M2 bias 16; 0x80 is
the only NaN, there is no infinity and no negative zero), gfx950 OCP's (E4M3FN bias 7, whose only
NaNs are S.1111.111 and which has no infinity; E5M2 bias 15, IEEE-like with infinities and NaNs).

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, EXP_RTOL, Output, RTOL, nan_memory, random_values, require_small, round_to,
                   to_memory)
from .gemm_mma import gemm_contract


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


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Every input in opposite pairs along its last axis: each odd column of A x B is exactly the
    negation of the one before, so a column read from a neighbour or a lost sign shows."""
    return ("cancelling",)


# the largest slope of an epilogue activation (gelu_tanh's is 1.13, silu's 1.10): an error before
# the activation grows by at most this much
ACTIVATION_SLOPE = 1.2


FP8_LAYOUTS = {"fp8": "e4m3", "bf8": "e5m2"}


def gemm_operands(spec, arch, rng, m, n, k):
    """(a, b as values, their buffers): 16-bit a and b, or fp8 / bf8 bytes of a and of b transposed
    (b_t) in the variant of the format the arch's mfma reads (its fp8_format, from the engine's hello)."""
    dtype = spec["dtype"]
    if dtype in FP8_LAYOUTS:
        if not arch.fp8_format:
            raise ValueError(f"the engine's hello gives {arch.name} no fp8_format, so the {dtype} inputs cannot be "
                             f"encoded (docs/protocol.md, arch_facts)")
        fmt = f"{FP8_LAYOUTS[dtype]}_{arch.fp8_format}"
        a_bytes, bt_bytes = random_fp8(rng, (m, k), fmt), random_fp8(rng, (n, k), fmt)
        a, b = decode_fp8(a_bytes, fmt), decode_fp8(bt_bytes, fmt).T
        return a, b, {"a": a_bytes, "b_t": bt_bytes}
    a, b = random_values(rng, (m, k), dtype), random_values(rng, (k, n), dtype)
    return a, b, {"a": to_memory(a, dtype), "b": to_memory(b, dtype)}


def plan(spec, arch, rng):
    """gemm_mma's shape (two tiles each way, two k steps); bias, residual and c as the spec asks.
    The accumulation scale goes through the activation's slope; exp-based activations get the
    exp slack (and, being several f32 steps, a few f32 ulps more)."""
    m, n, k, out = 2 * spec["tile_m"], 2 * spec["tile_n"], 2 * spec["tile_k"], spec["out_dtype"]
    require_small(max(m * k, k * n, m * n), m * n * k, "the gemm_epilogue problem")
    a, b, buffers = gemm_operands(spec, arch, rng, m, n, k)
    bias = random_values(rng, n, "f32") if spec["bias"] else None
    residual = random_values(rng, (m, n), out) if spec["residual"] else None
    want = gemm_epilogue(a, b, bias, residual, spec["activation"], out)
    scale = ACTIVATION_SLOPE * (np.abs(a) @ np.abs(b) + (np.abs(bias)[None, :] if bias is not None else 0.0))
    scale = scale + (np.abs(residual) if residual is not None else 0.0)
    if bias is not None:
        buffers["bias"] = bias.copy()
    if residual is not None:
        buffers["residual"] = to_memory(residual, out)
    buffers["c"] = nan_memory((m, n), out)
    rtol = RTOL[out] + (EXP_RTOL + RTOL["f32"] if spec["activation"] in ("gelu_tanh", "silu") else 0.0)
    block = spec["waves"] * arch.wave_size
    element = 1 if spec["dtype"] in FP8_LAYOUTS else ELEMENT_BYTES[spec["dtype"]]
    sizes, buffer_range = gemm_contract(spec, element)
    return Case(spec, (n // spec["tile_n"], m // spec["tile_m"]), block, buffers, {"n": n, "k": k},
                [Output("c", out, want.reshape(-1), scale.reshape(-1), rtol)], buffer_range=buffer_range, sizes=sizes)

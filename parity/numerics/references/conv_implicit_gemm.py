"""numpy reference for the conv_implicit_gemm family (NHWC convolution as an implicit GEMM, its
forward and its data gradient).

`conv_fwd` is the definition of the forward convolution, tap by tap: each filter tap (ry, sx)
adds the strided, dilated window of the zero-padded input times the tap's c x k_out matrix.
`conv_dgrad` is its adjoint written the other way round, as a scatter: each tap adds dy times the
tap's matrix transposed into the padded input positions it came from, so the kernel's gather
formulation (which dy position a dx position reads at each tap, and which taps read none under a
stride) is checked against an independent statement of the same sum. Both accumulate in f64 and
round once to f32; the tolerance is the gemm references' (RTOL["f32"] of the magnitude sum).

The plan runs two chunks of images (the engine's plan cuts the batch under a lowered buffer range):
the first of enough images that its rows pass one tile and a half, the second of one image, so a
tile straddles images and the last tile of each chunk is partial wherever the rows per image are
not a multiple of tile_m. y / dx start as NaN: an output the kernel does not store fails.
"""
import numpy as np

from plans import Case, ELEMENT_BYTES, Output, RTOL, ceil_div, random_values, require_small, to_memory, \
    two_chunk_range


def output_extent(spec):
    """(ho, wo) of the forward convolution."""
    def extent(size, pad, dil, taps, stride):
        return (size + 2 * pad - dil * (taps - 1) - 1) // stride + 1
    return (extent(spec["h"], spec["pad_h"], spec["dil_h"], spec["r"], spec["stride_h"]),
            extent(spec["w"], spec["pad_w"], spec["dil_w"], spec["s"], spec["stride_w"]))


def windows(spec, extent):
    """Per tap (ry, sx): the padded input's rows and columns the tap meets, as slices."""
    ho, wo = extent
    for ry in range(spec["r"]):
        for sx in range(spec["s"]):
            rows = slice(ry * spec["dil_h"], ry * spec["dil_h"] + spec["stride_h"] * (ho - 1) + 1, spec["stride_h"])
            cols = slice(sx * spec["dil_w"], sx * spec["dil_w"] + spec["stride_w"] * (wo - 1) + 1, spec["stride_w"])
            yield ry, sx, rows, cols


def conv_fwd(spec, x, weights):
    """y [n, ho, wo, k_out] of x [n, h, w, c] and weights [r, s, c, k_out] (f64)."""
    padded = np.pad(np.asarray(x, dtype=np.float64),
                    ((0, 0), (spec["pad_h"],) * 2, (spec["pad_w"],) * 2, (0, 0)))
    ho, wo = output_extent(spec)
    y = np.zeros((x.shape[0], ho, wo, weights.shape[3]))
    for ry, sx, rows, cols in windows(spec, (ho, wo)):
        y += padded[:, rows, cols, :] @ np.asarray(weights[ry, sx], dtype=np.float64)
    return y


def conv_dgrad(spec, dy, weights):
    """dx [n, h, w, c] of dy [n, ho, wo, k_out] and the forward's weights [r, s, c, k_out] (f64): each
    tap scatters dy times its matrix transposed back into the padded positions it read."""
    n, h, w = dy.shape[0], spec["h"], spec["w"]
    padded = np.zeros((n, h + 2 * spec["pad_h"], w + 2 * spec["pad_w"], weights.shape[2]))
    for ry, sx, rows, cols in windows(spec, output_extent(spec)):
        padded[:, rows, cols, :] += np.asarray(dy, dtype=np.float64) @ np.asarray(weights[ry, sx], dtype=np.float64).T
    return padded[:, spec["pad_h"]:spec["pad_h"] + h, spec["pad_w"]:spec["pad_w"] + w, :]


def input_sets(spec):
    """positive: every input above zero, so nothing cancels: a padding position read as a neighbour's
    value instead of zero, or a tap between two strided outputs read in dgrad, always adds a term
    of the output's own size."""
    return ("positive",)


def batch_split(spec):
    """(first chunk's images, last chunk's images): the first's rows pass a tile and a half, and
    it holds two images at least, so a launch's image index is not 0 in every row (a row's image
    read as the batch's last one, or an image offset one off, shows only there: each chunk's
    views start at its first image)."""
    ho, wo = output_extent(spec)
    rows = ho * wo if spec["direction"] == "fwd" else spec["h"] * spec["w"]
    return max(2, ceil_div(3 * spec["tile_m"] // 2, rows)), 1


def plan(spec, arch, rng):
    dtype, fwd = spec["dtype"], spec["direction"] == "fwd"
    ho, wo = output_extent(spec)
    image = (spec["h"], spec["w"], spec["c"])
    gradient = (ho, wo, spec["k_out"])
    a_shape, out_shape = (image, gradient) if fwd else (gradient, image)
    a_bytes, out_bytes = int(np.prod(a_shape)) * ELEMENT_BYTES[dtype], int(np.prod(out_shape)) * 4
    first, last = batch_split(spec)
    chunk, buffer_range = two_chunk_range(first, [a_bytes, out_bytes])
    batch = chunk + last
    taps = spec["r"] * spec["s"]
    require_small(batch * max(np.prod(a_shape), np.prod(out_shape)),
                  batch * np.prod(out_shape) * taps * (spec["c"] if fwd else spec["k_out"]), "the convolution")
    a = random_values(rng, (batch,) + a_shape, dtype)
    weights = random_values(rng, (spec["r"], spec["s"], spec["c"], spec["k_out"]), dtype)
    convolve = conv_fwd if fwd else conv_dgrad
    want = convolve(spec, a, weights)
    scale = convolve(spec, np.abs(a), np.abs(weights))
    # dgrad reads each tap's matrix transposed: wt [r, s, k_out, c]
    wt = weights if fwd else np.ascontiguousarray(weights.transpose(0, 1, 3, 2))
    out_name = "y" if fwd else "dx"
    buffers = {"x" if fwd else "dy": to_memory(a, dtype), "wt": to_memory(wt, dtype),
               out_name: np.full((batch,) + out_shape, np.nan, dtype=np.float32)}
    rows = batch * (ho * wo if fwd else spec["h"] * spec["w"])
    n_columns = spec["k_out"] if fwd else spec["c"]
    grid = (n_columns // spec["tile_n"], ceil_div(rows, spec["tile_m"]))
    return Case(spec, grid, spec["waves"] * arch.wave_size, buffers, {"batch": batch},
                [Output(out_name, "f32", want.astype(np.float32).reshape(-1), scale.reshape(-1), RTOL["f32"])],
                buffer_range=buffer_range, sizes={"batch": batch})

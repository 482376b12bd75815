"""numpy references for the transpose_lds family: the definition b = a^T, and a replay of the
kernel's strips through a padded LDS array (the phase-1 and phase-2 index maps of the family)."""
import numpy as np


def transpose(a):
    return np.ascontiguousarray(np.asarray(a).T)


def transpose_via_strips(a, tile, tiles, pad, vec):
    """Every workgroup's strip: a -> padded LDS rows -> b, with the family's index arithmetic."""
    rows, cols = a.shape
    width, pitch = tile * tiles, tile * tiles + pad
    flat_a, b = a.reshape(-1), np.zeros(rows * cols, dtype=a.dtype)
    for gy in range(-(-rows // tile)):
        for gx in range(-(-cols // width)):
            row0, col0 = gy * tile, gx * width
            strip = np.zeros(tile * pitch, dtype=a.dtype)
            for i in range(tile * width // vec):
                r, c = i // (width // vec), (i % (width // vec)) * vec
                if row0 + r < rows and col0 + c < cols:
                    source = (row0 + r) * cols + col0 + c
                    strip[r * pitch + c:r * pitch + c + vec] = flat_a[source:source + vec]
            for j in range(tile * width):
                r, c = j % tile, j // tile
                if row0 + r < rows and col0 + c < cols:
                    b[(col0 + c) * rows + row0 + r] = strip[r * pitch + c]
    return b.reshape(cols, rows)

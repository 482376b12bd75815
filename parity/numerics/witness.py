"""Witness runs at real size (docs/numerics.md, "Witness runs at real size").

A launch description (a dict, independent of the plan text) names one kernel, its grid (workgroups
per dim, up to 2^32-1 work-items per dim) and block, a value per integer param, per pointer param a
view of a buffer of up to 2^40 bytes, and the workgroups to run (default the first and the last).
The interpreter (`kemit_cpp.witness`) and the executor (`Checker.witness`, the WITNESS verb of
`kemit_llcheckN`) run those workgroups over lazily materialised buffers: pages made on first touch,
every element's initial value `fill_values` of (seed, buffer name, element index). Both answer the
same report: per workgroup ok or its first failure, and the pages the run wrote.

This module is the Python side of that contract: the fill function (the same as
tooling/include/kemit/tooling/paged_memory.h, checked by tests/numerics/test_witness.py), the
written elements read back from a report, and the comparison of the sampled outputs with a family's
reference of those outputs alone (`sampled_outputs` in references/<family>.py). It imports no engine
module: the numerics worker hands `kemit_cpp` in.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np

from plans import Output, compare

M64 = (1 << 64) - 1
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "u8": 1}
MEMORY_DTYPE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32, "u8": np.uint8}


def mix64(x):
    """SplitMix64's finaliser on uint64 arrays (wrapping, as in C++)."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def name_hash(name):
    """FNV-1a over the name's UTF-8 bytes."""
    h = 0xcbf29ce484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001b3) & M64
    return h


def buffer_key(seed, name):
    return int(mix64(np.uint64((seed ^ name_hash(name)) & M64)))


def fill_values(seed, name, fill, indices):
    """The initial values of elements `indices` of buffer `name`: k / 64 for k in [-128, 128) as f64
    (f32, f16, bf16: exact in each), k for i32, the byte for u8."""
    h = mix64(np.uint64(buffer_key(seed, name)) ^ np.asarray(indices, dtype=np.uint64))
    top = (h >> np.uint64(56)).astype(np.int64)
    if fill == "u8":
        return top
    k = top - 128
    return k if fill == "i32" else k / 64.0


def view_of(launch, param):
    """(buffer, offset, bytes) of the view bound to `param`: by default all of the buffer."""
    view = launch["args"][param]
    offset = view.get("offset", 0)
    return view["buffer"], offset, view.get("bytes", launch["buffers"][view["buffer"]]["bytes"] - offset)


def view_values(launch, param, fill, view_indices):
    """The initial values of elements `view_indices` of the view bound to `param`."""
    buffer, offset, _ = view_of(launch, param)
    first = offset // ELEMENT_BYTES[fill]
    return fill_values(launch.get("seed", 0), buffer, fill, np.asarray(view_indices, dtype=np.int64) + first)


def written_elements(report, launch, param, dtype):
    """(view indices, values in memory dtype) of the elements of `param`'s view the run wrote whole."""
    buffer, first, view_bytes = view_of(launch, param)
    size = ELEMENT_BYTES[dtype]
    page_bytes = report["page_bytes"]
    indices, values = [], []
    for page, (data, bits) in sorted(report["buffers"][buffer]["written"].items()):
        byte_written = np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little")[:page_bytes].astype(bool)
        whole = byte_written.reshape(-1, size).all(axis=1)
        local = np.flatnonzero(whole)
        byte_address = page * page_bytes + local * size
        inside = (byte_address >= first) & (byte_address < first + view_bytes)
        indices.append((byte_address[inside] - first) // size)
        values.append(np.frombuffer(data, dtype=MEMORY_DTYPE[dtype])[local[inside]])
    if not indices:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=MEMORY_DTYPE[dtype])
    return np.concatenate(indices).astype(np.int64), np.concatenate(values)


@dataclass
class Sampled:
    """A family's reference of one output at the elements a witness run wrote: `want_of(view
    indices)` gives (want, scale) as plans.Output holds them; rtol and atol as the lane's."""
    param: str
    dtype: str
    want_of: Callable
    rtol: float
    atol: float = 0.0


def row_sampled(launch, indices, cols, fill, outputs_of_rows):
    """(want, scale) at element `indices` of a rows x cols output, from the whole rows of the input
    `x` they fall in: outputs_of_rows(x of those rows, row numbers) -> (want, scale or None), each
    of shape (rows, cols)."""
    indices = np.asarray(indices, dtype=np.int64)
    rows, at = np.unique(indices // cols, return_inverse=True)
    x = view_values(launch, "x", fill, rows[:, None] * cols + np.arange(cols)).astype(np.float32)
    want, scale = outputs_of_rows(x.reshape(len(rows), cols), rows)
    columns = indices % cols
    return want[at, columns], None if scale is None else scale[at, columns]


def compare_sampled(report, launch, sampled):
    """Each Sampled output compared over the elements the run wrote: a list of plans.compare
    records (empty: all within tolerance; first_bad_index a view index), and the count of elements
    compared per param."""
    mismatches, counts = [], {}
    for output in sampled:
        indices, got = written_elements(report, launch, output.param, output.dtype)
        want, scale = output.want_of(indices)
        counts[output.param] = len(indices)
        record = compare(Output(output.param, output.dtype, want, scale, output.rtol, output.atol), got)
        if record:
            record["first_bad_index"] = int(indices[record["first_bad_index"]])
            mismatches.append(record)
    return mismatches, counts


def pages_touched(report):
    """Pages made over every buffer: what the run's memory is proportional to."""
    return sum(entry["pages"] for entry in report["buffers"].values())

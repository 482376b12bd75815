"""numpy references for the topk_softmax family.

`topk_softmax` is the definition: p = softmax(x[t, :]) in f64 from the inputs (which hold values
of their dtype), the k experts ranked by the family's tie rule (the larger logit first, equal
logits by the lower index: a stable sort of -x), their p rounded once to f32, or with renormalize
p / (the sum of the k p) rounded once. The indices are exact by that rule and are compared bit
for bit; the weights within the f32 softmax's rounding.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, EXP_RTOL, Output, Peaks, RTOL, SUBNORMAL_STEP,
                   covered_rows, nan_memory, peak_columns, peak_lanes, random_values, require_small, round_to, to_memory,
                   two_chunks_if_small)
from witness import Sampled, view_values

# what an index output holds before the kernel writes it: no expert's index
UNWRITTEN = -1


def ranked(x, k):
    """The k experts of every token (row) by the tie rule: descending logit, equal logits by the
    lower index (a stable sort keeps the lower index first)."""
    return np.argsort(-np.asarray(x, dtype=np.float64), axis=1, kind="stable")[:, :k]


def topk_softmax(x, k, renormalize):
    """(weights f32 [tokens, k], indices i32 [tokens, k]) of the definition, in f64 rounded once."""
    x = np.asarray(x, dtype=np.float64)
    order = ranked(x, k)
    shifted = np.exp(x - x.max(axis=1, keepdims=True))
    p = shifted / shifted.sum(axis=1, keepdims=True)
    weights = np.take_along_axis(p, order, axis=1)
    if renormalize:
        weights = weights / weights.sum(axis=1, keepdims=True)
    return weights.astype(np.float32), order.astype(np.int32)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Exact ties (a row of one value: the first k experts by index), rows all below zero, the
    dtype's largest and smallest values (ties at the top, differences that overflow to -inf),
    a peak per row at a varying lane (a wave step that loses a lane loses the winner), masked
    (-inf) logits where a row has two experts or more (a removed candidate must lose to them), and
    every rank's winner in the last lane of a DPP row of 16 (a step across the rows that reads the
    key or the index one lane off pairs two rows' candidates there, so that lane keeps or removes
    the wrong expert), and the k - 1 winners in the upper half of the lanes with the k-th in the
    lower half (split_winners), a peak per row at the lane a step of stride 1, 2, 4, ... reads
    into lane 0 (a step that reads the winner's key from that lane and its index from the next
    writes another expert's index), and a sawtooth of period 16 (every row of 16 lanes the same
    logits, each row's best in its last lane: a step across rows that reads its own row there
    removes that row's best in that lane)."""
    return ("ties", "negative", "extremes", "peaks") + (("masked",) if spec["experts"] >= 2 else ()) + \
        ("row_last_lanes", "split_winners", "step_peaks", "sawtooth")


def split_winners(x, k, wave, token):
    """Row `token` of x (values below 0) with its k winners placed across the halves of the lanes
    that hold experts (expert e in lane e mod wave): the first k - 1 in the upper half, from a lane
    that moves with the token, the k-th in the lower half, in its last lane at the first token and one
    lane lower at each token after (wrapping). A step across the halves
    that reads a lane of the lower half takes that lane's best for the winner, and the lane holding
    it drops it, so the k-th comes out wrong: one run of such a step per rank in every lane."""
    experts = x.shape[0]
    lanes = min(experts, wave)
    half = max(1, lanes // 2)
    upper = [e for e in range(experts) if e % wave >= half]
    start = token % max(1, len(upper))
    upper = upper[start:] + upper[:start]
    last = half - 1 - token % half
    winners = [e for e in upper if e != last][:k - 1]
    winners += [e for e in range(experts) if e not in winners and e != last][:k - 1 - len(winners)]
    for rank, e in enumerate(winners + [last]):
        x[e] = 4.0 - 0.25 * rank
    return x


def plan(spec, arch, rng):
    """The spec's own experts and k; tokens give a second grid-stride trip to some waves and run as
    two chunks (a lowered buffer range), the last a workgroup and a half of tokens. The random set's
    logits lie on a grid of 1/4 in [-4, 4], so ties between experts of different lanes and slots
    come at every rank. A weight p = e / s carries the f32 sum's error relative to itself (scale
    |w|) and exp's (EXP_RTOL)."""
    dtype, experts, k, grid = spec["dtype"], spec["experts"], spec["k"], 2
    per_group = spec["block"] // arch.wave_size
    case = grid * per_group + max(1, per_group // 2)
    tokens, buffer_range = two_chunks_if_small(case, [experts * ELEMENT_BYTES[dtype], k * 4, k * 4], experts,
                                               covered_rows(per_group))
    require_small(tokens * experts, tokens * experts, "the topk_softmax problem")
    peaks = Peaks(peak_columns(tokens, experts, 1, arch.wave_size, arch.wave_size, peak_lanes(rng.inputs)))
    x = random_values(rng, (tokens, experts), dtype, -4.0, 4.0, peaks)
    if rng.inputs == "random":
        x = round_to(np.round(x * 4.0) / 4.0, dtype)
    if rng.inputs == "split_winners":  # the others in [-6, -2], below every winner (4 - (k - 1) / 4 > 0)
        x = round_to(np.stack([split_winners(row / 2 - 4.0, k, arch.wave_size, t) for t, row in enumerate(x)]), dtype)
    weights, indices = topk_softmax(x, k, spec["renormalize"])
    buffers = {"x": to_memory(x, dtype), "weights": nan_memory(tokens * k, "f32"),
               "indices": np.full(tokens * k, UNWRITTEN, dtype=np.int32)}
    return Case(spec, (grid,), spec["block"], buffers, {"tokens": tokens},
                [Output("weights", "f32", weights.reshape(-1), np.abs(weights).reshape(-1), RTOL["f32"] + EXP_RTOL,
                        SUBNORMAL_STEP["f32"]),
                 Output("indices", "i32", indices.reshape(-1), exact=True)], buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def witness_fills(spec):
    """The outputs' element types: f32 weights and i32 indices, whatever the logits' dtype."""
    return {"weights": "f32", "indices": "i32"}


def sampled_outputs(spec, launch):
    """weights' and indices' reference at the elements a witness run wrote, from the whole logits
    of their tokens (x's page-fill values; witness.Sampled, the plan's tolerances)."""
    k = spec["k"]

    def of_tokens(indices, output):
        indices = np.asarray(indices, dtype=np.int64)
        tokens, at = np.unique(indices // k, return_inverse=True)
        columns = tokens[:, None] * spec["experts"] + np.arange(spec["experts"])
        x = view_values(launch, "x", spec["dtype"], columns).astype(np.float32)
        weights, order = topk_softmax(x.reshape(len(tokens), spec["experts"]), k, spec["renormalize"])
        want = (weights if output == "weights" else order)[at, indices % k]
        return want, np.abs(want) if output == "weights" else None
    return [Sampled("weights", "f32", lambda indices: of_tokens(indices, "weights"), RTOL["f32"] + EXP_RTOL,
                    SUBNORMAL_STEP["f32"]),
            Sampled("indices", "i32", lambda indices: of_tokens(indices, "indices"), 0.0)]

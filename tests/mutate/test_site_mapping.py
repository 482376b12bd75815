"""The numerics lane runs a config's small spec, so kemit_mutate mutates there the site that stands
for the drawn site of the config's own text (mutate_ops.apply_like): the op of the same shape, told
apart from others of that shape by its lines of context (the op that feeds it, the branch that
reads it). A compare of one shape can guard a column in one text and a row in the other; the
mutant the numerics lane ran must be the one the report names."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "parity", "mutate"))
import mutate_ops  # noqa: E402

# data/site_mapping_*.ll: two compares of one shape, `icmp ult i32 %x, N`: the first guards a
# column (fed by a mul), the second a row past a tail (fed by an add after a phi); the small text
# has an extra column guard (fed by an add too) before both.
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
REFERENCE, SMALL = (open(os.path.join(DATA, f"site_mapping_{name}.ll"), encoding="utf-8").read()
                    for name in ("reference", "small"))


def test_the_site_of_the_same_context_is_mutated_in_the_small_text():
    sites = mutate_ops.sites("llvm19", REFERENCE, "icmp_predicate")
    drawn = next(k for k, (line, _) in enumerate(sites) if "%r1, 56" in REFERENCE.split("\n")[line])
    _, change = mutate_ops.apply_like("llvm19", SMALL, "icmp_predicate", drawn, REFERENCE)
    assert change["before"].strip() == "%g1 = icmp ult i32 %r1, 8", change
    assert change["mapped"] == "shape" and change["context"] == mutate_ops.CONTEXT_LINES, change
    # the block labels differ (if1 against if8): a label is a name, blanked like a value's
    column = next(k for k, (line, _) in enumerate(sites) if "%c0, 56" in REFERENCE.split("\n")[line])
    _, change = mutate_ops.apply_like("llvm19", SMALL, "icmp_predicate", column, REFERENCE)
    assert change["before"].strip() == "%g0 = icmp ult i32 %c0, 14", change


def test_without_a_site_of_that_shape_the_rank_is_used_and_said():
    sites = mutate_ops.sites("llvm19", REFERENCE, "icmp_predicate")
    other = SMALL.replace("icmp ult", "icmp slt")
    _, change = mutate_ops.apply_like("llvm19", other, "icmp_predicate", len(sites) - 1, REFERENCE)
    assert change["mapped"] == "rank" and "context" not in change, change


def test_the_tail_guard_of_a_streamed_depthwise_dgrad_is_killed_where_the_small_spec_has_it(judge_mutant):
    """config 5 (bf16 5x5, h = w = 56): the flush of the rows past the last dY row, `h + 54 <u 56`
    made `<=`, stores row 56 past the image. The small spec (h 8, w 14) has column guards of the
    same shape too; the numerics lane must run its tail guard, `h + 6 <u 8`, and reads past dx."""
    done, m = judge_mutant("conv_depthwise_dgrad_stream:5@llvm19:icmp_predicate:14")
    small = m["lanes_saw"]["numerics"]
    assert small["mapped"] == "shape" and "icmp ult i32" in small["before"] and ", 8" in small["before"], small
    assert "add nuw nsw i32" in small["neighbours"][0] and small["neighbours"][0].endswith(", 6"), small
    assert m["verdict"] == "KILLED" and "out of bounds of dx" in m["how"], (m["how"], done.stdout[-2000:])

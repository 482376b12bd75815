"""softmax_rows' mutant that only a row masked whole catches: the normalisation 1 / sum of a
one-column row left out (`drop_factor`, config 40 at llvm22). On every row with a finite logit the
sum is exp(x - x) = 1 and nothing changes; on a row of -inf the definition and the kernel give
0 / 0, NaN, and the mutant 0. The dead_rows set (every other row all -inf) shows it; the LLVM lane
passes it. kemit_mutate judges it as a campaign judges it (docs/mutation.md)."""
from conftest import assert_numerics_only_kill


def test_a_left_out_normalisation_shows_on_a_row_masked_whole(judge_mutant):
    _, m = judge_mutant("softmax_rows:40@llvm22:drop_factor:21")
    assert_numerics_only_kill(m, "fmul float %v169, %v163", "fmul float %v169, 1.0", "y")
    assert "inputs dead_rows" in m["how"], m["how"]

"""rmsnorm_quant's mutants that only the numerics lane can catch: the scale's store dropped (q is
right, the row's scale never written) and the quantizer's rounding constant off by one (the i32
ROUNDER subtracted after fptosi: every q one step off, within the clamp). Each is valid LLVM that
compiles and whose promises hold, so the LLVM lane passes it; the numerics lane's compare of scale,
and its exact compare of q, kill it. kemit_mutate judges each as a campaign judges it
(docs/mutation.md)."""
import pytest

from conftest import assert_numerics_only_kill


@pytest.mark.parametrize("name, before, after, output", [
    # config 2: gfx90a, bf16 x4, scope wave (no LDS store): store 0 is residual_out's, 1 the scale's
    ("rmsnorm_quant:2@canonical:drop_store:1", "store %", "", "scale"),
    # config 2: integer const 15 of the text is ROUNDER (1.5 * 2^23) as i32
    ("rmsnorm_quant:2@canonical:const_inc:15", "{value=12582912}", "{value=12582913}", "q"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)

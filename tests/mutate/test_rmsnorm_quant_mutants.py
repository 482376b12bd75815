"""rmsnorm_quant's mutants that only the numerics lane can catch: the scale's store dropped (q is
right, the row's scale never written) and the quantizer's rounding constant off by one (the i32
ROUNDER subtracted after fptosi: every q one step off, within the clamp). Each is valid LLVM that
compiles and whose promises hold, so the LLVM lane passes it; the numerics lane's compare of scale,
and its exact compare of q, kill it. kemit_mutate judges each as a campaign judges it
(docs/mutation.md).

The max of |y| with its +8 bpermute step made +9 (config 41: f16 x4, block 512 of waves of 64, cols
1020, seven rows) leaves the lanes 8 mod 16 out of each wave's partial: only a row whose largest |y|
is there shows it. The random rows and the `peaks` rows (PEAK_LANES) put it elsewhere; the
`mid_peaks` rows put row 0's peak at lane 8 of wave 0, and the scale is the next largest |y| / 127."""
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


def test_a_max_step_that_leaves_out_the_lanes_8_mod_16_is_killed_by_the_mid_peaks_rows(judge_mutant):
    _, m = judge_mutant("rmsnorm_quant:41@llvm19:bpermute_lane:16")
    assert_numerics_only_kill(m, "call i32 @llvm.amdgcn.ds.bpermute(i32 %v177.addr", "add i32 %v177.addr, 4", "scale")
    # the sets run in order and the first that fails is named: random, zero_rows, halfsteps, large
    # and peaks all passed it
    assert m["how"].startswith("numerics NUMERIC_MISMATCH: inputs mid_peaks: scale: "), m["how"]
    assert "first bad index 0:" in m["how"], m["how"]

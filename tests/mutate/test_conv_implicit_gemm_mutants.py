"""conv_implicit_gemm's mutants that only the numerics lane can catch: a row's image taken as the
launch's last one (the select of the image index with its arms swapped, in a block that only lanes
of an image below the batch reach). Every address stays inside dy, so the LLVM lane passes it; it
changes dx only where a launch holds two images or more, which the plan's first chunk does.
kemit_mutate judges each as a campaign judges it (docs/mutation.md)."""
import pytest

from conftest import assert_numerics_only_kill


@pytest.mark.parametrize("name, before, after, output", [
    # config 25: dgrad f16 5x5 stride 3 on 11x11 (121 rows an image, tile_m 32): a chunk of one
    # image reads image 0 either way; the first chunk's two images tell them apart
    ("conv_implicit_gemm:25@llvm22:swap_select:0", "i32 %v73, i32 %v111", "i32 %v111, i32 %v73", "dx"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)

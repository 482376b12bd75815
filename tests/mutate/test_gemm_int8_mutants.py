"""gemm_int8's mutants that only the numerics lane can catch: a dequantizing scale left out (the
row scale's product, then the column scale's, made a product by 1.0), an element dequantized with
another row's scale (its row offset into row_scale one lower: element 1 of a 32x32 fragment takes
element 0's row scale), and the raw accumulators' store dropped (c right, acc never written). Each
is valid LLVM that compiles and whose promises hold, since every address stays inside its buffer
(a row scale read at a column's index could leave row_scale, where n > m, and the LLVM lane's
prover would refute it), so the LLVM lane passes it; the numerics lane's bit-exact compares of c
and acc kill it. kemit_mutate judges each as a campaign judges it (docs/mutation.md)."""
import pytest

from conftest import assert_numerics_only_kill


@pytest.mark.parametrize("name, before, after, output", [
    # config 1: gfx90a, mfma_32x32x8, f16 out with acc_out. drop_factor site 0 is element 0's
    # f32(acc) x row_scale, site 1 its x col_scale
    ("gemm_int8:1@llvm16:drop_factor:0", "fmul float %v156, %v155", "fmul float %v156, 1.0", "c"),
    ("gemm_int8:1@llvm22:drop_factor:1", "fmul float %v157, %v151", "fmul float %v157, 1.0", "c"),
    # const_dec site 39 of the canonical text is element 1's row offset (1) into row_scale
    ("gemm_int8:1@canonical:const_dec:39", "{value=1} : i32", "{value=0} : i32", "c"),
    # store 2 is element 0's i32 to acc (stores 0 and 1 stage a's and b_t's words into LDS)
    ("gemm_int8:1@canonical:drop_store:2", "store %152, %153", "", "acc"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)

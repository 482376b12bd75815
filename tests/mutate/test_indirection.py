"""An indirection read wrong is the numerics lane's to catch: grouped_gemm's kernel clamps every
offset it reads before making an address of it, so a mutant that reads the wrong offset, or keeps
the wrong row, stays inside every buffer and keeps every promise (the LLVM lane and its contract
proofs pass it), and only the numbers show it. Each mutant is killed by numerics and survives the
LLVM lane alone."""
import pytest

MUTANTS = [
    # the walk reads offsets[g] where offsets[g + 1] is meant (the group's end): every group gets
    # the rows of the one before it
    "grouped_gemm:1@canonical:const_dec:12",
    # the same in the llvm16 module: `add nuw nsw i32 %v40, 1` -> `, 0`
    "grouped_gemm:1@llvm16:const_dec:16",
    # the walk keeps the previous tile's first row where this group's is meant (a select's arms swapped)
    "grouped_gemm:1@canonical:swap_select:1",
    # config 8 (tile_m 16): a group's tile count divides by 15, not 16: one tile too many per 15, so
    # after the long_group set's 255 rows the last group's tile is past the grid and never written
    "grouped_gemm:8@canonical:const_dec:14",
]


@pytest.mark.parametrize("name", MUTANTS)
def test_a_wrong_group_offset_is_killed_by_numerics_alone(judge_mutant, name):
    done, m = judge_mutant(name)
    assert m["verdict"] == "KILLED" and m["how"].startswith("numerics NUMERIC_MISMATCH"), done.stdout[-2000:]
    done, m = judge_mutant(name, "--lanes", "llvm")
    assert m["verdict"] == "SURVIVED", (m["how"], done.stdout[-2000:])

"""A guard against a run-time length made `<=` changes a result only where the length ends a tile
at that guard's slot, so a plan that runs one length meets a few slots: the numerics lane's
`tile_ends` set runs a small case per place a length can end in a tile (docs/numerics.md). Each
mutant here is valid LLVM or canonical IR whose promises hold and whose addresses the LLVM lane
and its proofs accept, and only a `tile_ends` case kills it in the numerics lane: attention_fwd's
mask of one accumulator element's score (one key counted twice) and clamp of one fragment's key
(the last head reads one key past k), grouped_gemm's store guard of one slot (one element past c)
and its walk's tiles per group rounded by tile_m - 1 (the last group's tile pushed off the grid).
kemit_mutate judges each as a campaign judges it (docs/mutation.md)."""
import pytest


@pytest.mark.parametrize("name, before, verdict, output", [
    # config 14: gfx90a mfma_16x16x16, tile_kv 128: one element's `key < seq_k` of the score mask
    ("attention_fwd:14@llvm16:icmp_predicate:21", "icmp slt i32", "NUMERIC_MISMATCH", ": o: "),
    # config 86: gfx90a mfma_16x16x16, causal, tile_kv 128: the clamp of one fragment's key
    ("attention_fwd:86@llvm22:icmp_predicate:6", "icmp slt i32", "NOT_EXECUTABLE", "out of bounds of k"),
    # config 18: gfx942 mfma_32x32x8, tile_m 64: one slot's `row * n + col < end * n`
    ("grouped_gemm:18@llvm22:icmp_predicate:15", "icmp ult i64", "NOT_EXECUTABLE", "out of bounds of c"),
    # config 8: tile_m 16: a group's tiles (rows + 15) / 16 divided by 15
    ("grouped_gemm:8@canonical:const_dec:14", "{value=16}", "NUMERIC_MISMATCH", ": c: "),
])
def test_a_tile_end_kills_the_mutant_that_the_llvm_lane_passes(judge_mutant, name, before, verdict, output):
    done, m = judge_mutant(name)
    assert m["verdict"] == "KILLED", (m["how"], done.stdout[-2000:])
    assert m["how"].startswith(f"numerics {verdict}") and "; llvm" not in m["how"], m["how"]
    assert f"numerics {verdict}: inputs tile_ends (" in m["how"], m["how"]  # the case that stopped it is named
    assert output in m["how"] and before in m["before"], m
    done, m = judge_mutant(name, "--lanes", "llvm")
    assert m["verdict"] == "SURVIVED", (m["how"], done.stdout[-2000:])

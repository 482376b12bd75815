"""attention_fwd's mutant that only the bits of a zero show: causal config 88 at llvm16, the key
loop's end `min(query tile end, seq_k)` made `max` by its select's arms swapped. The extra key
tiles lie past every query of the workgroup, so each of their weights is 0 and each adds 0 x v to
the accumulator: nothing, unless the accumulator is -0 and v > 0 (-0 + +0 = +0). The zero_signs
case makes outputs -0 (an accumulator rescaled to -0 by exp(-S) = 0) with v = +1 past the last
query: the mutant's outputs are +0 there, within tolerance, and differ from the canonical
section's in their bits (NUMERIC_DIVERGED). The LLVM lane passes it. kemit_mutate judges it as a
campaign judges it (docs/mutation.md)."""


def test_extra_masked_key_tiles_flip_a_negative_zero(judge_mutant):
    done, m = judge_mutant("attention_fwd:88@llvm16:swap_select:0")
    assert m["verdict"] == "KILLED", (m["how"], done.stdout[-2000:])
    assert m["how"].startswith("numerics NUMERIC_DIVERGED") and "; llvm" not in m["how"], m["how"]
    assert "select i1 %v43, i32 %v42, i32 %seq_k" in m["before"], m
    done, m = judge_mutant("attention_fwd:88@llvm16:swap_select:0", "--lanes", "llvm")
    assert m["verdict"] == "SURVIVED", (m["how"], done.stdout[-2000:])

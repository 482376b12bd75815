"""attention_bwd's mutants that only the numerics lane can catch: delta's subtraction reversed in
ds = p * (dp - delta), delta never stored (the main kernel then reads the NaN the buffer starts
with), and the reduce's tile loop started at 1 (the first key tile's part of dq skipped). Each is
valid LLVM that compiles and whose promises hold, so the LLVM lane passes it; the numerics lane's
compare of dq kills it. tests/families/test_attention_bwd.py shows the same for delta dropped from
the subtraction outright (a rewrite no operator makes). kemit_mutate judges each as a campaign
judges it (docs/mutation.md)."""
import pytest

from conftest import assert_numerics_only_kill


@pytest.mark.parametrize("name, before, after, output", [
    # config 1: gfx90a, f16, head_dim 16, not causal, block 64; swap_operands site 5 is the main
    # kernel's second fsub, dp - delta (site 4 is the score's s * scale - lse)
    ("attention_bwd:1@canonical:swap_operands:5", "fsub %155, %111", "fsub %111, %155", "dq"),
    # store 0 of the module is the delta kernel's only store
    ("attention_bwd:1@canonical:drop_store:0", "store %51, %54", "", "dq"),
    # integer const 41 of the text is the reduce's tile loop start
    ("attention_bwd:1@canonical:const_inc:41", "{value=0}", "{value=1}", "dq"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)


def test_a_causal_query_guard_made_weak_writes_a_query_past_the_tile(judge_mutant):
    # config 20: gfx1100, bf16, head_dim 16, causal, block 32; the second key tile's query loop
    # guard `tile * 32 < seq_q` made `<=` runs one trip at query 32 when seq_q is one tile (the
    # tile_queries set): it reads one row past the head and writes a dq part another workgroup writes
    _, m = judge_mutant("attention_bwd:20@llvm16:icmp_predicate:2")
    assert m["verdict"] == "KILLED", m
    assert m["how"].startswith("numerics NUMERIC_RACE: race: dq_part") and "; llvm" not in m["how"], m["how"]
    assert "icmp slt" in m["before"] and "icmp sle" in " ".join(m["after"]), m

"""moe_sorting's mutant that only a launch of no tokens can catch: the scatter's loop over the slots
with its entry guard `0 < n` made `0 <= n`. At n = 0 (the launch plan allows tokens 0) each expert's
lane enters the loop once and loads ids[0] from an empty ids buffer; nothing is stored (offsets[e]
is 0, not below n), so only the read past the buffer shows. The numerics lane's `no_tokens` set
runs that launch and reports the read (NOT_EXECUTABLE). kemit_mutate judges it as a campaign
judges it (docs/mutation.md)."""


def test_the_no_tokens_launch_kills_the_scatter_loop_entered_at_zero_slots(judge_mutant):
    _, m = judge_mutant("moe_sorting:2@llvm16:icmp_predicate:7")
    assert m["verdict"] == "KILLED", m
    assert m["how"].startswith("numerics NOT_EXECUTABLE"), m["how"]
    assert "out of bounds of ids (0 bytes)" in m["how"], m["how"]
    assert "icmp slt i32 0, %n" in m["before"] and "icmp sle i32 0, %n" in " ".join(m["after"]), m

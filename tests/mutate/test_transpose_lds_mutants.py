"""transpose_lds' mutant that only a partial last strip shows: config 7 (f32, tile 24, vec 8)
with its load guard's column test made weak (`col < cols` made `<=`). Where a launch's last
strip holds 8 or 16 columns, the lanes of one vector slot per strip row start their load at cols:
they read the next row's first elements into strip columns the store pass never reads, and at the
matrix's last row past the end of a. The plan once gave this config 72 columns, three whole strips, where
the two sides never meet; it now gives 64 (a last strip of 16), and the numerics lane's bounds
check kills the mutant. kemit_mutate judges it as a campaign judges it (docs/mutation.md)."""


def test_a_column_test_made_weak_is_killed_by_a_partial_last_strip(judge_mutant):
    _, m = judge_mutant("transpose_lds:7@llvm19:icmp_predicate:2")
    assert m["verdict"] == "KILLED", m
    assert "icmp slt i32 %v23, %cols" in m["before"] and "icmp sle i32 %v23, %cols" in " ".join(m["after"]), m
    assert m["how"].startswith("numerics NOT_EXECUTABLE: ExecError: %v30 = load <8 x float>"), m["how"]
    assert "out of bounds of a" in m["how"], m["how"]

"""scan_rows' mutants that only the numerics lane catches. With its `ascending` rows: the carry
pass of a max scan split in two (config 35: bf16 x4, block 256, segments of 2048) whose loop over
its segment makes one trip too many in work-item 0 (`.again` made `<=`), so the carry takes in the
next segment's first vector and the scan of that segment starts from it. Random rows almost never
hold a value there above the whole first segment (nor do the all-negative, extreme or peak rows),
an ascending row always does: the outputs at the second segment's start are then the wrong
elements. With carries that start as a value the max keeps (+inf, not NaN): the scan of a segment
that reads a carry slot no pass writes. kemit_mutate judges each as a campaign judges it
(docs/mutation.md)."""
from conftest import assert_numerics_only_kill


def test_a_carry_that_reads_into_the_next_segment_is_killed_by_the_ascending_rows(judge_mutant):
    _, m = judge_mutant("scan_rows:35@llvm22:icmp_predicate:14")
    assert_numerics_only_kill(m, "icmp slt i32 %v23.next, 2048", "icmp sle i32 %v23.next, 2048", "y")
    # the sets run in order and the first that fails is named: random, negative, extremes and
    # peaks all passed it
    assert m["how"].startswith("numerics NUMERIC_MISMATCH: inputs ascending: y: "), m["how"]
    assert "first bad index 2048:" in m["how"], m["how"]


def test_a_scan_that_reads_the_carry_slot_no_pass_writes_is_killed(judge_mutant):
    """The scan of the second segment (config 35, workgroup y 1) whose loop over the carries makes
    one trip too many (`.again` made `<=`): it reads carries[2 row + 1], the slot of its own
    segment, which the carry pass (grid y = split - 1) never writes. When that slot started as NaN
    the max dropped it and every set passed; a max scan's carries now start as +inf, so the
    segment's outputs are +inf from its first one."""
    _, m = judge_mutant("scan_rows:35@llvm22:icmp_predicate:2")
    assert_numerics_only_kill(m, "icmp slt i32 %v25.next, %v23", "icmp sle i32 %v25.next, %v23", "y")
    assert "first bad index 2048:" in m["how"], m["how"]

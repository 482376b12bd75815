"""paged_attention_decode's mutants that only a plan with two workgroups of partitions catches: the
partition kernel's first partition of a workgroup, workgroup id x times waves, with the factor
moved by one (config 35: gfx1100, waves 4, partition 512). Where the grid has one workgroup on x
the id is 0 and nothing changes; the plan's block tables now hold at least 2 x waves partitions
(parity/numerics/references/paged_attention_decode.py), so the second workgroup places its waves
one partition off: at 3 the last partition is never written and the partition before it is
written by two workgroups (the race the executor reports), at 5 the second workgroup's first
partition is never written and the reduce reads the NaN its buffers start with. The LLVM lane
passes each (every index stays inside its buffer); the numerics lane kills it. kemit_mutate
judges each as a campaign judges it (docs/mutation.md). The block number clamp made weak (configs 17
and 53) reads one block past the caches where the wild_tables set numbers a reached block
num_blocks: killed by the numerics lane alone."""
from conftest import assert_numerics_only_kill


def test_a_workgroups_first_partition_one_lower_races_on_the_partition_before(judge_mutant):
    # literal 2 of llvm16's module is the factor of %v20 = workgroup id x * waves
    _, m = judge_mutant("paged_attention_decode:35@llvm16:const_dec:2")
    assert m["verdict"] == "KILLED", m
    assert m["how"].startswith("numerics NUMERIC_RACE: race: max_logits") and "; llvm" not in m["how"], m["how"]
    assert "workgroup (1,0,0)" in m["how"], m["how"]
    assert "mul nuw nsw i32 %v18, 4" in m["before"] and "mul nuw nsw i32 %v18, 3" in " ".join(m["after"]), m


def test_a_workgroups_first_partition_one_higher_leaves_a_partition_unwritten(judge_mutant):
    _, m = judge_mutant("paged_attention_decode:35@llvm16:const_inc:2")
    assert_numerics_only_kill(m, "mul nuw nsw i32 %v18, 4", "mul nuw nsw i32 %v18, 5", "o")


def test_a_block_number_clamp_made_weak_reads_past_the_cache_at_the_bound(judge_mutant):
    # the clamp `entry <u num_blocks` made `<=`: a reached block numbered num_blocks itself (the
    # wild_tables set) is then read, one block past k_cache, where the kernel reads block 0
    for name in ("paged_attention_decode:17@llvm16:icmp_predicate:5", "paged_attention_decode:53@llvm19:icmp_predicate:5"):
        _, m = judge_mutant(name)
        assert m["verdict"] == "KILLED", m
        assert m["how"].startswith("numerics NOT_EXECUTABLE: inputs wild_tables") and "; llvm" not in m["how"], m["how"]
        assert "out of bounds of k_cache" in m["how"], m["how"]
        assert "icmp ult i32 %v126, %num_blocks" in m["before"] and "icmp ule" in " ".join(m["after"]), m


def test_a_last_block_index_two_below_breaks_its_promise_at_one_block(judge_mutant):
    # `max_blocks - 1` made `- 2`: its select arm is never taken, but at max_blocks 1, which the
    # launch plan allows and the one_block set runs, `sub nuw` goes below zero (poison)
    _, m = judge_mutant("paged_attention_decode:41@llvm22:const_inc:13")
    assert m["verdict"] == "KILLED", m
    assert m["how"].startswith("numerics NOT_EXECUTABLE: inputs one_block") and "poison: sub nuw" in m["how"], m["how"]
    assert "sub nuw nsw i32 %max_blocks, 1" in m["before"] and "%max_blocks, 2" in " ".join(m["after"]), m

"""topk_softmax's mutants that only the numerics lane can catch: the tie rule broken (a strict
compare of the argmax made weak, so an equal logit of a higher index wins) in the canonical text
and in a flavor's module, the winner's index taken from the other lane of a step while its key is
kept (the weight stays right, the index written is wrong), a step's index read from the lane after
the one its key comes from (a winner in that lane gets another expert's index), and a step across
rows that reads its own row in one lane (that lane removes an expert that did not win), and a step across the wave's halves that
reads one lane too far (the `split_winners` set). Each is
valid LLVM that compiles and whose promises hold, so the LLVM lane passes it; the numerics lane's
compare of the indices and weights kills it. kemit_mutate judges each as a campaign judges it
(docs/mutation.md)."""
import pytest

from conftest import assert_numerics_only_kill


@pytest.mark.parametrize("name, before, after, output", [
    # config 1: gfx90a, 64 experts, top 2, bpermute; site 0 is the first step of the first round:
    # equal weights, so only the indices show it
    ("topk_softmax:1@canonical:icmp_predicate:0", "{pred=ogt}", "{pred=oge}", "indices"),
    # config 13: gfx1100 (wave 32), 32 experts, top 2, bpermute, in llvm16's executor (site 0 of the
    # module is the token loop's guard, site 1 the first step's compare)
    ("topk_softmax:13@llvm16:icmp_predicate:1", "fcmp ogt float", "fcmp oge float", "indices"),
    # config 1: the first step's index select with its arms swapped, its key select kept: the lane
    # that holds the winner then removes another expert, so the next round's weight is off too
    ("topk_softmax:1@canonical:swap_select:1", ": i32", ": i32", "weights"),
    # config 28: gfx942, 96 experts in 2 slots, top 6, dpp; rank 3's bpermute step 32 reads its key
    # one lane on (its index from the right lane): lanes 15, 31, 47, 63 pair one row's key with
    # another's index, and the lane that holds the winner there keeps it, so it wins again. Only the
    # row_last_lanes set (every rank's winner in such a lane) meets it
    ("topk_softmax:28@llvm19:bpermute_lane:14", "ds.bpermute", "add i32", "weights"),
    # config 6: gfx90a, 72 experts, top 3, dpp; rank 1's bpermute step 32 reads its index one lane
    # on: lane 15 (31, 47, 63) takes another row's index, its own expert when that is the next
    # rank's, and removes it. Only the row_last_lanes set meets it
    ("topk_softmax:6@llvm19:bpermute_lane:7", "ds.bpermute", "add i32", "weights"),
    # config 55: gfx1100, 128 experts, top 8, dpp; the sixth round's step across the halves of the
    # wave reads lane + 17 for lane + 16: lane 15 takes its own half's best for the winner and drops
    # it, which only the split_winners set shows (its 8th winner in lane 15, the others above)
    # config 50: gfx90a, 256 experts, top 8, bpermute; the first round's stride-8 step reads the
    # index from lane l + 9 and the key from l + 8: a winner held by lane 8 (24, 40, 56) reaches lane
    # 0 with the index of the best of lanes 9..16, and the lane holding that expert removes it. Only
    # a peak in that lane shows it (the step_peaks set): the index written is wrong
    ("topk_softmax:50@llvm19:bpermute_lane:7", "ds.bpermute(i32 %v102.addr", "add i32 %v102.addr, 4", "indices"),
    # config 55: gfx1100 (wave 32), 128 experts, top 8, dpp; rank 5's step across the two rows reads
    # lane l + 17: lane 15 reads its own row and keeps its row's best, which it holds and removes
    # though another row's expert won. Only equal rows whose best sits in lane 15 show it (the
    # sawtooth set): a later rank then writes another expert
    ("topk_softmax:55@llvm16:const_inc:53", "add nuw nsw i32 %v6, 16", "add nuw nsw i32 %v6, 17", "weights"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)

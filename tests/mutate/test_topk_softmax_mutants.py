"""topk_softmax's mutants that only the numerics lane can catch: the tie rule broken (a strict
compare of the argmax made weak, so an equal logit of a higher index wins) in the canonical text
and in a flavor's module, the winner's index taken from the other lane of a step while its key is
kept (the weight stays right, the index written is wrong), a step's index read from the lane after
the one its key comes from (a winner in that lane gets another expert's index), and a step across
rows that reads its own row in one lane (that lane removes an expert that did not win). Each is
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
    # config 50: gfx90a, 256 experts, top 8, bpermute; the first round's stride-8 step reads the
    # index from lane l + 9 and the key from l + 8: a winner held by lane 8 (24, 40, 56) reaches lane
    # 0 with the index of the best of lanes 9..16, and the lane holding that expert removes it. Only
    # a peak in that lane shows it (the step_peaks set); the next rounds' weights are then off
    ("topk_softmax:50@llvm19:bpermute_lane:7", "ds.bpermute(i32 %v102.addr", "add i32 %v102.addr, 4", "weights"),
    # config 55: gfx1100 (wave 32), 128 experts, top 8, dpp; rank 5's step across the two rows reads
    # lane l + 17: lane 15 reads its own row and keeps its row's best, which it holds and removes
    # though another row's expert won. Only equal rows whose best sits in lane 15 show it (the
    # sawtooth set): a later rank then writes another expert
    ("topk_softmax:55@llvm16:const_inc:53", "add nuw nsw i32 %v6, 16", "add nuw nsw i32 %v6, 17", "weights"),
])
def test_only_the_numerics_lane_kills_the_mutant(judge_mutant, name, before, after, output):
    _, m = judge_mutant(name)
    assert_numerics_only_kill(m, before, after, output)

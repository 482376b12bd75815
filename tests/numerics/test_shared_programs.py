"""Flavors that decode to one program run once (docs/numerics.md, "One program, one run"): the
executors' DIGEST names a module's decoded kernels, and a flavor whose digest is an earlier
flavor's that passed takes that run's result. Shown here: llvm19's and llvm22's modules of a
config (attribute spellings apart, the same text) share one run and llvm16's (other flags) does
not; a later flavor whose program differs in one flag runs itself, and a bug in it alone is found
in it alone; a failing run is never shared; and the DIGEST verb itself, on texts that do and do not
decode alike."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import numerics_worker  # noqa: E402
from lane_cases import config  # noqa: E402
from wrapped_source import MutatedSource, WithoutBarrier  # noqa: E402


def sections_run(monkeypatch):
    """The sections run_plan runs, in order (a shared section runs nothing)."""
    real, ran = numerics_worker.run_plan, []

    def run_plan(*args):
        ran.append(args[2])
        return real(*args)

    monkeypatch.setattr(numerics_worker, "run_plan", run_plan)
    return ran


def by_section(results):
    return {r.section: r for r in results}


def test_llvm19_and_llvm22_share_one_run_and_llvm16_runs_its_own(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    ran = sections_run(monkeypatch)
    results = by_section(numerics_worker.check_config(kemit_cpp, "softmax_rows", config("softmax_rows", 5), base,
                                                      checkers))
    assert set(results) == {"canonical", "llvm16", "llvm19", "llvm22"}
    assert all(r.verdict == "NUMERIC_OK" for r in results.values()), [(r.section, r.detail) for r in results.values()]
    assert "llvm22" not in ran and {"canonical", "llvm16", "llvm19"} <= set(ran)
    shared, source = results["llvm22"], results["llvm19"]
    assert shared.same_program_as == "llvm19" and shared.lane_instructions == 0
    assert shared.outputs_sha256 == source.outputs_sha256 == results["canonical"].outputs_sha256
    assert results["llvm16"].same_program_as == "" and results["llvm16"].lane_instructions > 0


def test_a_later_flavor_whose_program_differs_in_one_flag_runs_itself(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    ran = sections_run(monkeypatch)
    one_flag_less = MutatedSource(base, "llvm22", lambda text: text.replace("getelementptr inbounds nuw", "getelementptr inbounds", 1))
    results = by_section(numerics_worker.check_config(kemit_cpp, "softmax_rows", config("softmax_rows", 5),
                                                      one_flag_less, checkers))
    assert "llvm22" in ran
    assert results["llvm22"].verdict == "NUMERIC_OK" and results["llvm22"].same_program_as == ""
    assert results["llvm22"].lane_instructions > 0


def test_a_bug_in_the_later_flavor_alone_is_found_there(lane):
    kemit_cpp, base, checkers = lane
    results = by_section(numerics_worker.check_config(kemit_cpp, "transpose_lds", config("transpose_lds", 1),
                                                      WithoutBarrier(base, "llvm22"), checkers))
    assert results["llvm19"].verdict == "NUMERIC_OK"
    assert results["llvm22"].verdict == "NUMERIC_RACE" and results["llvm22"].same_program_as == ""


def test_a_failing_run_is_never_shared(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    ran = sections_run(monkeypatch)
    results = by_section(numerics_worker.check_config(kemit_cpp, "transpose_lds", config("transpose_lds", 1),
                                                      WithoutBarrier(base, "llvm19"), checkers))
    assert results["llvm19"].verdict == "NUMERIC_RACE"
    assert "llvm22" in ran  # its own run: llvm19's failure says nothing of it
    assert results["llvm22"].verdict == "NUMERIC_OK" and results["llvm22"].same_program_as == ""


KERNEL = """target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) noalias {capture} %out) #0 {{
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %v = add {flag}i32 %t, 7
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}}
declare i32 @llvm.amdgcn.workitem.id.x()
attributes #0 = {{ "target-cpu"="gfx90a" }}
"""


@pytest.fixture(scope="module")
def executor(lane):
    return lane[2].get("llvm19")


def test_digest_is_blind_to_spelling_and_comments_and_sees_a_flag(executor):
    plain, error = executor.digest(KERNEL.format(capture="nocapture", flag=""), "a.ll")
    assert plain and not error
    commented = "; another comment\n" + KERNEL.format(capture="", flag="")
    assert executor.digest(commented, "b.ll") == (plain, "")
    flagged, _ = executor.digest(KERNEL.format(capture="nocapture", flag="nsw "), "c.ll")
    assert flagged and flagged != plain


def test_digest_of_a_text_that_cannot_run_says_why(executor):
    digest, error = executor.digest("this is not IR", "bad.ll")
    assert digest == "" and "parse error" in error
    digest, error = executor.digest('target triple = "amdgcn-amd-amdhsa"\n', "empty.ll")
    assert digest == "" and "defines no amdgpu_kernel" in error
    # the checker still answers after both
    assert executor.digest(KERNEL.format(capture="", flag=""), "a.ll")[0]

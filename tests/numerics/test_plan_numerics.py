"""The numerics lane runs the engine's launch plan (docs/protocol.md): every launch in order over views of
the same buffers. A batch past the 32-bit buffer range runs, on a small shape with the range
lowered, as the chunk launches the engine plans, against a numpy reference that chunks too; a plan
whose chunk offset is off by one image is caught (NUMERIC_MISMATCH), and a view past its buffer
is NOT_EXECUTABLE with the view named.

The plan is rewritten in what the C++ engine's protocol worker returns (what both engines would
emit after the same change: parity compares the plan with the canonical section)."""
import dataclasses
import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import numerics_worker  # noqa: E402
import launch_plan  # noqa: E402
from lane_cases import config  # noqa: E402
from wrapped_source import WrappedSource  # noqa: E402

SECTIONS = ("canonical", "llvm19")


class PlanRewritten(WrappedSource):
    """The engine's answers with the launch plan rewritten; `seen` keeps each plan as received."""

    def __init__(self, base, rewrite):
        super().__init__(base)
        self.rewrite, self.seen, self.ranges = rewrite, [], []

    def build(self, family, config_id, arch, spec, **lowered):
        built = self.base.build(family, config_id, arch, spec, **lowered)
        self.seen.append(built.plan)
        self.ranges.append(lowered.get("buffer_range"))
        built.plan = self.rewrite(built.plan)
        return built


def shift_view(param, launch_index, images):
    """The view of `param` in launch `launch_index` moved by `images` images (its own size / count)."""
    def rewrite(plan):
        lines = plan.splitlines(keepends=True)
        where = [index for index, text in enumerate(lines) if text.startswith("launch ")][launch_index]
        line = lines[where]
        match = re.search(rf" {param}=buffer:{param}@(\d+)\+(\d+)", line)
        offset, size = int(match.group(1)), int(match.group(2))
        count = int(re.search(r"_n(\d+)h", line.split()[1]).group(1))
        moved = f" {param}=buffer:{param}@{offset + images * size // count}+{size}"
        lines[where] = line[:match.start()] + moved + line[match.end():]
        return "".join(lines)
    return rewrite



@pytest.mark.parametrize("config_id, chunks", [(68, 2), (69, 3), (70, 7), (71, 3), (63, 2), (64, 2)])
def test_chunked_batches_run_as_the_planned_chunks(lane, config_id, chunks):
    kemit_cpp, base, checkers = lane
    source = PlanRewritten(base, lambda plan: plan)
    results = numerics_worker.check_config(kemit_cpp, "conv_fwd_lds_halo", config("conv_fwd_lds_halo", config_id),
                                          source, checkers, sections=SECTIONS)
    assert [r.verdict for r in results] == ["NUMERIC_OK"] * len(SECTIONS), [(r.section, r.detail) for r in results]
    [plan], [lowered] = source.seen, source.ranges
    assert lowered is not None, "the range must be lowered so that the small spec chunks"
    forward = [launch for launch in launch_plan.parse_plan(plan).launches if not launch.kernel.endswith("_reduce")]
    assert len(forward) == chunks
    sizes = [int(re.search(r"_n(\d+)h", launch.kernel).group(1)) for launch in forward]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert all(launch_plan.evaluate(b.size, {}) < lowered for launch in forward for b in launch.bindings
               if b.size is not None)


@pytest.mark.parametrize("param, launch_index", [("y", 1), ("x", 1)])
def test_a_chunk_offset_off_by_one_image_is_a_mismatch(lane, param, launch_index):
    kemit_cpp, base, checkers = lane
    source = PlanRewritten(base, shift_view(param, launch_index, 1))
    results = numerics_worker.check_config(kemit_cpp, "conv_fwd_lds_halo", config("conv_fwd_lds_halo", 69),
                                          source, checkers, sections=SECTIONS)
    assert [r.verdict for r in results] == ["NUMERIC_MISMATCH"] * len(SECTIONS), [(r.section, r.detail) for r in results]
    assert all(r.mismatch["first_bad_index"] >= 0 for r in results)


def test_a_view_past_its_buffer_is_not_executable(lane):
    kemit_cpp, base, checkers = lane
    source = PlanRewritten(base, shift_view("y", 2, 1))  # the last chunk's output one image on
    results = numerics_worker.check_config(kemit_cpp, "conv_fwd_lds_halo", config("conv_fwd_lds_halo", 69),
                                          source, checkers, sections=SECTIONS)
    assert [r.verdict for r in results] == ["NOT_EXECUTABLE"] * len(SECTIONS)
    assert all("PlanError: view y@" in r.detail and "passes the end of buffer y" in r.detail for r in results)


def test_a_wrong_contract_formula_is_not_executable_naming_the_buffer(lane):
    """A contract whose buffer bytes are not the case's (an a of one element more) fails
    the config before anything runs."""
    kemit_cpp, base, checkers = lane
    wrong = PlanRewritten(base, lambda plan: plan.replace("\nbuffer a n*4\n", "\nbuffer a n*4+4\n"))
    results = numerics_worker.check_config(kemit_cpp, "elementwise", config("elementwise", 1), wrong, checkers,
                                          sections=("canonical",))
    assert [r.verdict for r in results] == ["NOT_EXECUTABLE"]
    assert "the contract says buffer" in results[0].detail, results[0].detail


CHUNKED = {"elementwise": 1, "reduce_rows": 1, "softmax_rows": 1, "norm_rows": 1, "scan_rows": 1, "gemm_mma": 1,
           "gemm_epilogue": 1, "attention_fwd": 1, "conv_fwd_lds_halo": 69}


@pytest.mark.parametrize("family", sorted(CHUNKED))
def test_a_chunking_familys_case_runs_at_least_two_chunks(lane, family):
    """The case lowers the buffer range so that its plan cuts the batch as a real size is cut."""
    kemit_cpp, base, checkers = lane
    source = PlanRewritten(base, lambda plan: plan)
    results = numerics_worker.check_config(kemit_cpp, family, config(family, CHUNKED[family]), source, checkers,
                                          sections=("canonical",))
    assert [r.verdict for r in results] == ["NUMERIC_OK"], [r.detail for r in results]
    [plan], [lowered] = source.seen, source.ranges
    cases, _ = numerics_worker.build_cases(family, config(family, CHUNKED[family]), base)
    case = cases[0][1]  # the random inputs' case
    runs = [launch.kernel for launch, *_ in launch_plan.runs(launch_plan.parse_plan(plan),
                                                             numerics_worker.case_sizes(case), case.buffers, case.grid)]
    assert lowered is not None and max(runs.count(kernel) for kernel in set(runs)) >= 2, runs


def test_transpose_runs_blocks_of_two_row_chunks_by_two_column_chunks(lane):
    """transpose_lds's case lowers the range so that its nested chunks cut both axes: at least two
    row chunks, each with at least two column chunks, every block NUMERIC_OK."""
    kemit_cpp, base, checkers = lane
    source = PlanRewritten(base, lambda plan: plan)
    results = numerics_worker.check_config(kemit_cpp, "transpose_lds", config("transpose_lds", 1), source, checkers,
                                          sections=SECTIONS)
    assert [r.verdict for r in results] == ["NUMERIC_OK"] * len(SECTIONS), [r.detail for r in results]
    [plan], [lowered] = source.seen, source.ranges
    cases, _ = numerics_worker.build_cases("transpose_lds", config("transpose_lds", 1), base)
    case = cases[0][1]  # the random inputs' case
    (launch,) = launch_plan.parse_plan(plan).launches
    blocks = launch_plan.chunk_values(launch, numerics_worker.case_sizes(case))
    rows = {values["first"] for values in blocks}
    assert lowered is not None and len(rows) >= 2, blocks
    assert all(len([v for v in blocks if v["first"] == first]) >= 2 for first in rows), blocks


def test_nested_chunks_run_every_inner_chunk_inside_each_outer_one():
    plan = launch_plan.parse_plan("; kemit launch plan 2\nsize r 0..9\nsize c 0..9\nbuffer a r*c*4\n"
                                  "launch k chunks r by 2 chunks c by 3 grid count2,count,1 block 64 lds 0 "
                                  "args a=buffer:a@(first*c+first2)*4+((count-1)*c+count2)*4\n")
    runs = launch_plan.chunk_values(plan.launches[0], {"r": 3, "c": 4})
    assert [(v["first"], v["count"], v["first2"], v["count2"]) for v in runs] == \
        [(0, 2, 0, 3), (0, 2, 3, 1), (2, 1, 0, 3), (2, 1, 3, 1)]
    assert launch_plan.chunk_values(plan.launches[0], {"r": 3, "c": 0}) == []
    with pytest.raises(launch_plan.PlanError, match="nested chunks of r inside chunks of itself"):
        launch_plan.parse_plan("; kemit launch plan 2\nsize r 0..9\n"
                               "launch k chunks r by 2 chunks r by 1 grid 1,1,1 block 64 lds 0 args\n")


def test_an_answer_without_a_plan_is_not_executable(lane):
    kemit_cpp, base, checkers = lane
    results = numerics_worker.check_config(kemit_cpp, "elementwise", config("elementwise", 1),
                                          PlanRewritten(base, lambda plan: ""), checkers, sections=("canonical",))
    assert [r.verdict for r in results] == ["NOT_EXECUTABLE"]
    assert "no launch plan" in results[0].detail


class Fp8FormatOf(WrappedSource):
    """The engine's answers, with the processor's fp8_format (hello's arch_facts) replaced."""

    def __init__(self, base, fp8_format):
        super().__init__(base)
        self.fp8_format = fp8_format

    def arch(self, name):
        facts, reason = self.base.arch(name)
        return dataclasses.replace(facts, fp8_format=self.fp8_format), reason

    def build(self, family, config_id, arch, spec, **lowered):
        return self.base.build(family, config_id, arch, spec, **lowered)


def test_fp8_inputs_follow_the_hellos_fp8_format(lane):
    """The plan encodes fp8 inputs in the variant the engine's hello states for the processor: the
    stated one runs clean, the other variant is a mismatch, and none is a clear refusal."""
    kemit_cpp, base, checkers = lane
    entry = config("gemm_epilogue", 114)  # fp8 on gfx942
    assert base.arch("gfx942")[0].fp8_format == "fnuz"
    verdicts = {}
    for fp8_format in ("fnuz", "ocp"):
        results = numerics_worker.check_config(kemit_cpp, "gemm_epilogue", entry, Fp8FormatOf(base, fp8_format),
                                              checkers, sections=SECTIONS)
        verdicts[fp8_format] = [r.verdict for r in results]
    assert verdicts == {"fnuz": ["NUMERIC_OK"] * 2, "ocp": ["NUMERIC_MISMATCH"] * 2}
    with pytest.raises(ValueError, match="gives gfx942 no fp8_format"):
        numerics_worker.check_config(kemit_cpp, "gemm_epilogue", entry, Fp8FormatOf(base, ""), checkers,
                                     sections=SECTIONS)

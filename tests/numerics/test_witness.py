"""Witness runs at real size (docs/numerics.md, "Witness runs at real size"): the interpreter
(kemit_cpp.witness) and every flavor's executor (the WITNESS verb of kemit_llcheckN) run chosen
workgroups of launches whose buffers (8 GiB and more) never exist in memory, with the same report:
elementwise and row-family launches at real size whose sampled outputs match the references, a
planted `mul nsw` that wraps only past 2^31 shown as poison at its workgroup, a store past a view
shown as out of bounds, and memory that stays proportional to the pages the run touched.
"""
import importlib
import os

import numpy as np
import pytest

from repo_paths import NUMERICS, PY_ENGINE, REPO, add_to_sys_path

add_to_sys_path(NUMERICS, PY_ENGINE)
import witness  # noqa: E402
from executor_client import Checker, checker_path  # noqa: E402
from kemit.llvm.flavors import find_flavor, flavor_names  # noqa: E402
from references import elementwise  # noqa: E402

BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
FLAVORS = flavor_names()
ARCH = "gfx90a"
SEED = 26

# n near 2^31 f32 elements (8 GiB a buffer); a grid of 2^16 workgroups of 256, so each workgroup
# strides 2^24 elements and the loop's last `iv + stride` stays below 2^31 (the llvm modules' latch
# is `add nsw`): 127 trips per workgroup, each in a page of its own in each of the three buffers.
N = 127 * 2 ** 24
EW_GRID = 2 ** 16
EW_TRIPS = 127


@pytest.fixture(scope="module", params=FLAVORS)
def checker(request):
    c = Checker(checker_path(BUILD, find_flavor(request.param).major))
    c.flavor = request.param
    yield c
    c.close()


def emitted(kemit_cpp, family, spec):
    built = kemit_cpp.emit(family, ARCH, spec, FLAVORS)
    assert not built["rejected"], built["reason"]
    return built["canonical"], {section["flavor"]: section["text"] for section in built["ll"]}


def ew_launch(kernel, y_view=None, dtype="f32", inputs=("a", "b")):
    bytes_ = N * witness.ELEMENT_BYTES[dtype]
    names = list(inputs) + ["y"]
    launch = {"kernel": kernel, "grid": [EW_GRID], "block": [256], "seed": SEED,
              "buffers": {name: {"bytes": bytes_, "fill": dtype} for name in names},
              "args": dict({name: {"buffer": name} for name in names}, n=N)}
    if y_view:
        launch["buffers"]["y"]["bytes"] = y_view["offset"] + y_view["bytes"] + 4096
        launch["args"]["y"] = dict(y_view, buffer="y")
    return launch


def all_runs(kemit_cpp, checkers_texts, canonical, launch):
    """(section, report) of the interpreter, then of each executor given."""
    out = [("canonical", kemit_cpp.witness(canonical, launch))]
    for flavor, (checker, text) in checkers_texts.items():
        report, error = checker.witness(text, f"witness.{flavor}.ll", launch)
        assert error == "", error
        out.append((flavor, report))
    return out


def check_elementwise(report, launch, spec):
    """Every run ok, exactly the expected pages made, the written y elements equal to the reference."""
    assert [run["ok"] for run in report["runs"]] == [True, True], report["runs"]
    assert [run["workgroup"] for run in report["runs"]] == [[0, 0, 0], [EW_GRID - 1, 0, 0]]
    # each buffer: one page per trip and workgroup
    assert witness.pages_touched(report) == len(launch["buffers"]) * 2 * EW_TRIPS
    mismatches, counts = witness.compare_sampled(report, launch, elementwise.sampled_outputs(spec, launch))
    assert mismatches == []
    assert counts == {"y": 2 * EW_TRIPS * 256}


# f32, f16 and bf16 fills, two and three inputs
EW_SPECS = [{"op": "add", "dtype": "f32", "vec": 1}, {"op": "mul", "dtype": "f16", "vec": 1},
            {"op": "fma", "dtype": "bf16", "vec": 1}]


@pytest.mark.parametrize("spec", EW_SPECS, ids=lambda spec: spec["op"] + "_" + spec["dtype"])
def test_elementwise_at_real_size_in_the_interpreter_and_every_executor(kemit_cpp, checker, spec):
    canonical, modules = emitted(kemit_cpp, "elementwise", spec)
    inputs = ("a", "b", "c")[:elementwise.ARITY[spec["op"]]]
    launch = ew_launch(kemit_cpp.kernel_name("elementwise", spec), dtype=spec["dtype"], inputs=inputs)
    for section, report in all_runs(kemit_cpp, {checker.flavor: (checker, modules[checker.flavor])}, canonical, launch):
        check_elementwise(report, launch, spec)


def test_the_sampled_comparison_fails_on_a_wrong_reference(kemit_cpp):
    canonical, _ = emitted(kemit_cpp, "elementwise", {"op": "add", "dtype": "f32", "vec": 1})
    launch = ew_launch("ew_add_f32_v1_b256")
    report = kemit_cpp.witness(canonical, launch)
    wrong = elementwise.sampled_outputs({"op": "sub", "dtype": "f32", "vec": 1}, launch)
    mismatches, _ = witness.compare_sampled(report, launch, wrong)
    assert len(mismatches) == 1 and mismatches[0]["output"] == "y" and mismatches[0]["bad"] > 0
    other_seed = dict(launch, seed=SEED + 1)  # the reference's inputs from another seed
    mismatches, _ = witness.compare_sampled(report, other_seed, elementwise.sampled_outputs(
        {"op": "add", "dtype": "f32", "vec": 1}, other_seed))
    assert mismatches and mismatches[0]["bad"] > 0


def test_a_store_past_its_view_is_out_of_bounds_at_the_last_workgroup(kemit_cpp, checker):
    canonical, modules = emitted(kemit_cpp, "elementwise", {"op": "add", "dtype": "f32", "vec": 1})
    # y's view starts at 4 GiB and holds one element fewer than n: only the last element's store,
    # by the last workgroup's last lane, falls outside it.
    launch = ew_launch("ew_add_f32_v1_b256", y_view={"offset": 2 ** 32, "bytes": (N - 1) * 4})
    for section, report in all_runs(kemit_cpp, {checker.flavor: (checker, modules[checker.flavor])}, canonical, launch):
        first, last = report["runs"]
        assert first["ok"], (section, first)
        assert not last["ok"] and last["workgroup"] == [EW_GRID - 1, 0, 0], (section, last)
        assert last["workitem"] == 255, (section, last)
        assert "store" in last["op"] and "out of bounds" in last["message"], (section, last)
        assert str((N - 1) * 4) in last["message"], (section, last)  # the address: the view's end


PLANTED_CANONICAL = """; kemit canonical IR 1
kernel @planted {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 y : ptr.global {align=16, noalias, nocapture, writeonly}
  %1 = const {value=256} : i32
  %2 = workgroup_id {dim=x} : i32
  %3 = mul %2, %1 {nsw} : i32
  %4 = workitem_id {dim=x} : i32
  %5 = add %3, %4 {nsw} : i32
  %6 = ptr_add %0, %5 {element=i32} : ptr.global
  store %5, %6 {align=4}
}
"""

PLANTED_LLVM = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @planted(ptr addrspace(1) noalias align 16 %y) #0 {
entry:
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul nsw i32 %wg, 256
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %i = add nsw i32 %base, %t
  %w = zext i32 %i to i64
  %p = getelementptr i32, ptr addrspace(1) %y, i64 %w
  store i32 %i, ptr addrspace(1) %p, align 4
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "target-cpu"="gfx90a" }
"""


def planted_launch():
    """2^23 + 1 workgroups of 256 (2^31 + 256 work-items): the workgroup id times 256 wraps i32 in
    the last workgroup only. y holds 2^31 + 256 i32 (8 GiB)."""
    groups = 2 ** 23 + 1
    return {"kernel": "planted", "grid": [groups], "block": [256], "seed": SEED,
            "buffers": {"y": {"bytes": groups * 256 * 4, "fill": "i32"}}, "args": {"y": {"buffer": "y"}},
            "workgroups": [[0, 0, 0], [groups - 2, 0, 0], [groups - 1, 0, 0]]}


def test_a_planted_mul_nsw_is_poison_at_the_witness_workgroup_only(kemit_cpp, checker):
    launch = planted_launch()
    executor, error = checker.witness(PLANTED_LLVM, "planted.ll", launch)
    assert error == "", error
    for section, report in (("canonical", kemit_cpp.witness(PLANTED_CANONICAL, launch)), ("executor", executor)):
        first, before, last = report["runs"]
        assert first["ok"] and before["ok"], (section, report["runs"])
        assert not last["ok"] and last["workgroup"] == [2 ** 23, 0, 0], (section, last)
        assert "mul" in last["op"] and "nsw" in last["message"], (section, last)
        assert "8388608" in last["message"] and "256" in last["message"], (section, last)  # the values
        assert last["workitem"] == 0, (section, last)
        # the workgroup just below the wrap wrote its elements: i at element i (up to 2^31 - 1)
        indices, values = witness.written_elements(report, launch, "y", "i32")
        assert indices.max() == 2 ** 31 - 1 and np.array_equal(values.astype(np.int64), indices), section
        assert witness.pages_touched(report) == 2, section


# The row families' defaults (scope block: a row per workgroup and grid-stride trip), norm_rows
# with its affine weight and bias.
ROW_SPECS = {"reduce_rows": {"op": "sum", "dtype": "f32"}, "softmax_rows": {}, "norm_rows": {"affine": True},
             "scan_rows": {}}


@pytest.mark.parametrize("family", sorted(ROW_SPECS))
def test_a_row_family_at_real_size_in_the_interpreter_and_every_executor(kemit_cpp, checker, family):
    spec = ROW_SPECS[family]
    canonical, modules = emitted(kemit_cpp, family, spec)
    full = kemit_cpp.parse_spec(family, spec)
    rows, cols = 2 ** 21 - 1, full["cols"]  # x: 8 GiB of f32
    grid = 2 ** 16
    per_row = 1 if family == "reduce_rows" else cols  # y's elements per row
    buffers = {"x": {"bytes": rows * cols * 4, "fill": "f32"}, "y": {"bytes": rows * per_row * 4, "fill": "f32"}}
    if full.get("affine"):
        buffers.update({"weight": {"bytes": cols * 4, "fill": "f32"}, "bias": {"bytes": cols * 4, "fill": "f32"}})
    launch = {"kernel": kemit_cpp.kernel_name(family, spec), "grid": [grid], "block": [full["block"]], "seed": SEED,
              "buffers": buffers, "args": dict({name: {"buffer": name} for name in buffers}, rows=rows)}
    trips = -(-rows // grid)  # rows of the first workgroup; the last one's last row is past `rows`
    reference = importlib.import_module(f"references.{family}")
    for section, report in all_runs(kemit_cpp, {checker.flavor: (checker, modules[checker.flavor])}, canonical, launch):
        assert all(run["ok"] for run in report["runs"]), (section, report["runs"])
        mismatches, counts = witness.compare_sampled(report, launch, reference.sampled_outputs(full, launch))
        assert mismatches == [], section
        assert counts == {"y": (2 * trips - 1) * per_row}, section
        assert report["buffers"]["x"]["pages"] == 2 * trips - 1, section


def test_a_malformed_description_is_refused_alike(kemit_cpp, checker):
    canonical, modules = emitted(kemit_cpp, "elementwise", {"op": "add", "dtype": "f32", "vec": 1})
    launch = ew_launch("ew_add_f32_v1_b256")
    launch["grid"] = [2 ** 24]  # 2^24 workgroups of 256: 2^32 work-items, one past the grid dim
    with pytest.raises(kemit_cpp.InterpError) as refused:
        kemit_cpp.witness(canonical, launch)
    report, error = checker.witness(modules[checker.flavor], "bad.ll", launch)
    assert report is None and error == str(refused.value)
    assert "2^32-1 work-items" in error


def test_a_scalar_past_its_type_is_refused_alike(kemit_cpp, checker):
    canonical, modules = emitted(kemit_cpp, "elementwise", {"op": "add", "dtype": "f32", "vec": 1})
    launch = ew_launch("ew_add_f32_v1_b256")
    launch["args"]["n"] = 2 ** 32  # n is an i32: neither a signed nor an unsigned 32-bit value
    with pytest.raises(kemit_cpp.InterpError) as refused:
        kemit_cpp.witness(canonical, launch)
    report, error = checker.witness(modules[checker.flavor], "wide.ll", launch)
    assert report is None and error == str(refused.value)
    assert error == "kernel @ew_add_f32_v1_b256: scalar 'n' = 4294967296 does not fit its type (i32)"
    launch["args"]["n"] = 2 ** 32 - 1  # an unsigned 32-bit value fits: the kernel's ops say how it is read
    assert checker.witness(modules[checker.flavor], "wide.ll", launch)[1] == ""

"""The largest launch each contract allows, run at real size (docs/contracts.md, "Witness runs"):
for a sample of configs of every family, every launch line of its plan at the top of every size's
range (the last chunk, each grid range at its top) becomes a launch description in the C++ core
(kemit_cpp.largest_launches, kemit/proof/witness_launch.h), and its first and last workgroups run in
the interpreter and in every flavor's executor, over buffers of up to 2^40 bytes that never exist
but for the pages the runs touch. Every run ends without a failure; where the family's reference
computes sampled outputs (elementwise, the row families, transpose, a gemm's tiles, conv output positions, attention's rows), the written outputs match it."""
import importlib
import json
import os

import pytest

from repo_paths import NUMERICS, PY_ENGINE, add_to_sys_path

add_to_sys_path(NUMERICS, PY_ENGINE)
import witness  # noqa: E402
from executor_client import Checker, checker_path  # noqa: E402
from kemit.llvm.flavors import find_flavor, flavor_names  # noqa: E402

BUILD = os.environ.get("KEMIT_BUILD_DIR", "build")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 35
# One config a family (its first), and a second where its shape differs (vectors, rows per block).
# grouped_gemm's offsets hold the fill's f16 bit patterns, data outside its input contract: its runs
# show the kernel's clamps keep a launch at the top of total_m inside every buffer.
SAMPLE = ["elementwise:1", "elementwise:5", "reduce_rows:1", "reduce_rows:5", "softmax_rows:1", "norm_rows:1",
          "scan_rows:1", "transpose_lds:1", "gemm_mma:1", "gemm_mma:2", "gemm_epilogue:1", "grouped_gemm:1", "attention_fwd:1", "conv_fwd_lds_halo:1",
          "conv_depthwise_tiled:1", "topk_softmax:1", "topk_softmax:17", "gemm_int8:1"]
# Extremes whose one workgroup reads a whole axis, too long for a ctest: attention's 2^23 keys (every
# query tile's workgroup reads all of its head's keys, 2 GiB, for minutes). family -> (scalar, most run)
TOO_LONG = {"attention_fwd": ("seq_k", 65536)}
SAMPLED_REFERENCES = {"elementwise", "reduce_rows", "softmax_rows", "norm_rows", "scan_rows", "transpose_lds",
                      "gemm_mma", "conv_fwd_lds_halo", "attention_fwd", "topk_softmax", "gemm_int8"}


def config(name):
    family, number = name.split(":")
    with open(os.path.join(REPO, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        entry = next(c for c in json.load(handle)["configs"] if c["id"] == int(number))
    return family, entry


@pytest.fixture(scope="module")
def checkers():
    made = {flavor: Checker(checker_path(BUILD, find_flavor(flavor).major)) for flavor in flavor_names()}
    yield made
    for checker in made.values():
        checker.close()


def launches(kemit_cpp, family, entry):
    built = kemit_cpp.emit(family, entry["arch"], entry["spec"], flavor_names())
    assert not built["rejected"], built["reason"]
    return built, [json.loads(text) for text in kemit_cpp.largest_launches(built["plan"], SEED)]


def with_fill(launch, full, reference):
    """Every buffer filled with values of its element type (the config's, or the reference's own
    `witness_fills`): the references read them so."""
    fills = reference.witness_fills(full) if hasattr(reference, "witness_fills") else {}
    for name, spec in launch["buffers"].items():
        spec["fill"] = fills.get(name, full["dtype"])
    return launch


@pytest.mark.parametrize("name", SAMPLE)
def test_the_largest_launch_runs_its_first_and_last_workgroups(kemit_cpp, checkers, name):
    family, entry = config(name)
    built, largest = launches(kemit_cpp, family, entry)
    assert largest, f"{name}: the plan has no launch that runs at its largest sizes"
    full = kemit_cpp.parse_spec(family, entry["spec"])
    modules = {section["flavor"]: section["text"] for section in built["ll"] if not section.get("rejected")}
    # one kernel: its outputs are the launch's alone (a split plan's first pass feeds its second)
    sampled = family in SAMPLED_REFERENCES and len({launch["kernel"] for launch in largest}) == 1
    for launch in largest:
        scalar, most = TOO_LONG.get(family, ("", 0))
        if scalar and launch["args"].get(scalar, 0) > most:
            continue
        if sampled:
            launch = with_fill(launch, full, importlib.import_module(f"references.{family}"))
        reports = [("interpreter", kemit_cpp.witness(built["canonical"], launch))]
        for flavor, text in modules.items():
            report, error = checkers[flavor].witness(text, f"{name}.{flavor}.ll", launch)
            assert error == "", (name, flavor, error)
            reports.append((flavor, report))
        for runner, report in reports:
            assert report["runs"] and all(run["ok"] for run in report["runs"]), (name, runner, launch["kernel"],
                                                                                 report["runs"])
            if sampled:
                reference = importlib.import_module(f"references.{family}")
                mismatches, counts = witness.compare_sampled(report, launch, reference.sampled_outputs(full, launch))
                assert mismatches == [] and sum(counts.values()) > 0, (name, runner, mismatches, counts)


def test_a_plan_that_is_not_one_is_refused_naming_its_line(kemit_cpp):
    with pytest.raises(ValueError, match="line 2"):
        kemit_cpp.largest_launches("; kemit launch plan 2\nsize n 5..1\n")

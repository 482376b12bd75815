"""kemit_harness (parity/pyharness/): both engines side by side through their protocol workers.

With the real engines (ctest sets KEMIT_BUILD_DIR): every parity config agrees, and the same error
is the same exception type from either engine. With fake engines (tests/driver/fixtures/
fake_engine.py): the harness works with any command that speaks the protocol, and a difference
is reported at its first differing line.
"""
import glob
import json
import os

import pytest

from repo_paths import REPO
from kemit_harness import EngineError, EngineMismatch, Engines, UnknownFamily, UnknownFlavor

PYTHON = "/usr/bin/python3"
FAKE = os.path.join(REPO, "tests", "driver", "fixtures", "fake_engine.py")
FLAVORS = ["llvm16", "llvm19", "llvm22"]


def fake(engine, *flags):
    return [PYTHON, FAKE, "--serve", "--engine", engine, *flags], {}


@pytest.fixture(scope="module")
def engines(build_dir):
    with Engines(root=REPO, build=build_dir) as both:
        yield both


def parity_configs():
    for path in sorted(glob.glob(os.path.join(REPO, "parity", "configs", "*.json"))):
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        for config in document["configs"]:
            yield pytest.param(document["family"], config, id=f"{document['family']}:{config['id']}")


@pytest.mark.parametrize("family,config", list(parity_configs()))
def test_both_engines_agree_on_every_parity_config(engines, family, config):
    result = engines.emit(family, config["arch"], config["spec"], FLAVORS, engine="both")
    assert result.rejected == (config["expect"] == "reject")


@pytest.mark.parametrize("engine", ["py", "cpp"])
def test_one_exception_type_per_error_whichever_engine(engines, engine):
    with pytest.raises(UnknownFamily, match=f"unknown family 'nope' \\(the {engine} engine serves: "):
        engines.emit("nope", "gfx942", {}, ["llvm19"], engine=engine)
    with pytest.raises(UnknownFlavor, match="unknown flavor 'llvm17' \\(known: llvm16, llvm19, llvm22; "
                                            "a newer llvmN resolves to llvm22\\)"):
        engines.emit("elementwise", "gfx942", {}, ["llvm17"], engine=engine)
    refused = engines.emit("elementwise", "gfx942", {"vec": 3}, ["llvm19"], engine=engine)
    assert refused.rejected and refused.reason == "vec must be one of 1, 2, 4, 8 (got 3)"


def test_aliases_resolve_as_the_clis_do(engines):
    with pytest.warns(UserWarning, match="note: flavor llvm23 is not in the table; using llvm22"):
        result = engines.emit("elementwise", "gfx942", {"op": "add"}, ["llvm23"], engine="both")
    assert [section.flavor for section in result.ll] == ["llvm22"]


def test_flavors_must_be_a_list_of_names():
    harness = Engines(commands={"py": fake("py"), "cpp": fake("cpp")})
    with pytest.raises(TypeError, match="flavors must be a list of flavor names such as \\['llvm19', 'llvm22'\\], "
                                        "not str 'llvm22'"):
        harness.emit("alpha", "gfx942", {}, "llvm22")
    with pytest.raises(TypeError, match="each flavor must be a str such as 'llvm19', not int 19"):
        harness.emit("alpha", "gfx942", {}, [19])
    with pytest.raises(ValueError, match="engine must be one of py, cpp, both \\(got 'rust'\\)"):
        harness.emit("alpha", "gfx942", {}, ["llvm19"], engine="rust")
    harness.close()


def test_any_protocol_engine_serves_and_agreement_passes():
    with Engines(commands={"py": fake("py"), "cpp": fake("cpp")}) as harness:
        result = harness.emit("alpha", "gfx942", {"gate": ["llvm16"]}, FLAVORS)
    assert result.kernel_name == "alpha_0"
    assert result.ll[0].rejected and result.ll[0].reason == "gfx942 needs flavor llvm22 or newer (got llvm16)"
    assert result.ll[1].text.endswith("  ret void\n}\n")


def test_mismatch_names_the_first_differing_line_not_the_common_start():
    with Engines(commands={"py": fake("py"), "cpp": fake("cpp", "--alter", "0")}) as harness:
        with pytest.raises(EngineMismatch) as mismatch:
            harness.emit("alpha", "gfx942", {}, ["llvm19"])
    assert str(mismatch.value) == ("alpha on gfx942: llvm19 text differs at line 4: '  ret void\\n' vs "
                                   "'  ret void ; altered\\n' (py vs cpp)")


def test_an_engine_error_or_crash_is_an_engine_error():
    with Engines(commands={"py": fake("py", "--error", "0"), "cpp": fake("cpp", "--crash", "0")}) as harness:
        with pytest.raises(EngineError, match="the py engine failed on alpha at gfx942: fake py exploded on config 0"):
            harness.emit("alpha", "gfx942", {}, ["llvm19"], engine="py")
        with pytest.raises(EngineError, match="the cpp engine's worker died \\(its stderr ends: .*about to crash"):
            harness.emit("alpha", "gfx942", {}, ["llvm19"], engine="cpp")


def test_both_engines_say_the_same_hello(engines):
    """The tables every harness tool takes from hello (families, flavors, arches, flavor and arch facts)."""
    py, cpp = dict(engines.worker("py").hello), dict(engines.worker("cpp").hello)
    assert (py.pop("engine"), cpp.pop("engine")) == ("py", "cpp")
    py.pop("id"), cpp.pop("id")
    assert py == cpp
    assert set(py) == {"status", "protocol", "families", "flavors", "arches", "flavor_facts", "arch_facts"}


def test_both_engines_parse_every_parity_spec_the_same(engines):
    """parse_spec (the numerics lane's spec defaults): the same spec, refusal or error from both."""
    requests = [{"op": "parse_spec", "family": family, "spec": config["spec"]}
                for family, config in (p.values for p in parity_configs())]
    requests += [{"op": "parse_spec", "family": "nope", "spec": {}}, {"op": "parse_spec", "family": "elementwise"}]
    answers = {engine: [engines.worker(engine).ask(r) for r in requests] for engine in ("py", "cpp")}
    for request, py, cpp in zip(requests, answers["py"], answers["cpp"]):
        py.pop("id"), cpp.pop("id")
        assert py == cpp, request
    statuses = [answer["status"] for answer in answers["py"]]
    assert statuses.count("ok") > 300 and "rejected" in statuses and statuses[-2:] == ["error", "error"]


def test_a_hung_worker_is_stopped_with_an_engine_error():
    with Engines(commands={"py": fake("py", "--hang", "0"), "cpp": fake("cpp")}, timeout=2) as harness:
        with pytest.raises(EngineError, match="the py engine's worker gave no answer within 2 s \\(its stderr ends: "
                                              ".*request 3 config 0"):
            harness.emit("alpha", "gfx942", {}, ["llvm19"], engine="py")


def test_a_launch_plan_that_differs_is_the_first_difference():
    from kemit_harness import EmitResult, first_difference
    plan = "; kemit launch plan 2\nbuffer x 64\nlaunch k grid 1,1,1 block 64 lds 0 args x=buffer:x\n"
    first = EmitResult(kernel_name="k", canonical="; kemit canonical IR 1\n", plan=plan)
    second = EmitResult(kernel_name="k", canonical="; kemit canonical IR 1\n", plan=plan.replace("1,1,1", "2,1,1"))
    assert first_difference(first, first) == ""
    assert first_difference(first, second).startswith("plan differs at line 3: ")

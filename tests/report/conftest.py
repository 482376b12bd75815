"""Shared helpers of tests/report: where the build is, running the lanes, reading reports."""
import json
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
FAKE = os.path.join(REPO, "tests", "driver", "fixtures", "fake_engine.py")
PYTHON = "/usr/bin/python3"

TOOLS = {
    "parity": [os.path.join(BUILD, "parity", "check_byte_identity")],
    "golden": [os.path.join(BUILD, "parity", "run_diff"), "--check-golden"],
    "llvm": [os.path.join(BUILD, "llvm_lane", "check_llvm")],
    "numerics": [os.path.join(BUILD, "parity", "check_numerics")],
    "fuzz": [os.path.join(BUILD, "parity", "kemit_fuzz")],
}
# The spec fuzzer's planted divergence (tests/spec_fuzz): a run with failing cases to report.
PLANTED = os.path.join(REPO, "tests", "spec_fuzz", "fixtures", "planted_engine.py")
KEMIT_REPORT = os.path.join(BUILD, "parity", "kemit_report")


def run(argv, env=None):
    full_env = dict(os.environ)
    full_env.pop("CI", None)
    full_env.update(env or {})
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=full_env, timeout=900)
    return done.returncode, done.stdout, done.stderr


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def fake_family(name, configs):
    return {"family": name, "configs": [dict(id=i, arch="gfx942", why="test", **c) for i, c in configs]}


@pytest.fixture
def fake_configs(tmp_path):
    """Families for the fake engines in which a shard alone cannot decide every row: beta emits
    in one config only, gated is N/A at two flavors, refused and empty are RED for lack of configs."""
    folder = tmp_path / "configs"
    folder.mkdir()
    families = {
        "alpha": [(i, {"expect": "emit", "spec": {"op": "add", "n": i}}) for i in range(1, 13)]
        + [(20 + i, {"expect": "reject", "spec": {"reject": f"no {i}"}}) for i in range(4)],
        "beta": [(1, {"expect": "emit", "spec": {"tile": 32}})]
        + [(10 + i, {"expect": "reject", "spec": {"reject": "no"}}) for i in range(8)],
        "gated": [(i, {"expect": "emit", "spec": {"gate": ["llvm16", "llvm19"], "tile": i}}) for i in range(1, 7)],
        "refused": [(i, {"expect": "reject", "spec": {"reject": "no"}}) for i in range(1, 6)],
        "empty": [],
    }
    intents = tmp_path / "intents"  # beside the configs, where check_llvm requires each family's
    intents.mkdir()
    for name, configs in families.items():
        (folder / f"{name}.json").write_text(json.dumps(fake_family(name, configs)))
        (intents / f"{name}.json").write_text(json.dumps({"family": name, "intents": [
            {"name": "no spill, no scratch", "require": "vgpr_spill == 0 && sgpr_spill == 0 && scratch == 0"}]}))
    return folder


def fake_engine_flags(py_flags="", cpp_flags=""):
    return ["--py-cmd", f"{PYTHON} {FAKE} --engine py {py_flags}", "--cpp-cmd", f"{PYTHON} {FAKE} --engine cpp {cpp_flags}"]

"""What the mutation tests share: `judge_mutant`, which runs kemit_mutate on one named mutant
(`family:config@section:operator:k`, with kemit_mutate's extra options, such as `--lanes llvm`) and gives
its run and its report entry, and `assert_numerics_only_kill`, the verdict a family's numerics-only
mutant must get."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def judge_mutant(build_dir, tmp_path):
    def judge(name, *extra):
        folder = tmp_path / (name.replace(":", "_").replace("@", "_") + "".join(extra).replace("-", "_"))
        report = folder / "m.json"
        done = subprocess.run([sys.executable, os.path.join(REPO, "parity", "mutate", "kemit_mutate.py"),
                               "--build", build_dir, "--out", str(folder / "out"), "--mutant", name,
                               "--json", str(report), *extra], cwd=REPO, capture_output=True, text=True, timeout=600)
        assert report.exists(), done.stdout + done.stderr
        (m,) = json.loads(report.read_text())["mutants"]
        return done, m
    return judge


def assert_numerics_only_kill(m, before, after, output):
    """The mutant (a report entry) was killed by the numerics lane alone, at `output`, and is the
    rewrite of `before` into `after`."""
    assert m["verdict"] == "KILLED", m
    assert m["how"].startswith("numerics NUMERIC_MISMATCH") and "; llvm" not in m["how"], m["how"]
    assert f": {output}: " in m["how"], m["how"]
    assert before in m["before"] and after in " ".join(m["after"]), m

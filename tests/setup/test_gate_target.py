"""The `gate` target builds every program ci/gate.sh runs (ci/setup.sh builds only that target
before the gate), so a new lane added to the gate cannot run a program its build left out."""
import os
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ["KEMIT_BUILD_DIR"])


def test_the_gate_target_builds_every_program_the_gate_runs():
    programs = re.findall(r'"\$build/([^"]+)"', (REPO / "ci" / "gate.sh").read_text())
    assert programs, "ci/gate.sh names no program of the build"
    commands = subprocess.run(["ninja", "-C", str(BUILD), "-t", "commands", "gate"], capture_output=True,
                              text=True, check=True).stdout
    built = set(re.findall(r" -o (\S+)", commands))
    missing = [program for program in programs if program not in built]
    assert not missing, f"ci/gate.sh runs {missing}, which `cmake --build BUILD --target gate` does not build"

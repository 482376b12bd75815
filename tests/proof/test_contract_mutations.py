"""Mutation tests of the proof lane (docs/contracts.md, "Witness runs"): four contract bugs planted
in what BOTH engines emit, alike (tests/proof/mutations/contract_mutation_engine.py rewrites each
answer), so parity stays GREEN while `check_llvm --proofs` must refute each one, with its witness,
and the witness run must show the undefined behaviour it causes, in the reference interpreter and in
every flavor's executor. The unmutated config is PROVEN, so each verdict is the mutation's doing."""
import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
WRAPPER = [sys.executable, os.path.join(REPO, "tests", "proof", "mutations", "contract_mutation_engine.py")]
CPP = [os.path.join(BUILD, "cpp_engine", "kemit_emit"), "--serve"]
PY = ["env", f"PYTHONPATH={os.path.join(REPO, 'py_engine')}", "/usr/bin/python3", "-m", "kemit.emit", "--serve"]
# What a witness run shows when the undefined behaviour happens: a broken flag's poison or an access
# outside its view.
UNDEFINED = re.compile(r"promise broken|overflows|goes below zero|poison|out of bounds")

# mutation -> (config, the promise the lane's detail names: the first one refuted)
MUTATIONS = {
    "product": ("elementwise:1", "REFUTED nsw of `%6 = mul %5, %4"),
    "widened": ("elementwise:1", "REFUTED nsw of `%10 = mul %9, %4"),
    "guard": ("conv_fwd_lds_halo:1", "REFUTED bounds of `store %197, %198"),
    "nuw": ("reduce_rows:1", "REFUTED nuw of `%22 = mul %19, %21"),
}


def shell(words):
    return " ".join(words)


def check_llvm(config, engine_cmd):
    """The run and its failure lines (`family id flavor arch VERDICT: detail`)."""
    family, number = config.split(":")
    run = subprocess.run([os.path.join(BUILD, "llvm_lane", "check_llvm"), "--root", REPO, "--proofs", "--no-cache",
                          "--engine-cmd", engine_cmd, "--jobs", "2", config],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    lines = [line.strip() for line in run.stdout.splitlines() if line.strip().startswith(f"{family} {number} ")]
    return run, lines


def checked_flavors(stdout, config):
    """The flavors whose module of the config the lane checked (a processor some flavor lacks is N/A)."""
    family = config.split(":")[0]
    return sorted(line.split()[1] for line in stdout.splitlines()
                  if line.startswith(family + " ") and re.search(r" checked 1 ", line))


@pytest.mark.parametrize("config", sorted({config for config, _ in MUTATIONS.values()}))
def test_the_unmutated_configs_are_proven(config):
    run, lines = check_llvm(config, shell(CPP))
    assert run.returncode == 0 and "RESULT: GREEN" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_both_engines_mutated_alike_stay_identical(mutation):
    config, _ = MUTATIONS[mutation]
    run = subprocess.run([os.path.join(BUILD, "parity", "check_byte_identity"), "--root", REPO, "--build", BUILD,
                          "--cpp-cmd", shell(WRAPPER + [mutation, "--"] + CPP),
                          "--py-cmd", shell(WRAPPER + [mutation, "--"] + PY), config],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0 and "RESULT: GREEN" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_mutation_is_refuted_and_its_witness_runs_show_the_undefined_behaviour(mutation):
    config, first = MUTATIONS[mutation]
    run, lines = check_llvm(config, shell(WRAPPER + [mutation, "--"] + CPP))
    assert run.returncode == 1 and "RESULT: RED" in run.stdout, run.stdout + run.stderr
    assert sorted(line.split()[2] for line in lines) == checked_flavors(run.stdout, config), run.stdout
    for line in lines:
        flavor = line.split()[2]
        assert "PROOF_REFUTED: " + first in line, line
        witness = re.search(r"; witness (\{.*?\}\})", line)
        assert witness, line
        json.loads(witness.group(1))
        interpreter = re.search(r"witness run \(interpreter\): ([^;]*)", line)
        executor = re.search(r"witness run \(" + flavor + r" executor\): (.*)$", line)
        assert interpreter and executor, line
        assert UNDEFINED.search(interpreter.group(1)), line
        assert UNDEFINED.search(executor.group(1)), line

"""Mutation tests of the proof lane (docs/contracts.md, "Witness runs"): five contract bugs planted
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
    "row32": ("gemm_mma:1", "REFUTED nsw of `%64 = mul %62, %3"),
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


def mutated_answer(mutation, config):
    """The C++ engine's answer for `config`, through the mutation's worker (the protocol's emit)."""
    family, number = config.split(":")
    with open(os.path.join(REPO, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        entry = next(c for c in json.load(handle)["configs"] if c["id"] == int(number))
    request = {"id": 1, "op": "emit", "family": family, "config": entry["id"], "arch": entry["arch"],
               "spec": entry["spec"], "flavors": ["llvm22"]}
    run = subprocess.run(WRAPPER + [mutation, "--"] + CPP, input=json.dumps(request) + "\n", capture_output=True,
                         text=True, timeout=120)
    return json.loads(run.stdout.splitlines()[0])


def test_the_nuw_latch_from_minus_one_is_refuted_in_the_lowering_only():
    """The `nuw` mutation's own promise: the llvm22 section refutes the latch's `nuw` at -1, a promise
    the canonical IR does not make (its latch keeps its sign: nsw holds)."""
    answer = mutated_answer("nuw", MUTATIONS["nuw"][0])
    request = {"canonical": answer["canonical"], "plan": answer["plan"], "llvm": {"llvm22": answer["ll"]["llvm22"]["text"]},
               "limits": {"max_block_lanes": 1024, "max_grid_lanes": 4294967295, "lds_bytes": 65536, "wave_size": 64}}
    run = subprocess.run([os.path.join(BUILD, "proof", "kemit_prove")], input=json.dumps(request), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    sections = {section["section"]: section for section in json.loads(run.stdout)["sections"]}
    assert not any("latch nsw of `for %18" in line for line in sections["canonical"]["failures"])
    [latch] = [line for line in sections["llvm22"]["failures"] if line.startswith("REFUTED latch nuw of `for %18")]
    assert '"%18": -1' in latch, latch
    assert sections["llvm22"]["witness_launch"], sections["llvm22"]

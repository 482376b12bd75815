"""kemit_mutate (docs/mutation.md): the sampled campaign meets the floor stored in the tree, the
floor bites (a floor above the score, a planted weak oracle), every operator yields valid mutants
and is killed where a lane can kill it, the result cache never serves an original's verdict to a
mutant nor the reverse, and the mutating worker says what it is in its hello.

The campaign runs once per module (the other runs find the lanes' verdicts in the result cache:
the same texts are the same keys)."""
import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MUTATE = os.path.join(REPO, "parity", "mutate")
sys.path.insert(0, MUTATE)
import mutate_ops  # noqa: E402

TOOL = os.path.join(MUTATE, "kemit_mutate.py")
FLOOR = os.path.join(MUTATE, "floor.json")
# Operators no lane of today can kill, with the reason (docs/mutation.md, "Known survivor classes"):
# a test that asked for a kill would fail for the oracle's known weakness, not for a regression.
NOT_YET_KILLABLE = {
    "remove_fence": "equivalent in the lanes' sequentially consistent memory",
    "dpp_bound_ctrl": "needs inputs whose leading row lanes see the identity (adversarial inputs)",
    "flag_drop": "a dropped promise changes no defined result",
}


def mutate(build, out, *extra):
    return subprocess.run([sys.executable, TOOL, "--build", build, "--out", out, *extra], cwd=REPO,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def campaign(build_dir, tmp_path_factory):
    """The ctest campaign: 280 mutants of seed 1 over every family, section and operator."""
    folder = tmp_path_factory.mktemp("campaign")
    report = folder / "m.json"
    run = mutate(build_dir, str(folder / "out"), "--sample", "280", "--seed", "1", "--floor", FLOOR,
                 "--json", str(report), "--junit", str(folder / "m.xml"))
    return run, json.loads(report.read_text()) if report.exists() else None, folder


def test_the_sampled_campaign_meets_the_floor(campaign):
    run, report, _ = campaign
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "RESULT: GREEN" in run.stdout
    with open(FLOOR, encoding="utf-8") as handle:
        floor = json.load(handle)["score"]
    assert report["summary"]["score"] >= floor
    assert len(report["mutants"]) >= 200
    assert report["format"] == "kemit-report/1" and report["tool"] == "kemit_mutate" and report["lane"] == "mutate"
    assert {m["section"] for m in report["mutants"]} == {"canonical", "llvm16", "llvm19", "llvm22"}
    assert {m["operator"] for m in report["mutants"]} == set(mutate_ops.OPERATORS)


def test_every_survivor_is_listed_with_its_change_and_command(campaign):
    run, report, _ = campaign
    survivors = [m for m in report["mutants"] if m["verdict"] == "SURVIVED"]
    for m in survivors:
        assert m["before"] and f"--mutant {m['name']}" in m["repro"]
        assert f"--mutant {m['name']}" in run.stdout


def test_the_junit_report_is_valid_and_fails_each_survivor(campaign):
    _, report, folder = campaign
    done = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(REPO, "tests", "report", "junit.xsd"),
                           str(folder / "m.xml")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import junitparser
    xml = junitparser.JUnitXml.fromfile(str(folder / "m.xml"))
    failed = {case.name for suite in xml for case in suite
              if any(isinstance(r, junitparser.Failure) for r in case.result)}
    assert failed == {m["name"] for m in report["mutants"] if m["verdict"] == "SURVIVED"}


def test_every_operator_yields_valid_mutants_and_is_killed_where_a_lane_can(campaign):
    _, report, _ = campaign
    valid = {m["operator"] for m in report["mutants"] if m["verdict"] in ("KILLED", "SURVIVED", "EQUIVALENT")}
    killed = {m["operator"] for m in report["mutants"] if m["verdict"] == "KILLED"}
    assert valid == set(mutate_ops.OPERATORS)
    assert set(mutate_ops.OPERATORS) - killed <= set(NOT_YET_KILLABLE), sorted(set(mutate_ops.OPERATORS) - killed)


def test_a_score_below_the_floor_is_red(campaign, build_dir, tmp_path):
    """The draw judged without the reviewed ledger scores below the draw judged with it (its
    reviewed mutants become survivors): with the latter as the floor, the former is RED."""
    _, report, folder = campaign
    assert report["summary"]["reviewed"] > 0, "the draw holds no reviewed mutant: pick a seed whose draw does"
    floor = tmp_path / "floor.json"
    floor.write_text(json.dumps({"score": report["summary"]["score"]}))
    run = mutate(build_dir, str(folder / "out"), "--sample", "280", "--seed", "1", "--floor", str(floor),
                 "--no-reviewed")
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "RESULT: RED (score" in run.stdout and "is below the floor" in run.stdout


@pytest.mark.parametrize("content, says", [
    ("not json", "not a JSON object"),
    ('{"floor": 0.9}', "not a JSON object"),
    ('[0.9]', "not a JSON object"),
    ('{"score": 1.5}', "a number in [0, 1]"),
    ('{"score": "0.9"}', "a number in [0, 1]"),
    ('{"score": true}', "a number in [0, 1]"),
    ("[" * 100000, "not a JSON object"),
    (None, "not a regular file"),
])
def test_a_bad_floor_file_is_a_usage_error_before_any_mutant_runs(build_dir, tmp_path, content, says):
    floor = tmp_path / "floor.json"
    if content is None:
        os.mkfifo(floor)
    else:
        floor.write_text(content)
    run = mutate(build_dir, str(tmp_path / "out"), "--floor", str(floor))
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert f"--floor {floor}: " in run.stderr and says in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()


def test_a_planted_weak_oracle_falls_below_the_floor(campaign, build_dir):
    """The LLVM lane alone without its proofs (no numerics lane) is a weaker oracle: the same draw
    scores below the floor."""
    _, _, folder = campaign
    run = mutate(build_dir, str(folder / "weak"), "--sample", "280", "--seed", "1", "--floor", FLOOR,
                 "--lanes", "llvm", "--no-proofs")
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-2000:]
    assert "is below the floor" in run.stdout


def test_the_cache_never_serves_an_original_verdict_to_a_mutant_nor_the_reverse(campaign, build_dir, tmp_path):
    _, report, _ = campaign
    killed = next(m for m in report["mutants"] if m["verdict"] == "KILLED" and m["how"].startswith("numerics")
                  and m["section"] == "canonical")
    # The original config, with the plain engine, through the same (default) cache: GREEN.
    original = [os.path.join(build_dir, "parity", "check_numerics"), "--build", build_dir,
                f"{killed['family']}:{killed['config']}", "--section", "canonical"]
    first = subprocess.run(original, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-2000:]
    # The mutant again, after its original was stored: still killed.
    again = mutate(build_dir, str(tmp_path / "one"), "--mutant", killed["name"], "--lanes", "numerics")
    assert again.returncode == 0 and f"{killed['name']}: KILLED" in again.stdout, again.stdout[-2000:]
    # And the original after the mutant: still GREEN, now from the cache.
    second = subprocess.run(original, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0 and "RESULT: GREEN" in second.stdout, second.stdout[-2000:]
    assert re.search(r"cache: [1-9]\d* hits, 0 misses", second.stdout), second.stdout[-2000:]


def test_the_workers_hello_names_the_mutants(build_dir, tmp_path):
    mutants = tmp_path / "mutants.json"
    mutants.write_text(json.dumps({"mutants": []}))
    worker = subprocess.run(
        [sys.executable, os.path.join(MUTATE, "mutant_worker.py"), "--serve", "--mutants", str(mutants), "--lane",
         "numerics", "--engine-cmd", f"{build_dir}/cpp_engine/kemit_emit --serve"],
        input='{"id": 0, "op": "hello"}\n', capture_output=True, text=True, timeout=60)
    hello = json.loads(worker.stdout.splitlines()[0])
    assert hello["engine"] == "mutants-of-cpp"
    assert hello["mutants"]["lane"] == "numerics" and len(hello["mutants"]["sha256"]) == 64


CANONICAL = """  %5 = const {value=63} : i32
  %6 = sub %4, %5 {nsw} : i32
  %7 = icmp %6, %5 {pred=slt} : i1
  %8 = icmp %6, %5 {pred=eq} : i1
  %9 = select %7, %6, %5 : i32
  barrier
  %10 = update_dpp %9, %9 {ctrl=273} : i32
  %11 = mma %1, %2, %3 {instr=mfma_f32_32x32x8_f16} : <16 x f32>
  store %9, %0 {align=4}
  %12 = atomic_add %0, %9 {align=4, order=monotonic, scope=agent} : i32"""

LLVM = """  %v6 = sub nsw i32 %v4, 63
  %v7 = icmp slt i32 %v6, %v5
  %v8 = icmp eq i32 %v6, %v5
  %v9 = select i1 %v7, i32 %v6, i32 %v5
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  %v10.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %v10.old, i32 %v10.in, i32 273, i32 15, i32 15, i1 false)
  %v11.out = call i32 @llvm.amdgcn.ds.bpermute(i32 %v11.addr, i32 %v11.in)
  %v12 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %v1, <4 x half> %v2, <16 x float> %v3, i32 0, i32 0, i32 0)
  %v13 = load float, ptr addrspace(1) %v0, align 4
  store float %v13, ptr addrspace(3) %v14, align 4
  %v15 = atomicrmw add ptr addrspace(3) @counts, i32 %v9 syncscope("workgroup") monotonic, align 4
  %v16 = fmul float %v13, %v9.scale"""

EXPECTED = {
    ("canonical", "flag_add"): ["  %6 = sub %4, %5 {nsw, nuw} : i32"],
    ("canonical", "flag_drop"): ["  %6 = sub %4, %5 : i32"],
    ("canonical", "const_inc"): ["  %5 = const {value=64} : i32"],
    ("canonical", "const_dec"): ["  %5 = const {value=62} : i32"],
    ("canonical", "swap_operands"): ["  %6 = sub %5, %4 {nsw} : i32"],
    ("canonical", "swap_select"): ["  %9 = select %7, %5, %6 : i32"],
    ("canonical", "icmp_predicate"): ["  %7 = icmp %6, %5 {pred=sle} : i1"],
    ("canonical", "remove_barrier"): [],
    ("canonical", "dpp_ctrl"): ["  %10 = update_dpp %9, %9 {ctrl=274} : i32"],
    ("canonical", "swap_mma"): ["  %11 = mma %2, %1, %3 {instr=mfma_f32_32x32x8_f16} : <16 x f32>"],
    ("canonical", "drop_store"): [],
    ("canonical", "drop_atomic"): ["  %12 = load %0 {align=4} : i32"],
    ("llvm22", "flag_add"): ["  %v6 = sub nuw nsw i32 %v4, 63"],
    ("llvm22", "flag_drop"): ["  %v6 = sub i32 %v4, 63"],
    ("llvm22", "const_inc"): ["  %v6 = sub nsw i32 %v4, 64"],
    ("llvm22", "swap_operands"): ["  %v6 = sub nsw i32 63, %v4"],
    ("llvm22", "swap_select"): ["  %v9 = select i1 %v7, i32 %v5, i32 %v6"],
    ("llvm22", "icmp_predicate"): ["  %v7 = icmp sle i32 %v6, %v5"],
    ("llvm22", "remove_barrier"): [],
    ("llvm22", "remove_fence"): [],
    ("llvm22", "dpp_ctrl"): ["  %v10.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %v10.old, i32 %v10.in, i32 274, i32 15, i32 15, i1 false)"],
    ("llvm22", "dpp_row_mask"): ["  %v10.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %v10.old, i32 %v10.in, i32 273, i32 14, i32 15, i1 false)"],
    ("llvm22", "dpp_bound_ctrl"): ["  %v10.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %v10.old, i32 %v10.in, i32 273, i32 15, i32 15, i1 true)"],
    ("llvm22", "bpermute_lane"): ["  %v11.out.mutlane = add i32 %v11.addr, 4",
                                  "  %v11.out = call i32 @llvm.amdgcn.ds.bpermute(i32 %v11.out.mutlane, i32 %v11.in)"],
    ("llvm22", "swap_mma"): ["  %v12 = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %v2, <4 x half> %v1, <16 x float> %v3, i32 0, i32 0, i32 0)"],
    ("llvm22", "drop_store"): [],
    ("llvm22", "drop_atomic"): ["  %v15 = load i32, ptr addrspace(3) @counts, align 4"],
    ("llvm22", "move_address"): ["  %v0.mutaddr = getelementptr float, ptr addrspace(1) %v0, i64 1",
                                 "  %v13 = load float, ptr addrspace(1) %v0.mutaddr, align 4"],
    ("llvm22", "drop_factor"): ["  %v16 = fmul float %v13, 1.0"],
}


@pytest.mark.parametrize("section,operator", sorted(EXPECTED))
def test_each_operator_changes_the_first_site_as_documented(section, operator):
    text = CANONICAL if section == "canonical" else LLVM
    mutated, change = mutate_ops.apply(section, text, operator, 0)
    assert change is not None and change["after"] == EXPECTED[(section, operator)]
    assert mutated != text


def test_eq_and_ne_compares_are_not_swapped_and_llvm_only_operators_have_no_canonical_site():
    assert mutate_ops.count_sites("canonical", CANONICAL)["swap_operands"] == 2  # sub, slt; not eq
    assert mutate_ops.count_sites("llvm22", LLVM)["swap_operands"] == 2
    for operator in ("remove_fence", "dpp_row_mask", "dpp_bound_ctrl", "bpermute_lane", "move_address", "drop_factor"):
        assert mutate_ops.count_sites("canonical", CANONICAL)[operator] == 0


def test_a_site_rank_wraps_around_the_sites_of_a_smaller_text():
    _, first = mutate_ops.apply("llvm22", LLVM, "icmp_predicate", 0)
    _, wrapped = mutate_ops.apply("llvm22", LLVM, "icmp_predicate", first["sites"])
    assert wrapped["line"] == first["line"]
    assert mutate_ops.apply("llvm22", "  ret void", "swap_mma", 3) == ("  ret void", None)


def fake_table():
    config = {"id": 1, "arch": "gfx90a", "spec": {}}
    return [("alpha", config, "canonical", "const_inc", 50), ("alpha", config, "llvm22", "drop_store", 3),
            ("beta", dict(config, id=2), "llvm22", "const_inc", 7), ("beta", dict(config, id=2), "llvm22", "swap_mma", 1)]


def test_a_seed_draws_the_same_mutants_and_every_operator_gets_its_share():
    import kemit_mutate
    first = kemit_mutate.draw(fake_table(), 12, 5, set(), set())
    again = kemit_mutate.draw(fake_table(), 12, 5, set(), set())
    other = kemit_mutate.draw(fake_table(), 12, 6, set(), set())
    names = [kemit_mutate.mutant_name(m) for m in first]
    assert names == [kemit_mutate.mutant_name(m) for m in again]
    assert names != [kemit_mutate.mutant_name(m) for m in other]
    assert len(set(names)) == 12
    per_operator = {op: sum(m["operator"] == op for m in first) for op in ("const_inc", "drop_store", "swap_mma")}
    assert per_operator == {"const_inc": 8, "drop_store": 3, "swap_mma": 1}  # the short ones give their rest on
    assert {m["family"] for m in first if m["operator"] == "const_inc"} == {"alpha", "beta"}


def test_shard_reports_merge_into_the_run_and_refuse_a_missing_shard(tmp_path, capsys):
    import kemit_mutate
    def shard(index, verdicts):
        mutants = [{"name": f"alpha:1@llvm22:const_inc:{index * 10 + i}", "family": "alpha", "config": 1,
                    "section": "llvm22", "operator": "const_inc", "k": index * 10 + i, "verdict": v, "how": "",
                    "before": "  %v1 = add i32 %v0, 1", "after": ["  %v1 = add i32 %v0, 2"], "line": 3}
                   for i, v in enumerate(verdicts)]
        path = tmp_path / f"s{index}.json"
        path.write_text(json.dumps({"run_key": ["kemit_mutate", "--sample", "4"], "shard": {"index": index, "count": 2},
                                    "seed": 1, "sample": 4, "floor": None, "mutants": mutants}))
        return str(path)
    one, two = shard(1, ["KILLED", "SURVIVED"]), shard(2, ["KILLED", "EQUIVALENT"])
    merged = tmp_path / "m.json"
    assert kemit_mutate.main(["--merge", one, two, "--json", str(merged)]) == 0
    report = json.loads(merged.read_text())
    assert report["summary"]["KILLED"] == 2 and report["summary"]["score"] == pytest.approx(2 / 3)
    assert "SURVIVED alpha config 1 [llvm22] const_inc" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        kemit_mutate.main(["--merge", one, "--json", str(merged)])
    assert stopped.value.code == 2


@pytest.mark.parametrize("flags,said", [
    (["--shard", "3/2"], "--shard takes K/N"),
    (["--operators", "flip_everything"], "unknown operator(s) flip_everything"),
    (["--mutant", "scan_rows:1"], "--mutant takes FAMILY:ID@SECTION:OPERATOR:K"),
    (["--lanes", "golden"], "--lanes takes numerics and/or llvm"),
    (["--only", "no_such_family"], "matches no family"),
])
def test_a_usage_error_is_exit_2_naming_what_to_do(build_dir, tmp_path, flags, said):
    run = mutate(build_dir, str(tmp_path / "out"), *flags)
    assert run.returncode == 2 and said in run.stderr, run.stderr


def test_two_shards_merge_into_the_whole_campaign(campaign, build_dir, tmp_path):
    _, report, _ = campaign
    shards = []
    for index in (1, 2):
        path = tmp_path / f"s{index}.json"
        run = mutate(build_dir, str(tmp_path / f"out{index}"), "--sample", "280", "--seed", "1",
                     "--shard", f"{index}/2", "--json", str(path))
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        shards.append(str(path))
    merged = tmp_path / "merged.json"
    run = subprocess.run([sys.executable, TOOL, "--merge", *shards, "--json", str(merged)], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    whole = json.loads(merged.read_text())
    assert sorted(m["name"] for m in whole["mutants"]) == sorted(m["name"] for m in report["mutants"])
    assert whole["summary"] == report["summary"]


@pytest.mark.parametrize("text, largest", [
    ("kernel @k {\n  arch gfx90a\n  attr flat_work_group_size 1,64\n", 64),
    ('attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }\nattributes #1 = { "amdgpu-flat-work-group-size"="1,32" }', 256),
    ("kernel @k {\n  arch gfx90a\n", None),
])
def test_the_largest_workgroup_is_read_from_either_spelling(text, largest):
    assert mutate_ops.largest_workgroup(text) == largest


@pytest.mark.parametrize("wave, largest, equivalent", [(64, 64, True), (32, 64, False), (64, None, False)])
def test_a_removed_barrier_is_equivalent_only_where_every_workgroup_is_one_wave(wave, largest, equivalent):
    import kemit_mutate
    change = {"wave_size": wave, "largest_workgroup": largest, "neighbours": ["", ""]}
    reason = kemit_mutate.equivalence({"operator": "remove_barrier"}, change, None)
    assert (reason is not None) == equivalent
    if equivalent:
        assert reason.startswith(f"every workgroup is one wave (at most {largest} work-items, wave size {wave})")


@pytest.mark.parametrize("section, before, mutant_code, equivalent", [
    ("llvm19", "  %v1 = icmp slt i32 %v0, 1024", "aa", True),
    ("llvm19", "  %v1 = icmp slt i32 %v0, 1024", "ab", False),
    ("llvm19", "@lds = internal addrspace(3) global [64 x float] undef", "aa", False),
    ("canonical", "  %1 = icmp %0, %2 {pred=slt} : i1", "aa", False),
])
def test_a_flavor_mutant_compiled_to_the_originals_code_is_equivalent(section, before, mutant_code, equivalent):
    import kemit_mutate
    m = {"family": "reduce_rows", "id": 9001, "orig": 2, "section": section}
    verdicts = {("code", "reduce_rows", 9001): mutant_code, ("original", "reduce_rows", 2): "aa"}
    reason = kemit_mutate.same_code(m, {"before": before}, verdicts)
    assert (reason is not None) == equivalent
    if equivalent:
        assert reason.startswith("llvm19's llc compiles it to the original's machine code")


def test_the_proof_pass_takes_verdicts_only_never_code_digests(tmp_path, monkeypatch):
    """The LLVM lane's report gives each module a verdict and a code digest; only the verdict may
    become a proof verdict (a digest read as one would kill every survivor)."""
    import kemit_mutate
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "reduce_rows.json").write_text(json.dumps(
        {"family": "reduce_rows", "configs": [{"id": 9001, "arch": "gfx90a", "expect": "emit", "spec": {}}]}))
    lane = {("llvm", "reduce_rows", 9001): ("LLVM_OK", ""), ("code", "reduce_rows", 9001): "ab" * 32}
    monkeypatch.setattr(kemit_mutate, "run_llvm", lambda *args: dict(lane))
    survivors = [{"family": "reduce_rows", "id": 9001}]
    proofs = kemit_mutate.proofs_for_survivors(None, str(tmp_path), "llvm19", "llvm22", survivors)
    assert proofs == {("proofs", "reduce_rows", 9001): ("LLVM_OK", "")}


def test_a_flavor_mutant_is_run_beside_the_canonical_section_and_a_canonical_one_alone():
    import kemit_mutate
    assert kemit_mutate.numerics_sections("llvm19") == "canonical,llvm19"
    assert kemit_mutate.numerics_sections(mutate_ops.CANONICAL) == "canonical"


def test_a_flavor_mutant_that_changes_a_rounding_is_diverged(build_dir, tmp_path):
    # softmax_rows 58 at llvm19: an element of a row's max read twice and its neighbour never; the
    # outputs stay within tolerance but are not the canonical section's bits. Judged together with a
    # second mutant: several --mutant names are one run.
    report = tmp_path / "m.json"
    names = ["softmax_rows:58@llvm19:const_dec:9", "moe_sorting:2@llvm16:const_dec:0"]
    run = mutate(build_dir, str(tmp_path / "out"), *[f for n in names for f in ("--mutant", n)], "--json", str(report))
    mutants = {m["name"]: m for m in json.loads(report.read_text())["mutants"]}
    assert sorted(mutants) == sorted(names), run.stdout + run.stderr
    diverged = mutants[names[0]]
    assert diverged["verdict"] == "KILLED" and diverged["how"].startswith("numerics NUMERIC_DIVERGED"), diverged
    # moe_sorting's clear kernel runs one workgroup at every launch: its id is 0, so the stride moved
    # by one changes no address (the lane evaluation's lone grid axes)
    lone = mutants[names[1]]
    assert lone["verdict"] == "EQUIVALENT" and "the workgroup id is 0 on x" in lone["how"], lone
    assert run.returncode == 0, run.stdout + run.stderr

"""kemit_mutate: the harness's mutation score (docs/mutation.md).

    kemit_mutate --sample 280 --seed 1 --floor parity/mutate/floor.json     # the ctest campaign
    kemit_mutate --sample 4000 --seed 1 --jobs 2 --json m.json             # the full campaign
    kemit_mutate --mutant scan_rows:12@llvm22:dpp_bound_ctrl:3             # one mutant, reproduced

It emits every selected config with the engine's worker, counts each operator's sites in each
section (parity/mutate/mutate_ops.py), draws the mutants for a seed, writes each section's mutants
as a generated config folder (the original spec under a mutant id, the tree's intents beside it),
and runs the numerics lane and the LLVM lane once per section over that folder with the mutating
worker (parity/mutate/mutant_worker.py) as `--engine-cmd`. Every verdict comes from those lanes.
"""
import argparse
import collections
import datetime
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate_ops  # noqa: E402
import launch_equivalence  # noqa: E402
import lane_equivalence  # noqa: E402
import reviewed  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "numerics"))
from module_source import EngineWorker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"
TOOL = "kemit_mutate"
# The LLVM lane's verdicts that say the flavor's LLVM refused the text itself: an invalid mutant.
INVALID_LLVM = ("PARSE_ERROR", "VERIFY_ERROR")
MUTANT_NAME = re.compile(r"^([a-z0-9_]+):(\d+)@([a-z0-9]+):([a-z_]+):(\d+)$")


def usage(message):
    print(f"{TOOL}: {message}", file=sys.stderr)
    sys.exit(2)


def start_engine(build):
    try:
        return EngineWorker([os.path.join(build, "cpp_engine", "kemit_emit"), "--serve"], None)
    except RuntimeError as error:
        usage(str(error))


def load_configs(root, only):
    folder = os.path.join(root, "parity", "configs")
    families = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        family = name[:-5]
        if only and not any(part in family for part in only):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            configs = json.load(handle)["configs"]
        families[family] = [c for c in configs if c.get("expect") == "emit"]
    if not families:
        usage(f"--only {','.join(only)} matches no family of {folder}")
    return families


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_site_table(args, engine, families, flavors):
    """The site table, kept in <build>/mutate-sites/: counting every config's sites asks the engine
    for every config at every flavor, the same answer while the engine binary, the configs and the
    operators are unchanged (all three are in the key)."""
    key = hashlib.sha256(json.dumps({
        "engine": file_sha256(os.path.join(args.build, "cpp_engine", "kemit_emit")),
        "operators": file_sha256(os.path.join(HERE, "mutate_ops.py")),
        "configs": families, "flavors": flavors}, sort_keys=True).encode()).hexdigest()
    path = os.path.join(args.build, "mutate-sites", key + ".json")
    if not args.no_cache:
        try:
            with open(path, encoding="utf-8") as handle:
                rows = json.load(handle)
            configs = {(f, c["id"]): c for f, cs in families.items() for c in cs}
            return [(f, configs[(f, i)], s, o, n) for f, i, s, o, n in rows]
        except (OSError, ValueError, KeyError):
            pass
    table = site_table(engine, families, flavors)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump([(f, c["id"], s, o, n) for f, c, s, o, n in table], handle)
    os.replace(path + ".tmp", path)
    return table


def site_table(engine, families, flavors):
    """[(family, config, section, operator, sites)] for every selected config and section."""
    table = []
    for family, configs in families.items():
        for config in configs:
            answer = engine.ask({"op": "emit", "family": family, "config": config["id"], "arch": config["arch"],
                                 "spec": config["spec"], "flavors": flavors})
            if answer.get("status") != "ok":
                continue
            texts = [(mutate_ops.CANONICAL, answer["canonical"])]
            texts += [(f, answer["ll"][f]["text"]) for f in flavors if "text" in answer["ll"].get(f, {})]
            for section, text in texts:
                for operator, count in mutate_ops.count_sites(section, text).items():
                    if count:
                        table.append((family, config, section, operator, count))
    return table


def draw(table, sample, seed, operators, sections):
    """The mutants of a seed: every operator gets an equal share of `sample` (an operator with
    fewer sites gives its rest to the others), and within an operator every family an equal share;
    the sites of a share are drawn without repetition. `sample` 0 takes every site."""
    rng = random.Random(seed)
    by_op = collections.defaultdict(lambda: collections.defaultdict(list))
    for family, config, section, operator, count in table:
        if operators and operator not in operators or sections and section not in sections:
            continue
        by_op[operator][family].append((config, section, count))
    totals = {op: sum(c for fams in by_op[op].values() for _, _, c in fams) for op in by_op}
    quotas = fair_shares(totals, sample) if sample else totals
    mutants = []
    for operator in sorted(by_op):
        fams = by_op[operator]
        fam_totals = {f: sum(c for _, _, c in fams[f]) for f in fams}
        for family, share in sorted(fair_shares(fam_totals, quotas[operator]).items()):
            entries = fams[family]
            for index in sorted(rng.sample(range(fam_totals[family]), share)):
                for config, section, count in entries:
                    if index < count:
                        mutants.append({"family": family, "orig": config["id"], "section": section,
                                        "operator": operator, "k": index, "config": config})
                        break
                    index -= count
    return mutants


def fair_shares(totals, amount):
    """{key: share}: amount split evenly, no share above its total, the rest passed on."""
    shares = {key: 0 for key in totals}
    left = min(amount, sum(totals.values()))
    while left > 0:
        open_keys = sorted(k for k in totals if shares[k] < totals[k])
        each = max(1, left // len(open_keys))
        for key in open_keys:
            give = min(each, totals[key] - shares[key], left)
            shares[key] += give
            left -= give
            if left == 0:
                break
    return shares


def mutant_name(m):
    return f"{m['family']}:{m['orig']}@{m['section']}:{m['operator']}:{m['k']}"


def write_folders(out, root, mutants):
    """One generated config folder per section: configs/<family>.json (each mutant the original
    spec under its own id), intents/ (the tree's: the LLVM lane reads them beside the configs),
    and mutants.json (what the mutating worker changes)."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    sections = collections.defaultdict(list)
    for m in mutants:
        sections[m["section"]].append(m)
    for section, items in sections.items():
        folder = os.path.join(out, section)
        os.makedirs(os.path.join(folder, "configs"))
        shutil.copytree(os.path.join(root, "parity", "intents"), os.path.join(folder, "intents"))
        per_family = collections.defaultdict(list)
        for m in sorted(items, key=lambda m: m["id"]):
            config = {"id": m["id"], "arch": m["config"]["arch"], "expect": "emit",
                      "why": f"mutant {mutant_name(m)}", "spec": m["config"]["spec"]}
            if "expect_no_spill" in m["config"]:
                config["expect_no_spill"] = m["config"]["expect_no_spill"]
            per_family[m["family"]].append(config)
        for family, configs in per_family.items():
            with open(os.path.join(folder, "configs", f"{family}.json"), "w", encoding="utf-8") as handle:
                handle.write('{"family": "%s", "configs": [\n' % family)
                handle.write(",\n".join(json.dumps(c, sort_keys=True) for c in configs))
                handle.write("\n]}\n")
        with open(os.path.join(folder, "mutants.json"), "w", encoding="utf-8") as handle:
            json.dump({"mutants": [dict({k: m[k] for k in ("family", "id", "orig", "section", "operator", "k")},
                                        spec=m["config"]["spec"]) for m in items]}, handle, indent=0, sort_keys=True)
    return sorted(sections)


def worker_command(folder, lane, engine_cmd):
    return " ".join(shlex.quote(part) for part in [
        PYTHON, os.path.join(HERE, "mutant_worker.py"), "--serve", "--mutants", os.path.join(folder, "mutants.json"),
        "--lane", lane, "--engine-cmd", engine_cmd])


def lane_flags(args, configs):
    flags = ["--root", args.root, "--build", args.build, "--configs", configs, "--jobs", str(args.jobs)]
    return flags + (["--no-cache"] if args.no_cache else ["--cache", args.cache] if args.cache else [])


def engine_command(args):
    return shlex.join([os.path.join(args.build, "cpp_engine", "kemit_emit"), "--serve"])


def run_lanes(args, folder, section, newest):
    """Both lanes over one section's folder; {(lane, family, id): (verdict, detail)}. The LLVM lane
    runs without its proofs here: proofs_for_survivors gives them the mutants that survive."""
    verdicts = {}
    if "numerics" in args.lanes:
        report = os.path.join(folder, "numerics.json")
        run([os.path.join(args.build, "parity", "check_numerics"), *lane_flags(args, os.path.join(folder, "configs")),
             "--section", numerics_sections(section), "--timeout", str(args.timeout), "--engine-cmd", worker_command(folder, "numerics", engine_command(args)),
             "--json", report], folder, "numerics")
        for family, body in load_report(report, "numerics").get("families", {}).items():
            for case in body.get("configs", []):
                if case.get("section") == section:
                    verdicts[("numerics", family, case["id"])] = (case["verdict"], case.get("detail", ""))
    if "llvm" in args.lanes:
        verdicts.update(run_llvm(args, folder, os.path.join(folder, "configs"), section, newest, "llvm", False))
    return verdicts


def numerics_sections(section):
    """The sections the numerics lane runs for a section's mutants. A flavor's mutant models a
    lowering bug at that flavor: the lane runs the unchanged canonical text beside it, as it does
    for every config, and a flavor whose outputs differ from the canonical section's in any bit is
    NUMERIC_DIVERGED (docs/numerics.md, step 5). A canonical mutant models a bug in what the engine
    builds, which its lowering would carry to every flavor: its own section judges it."""
    return section if section == mutate_ops.CANONICAL else f"{mutate_ops.CANONICAL},{section}"


def run_llvm(args, folder, configs, section, newest, name, proofs):
    report = os.path.join(folder, f"{name}.json")
    flavor = newest if section == mutate_ops.CANONICAL else section
    run([os.path.join(args.build, "llvm_lane", "check_llvm"), *lane_flags(args, configs), "--flavor", flavor,
         "--proofs" if proofs else "--no-proofs", "--engine-cmd", worker_command(folder, "llvm", engine_command(args)),
         "--json", report], folder, name)
    modules = load_report(report, name).get("modules", [])
    verdicts = {("llvm", m["family"], m["config"]): (m["verdict"], m.get("detail", "")) for m in modules}
    verdicts.update({("code", m["family"], m["config"]): m.get("code_sha256", "") for m in modules})
    return verdicts


def original_codes(args, folder, section, mutants):
    """{("original", family, config): the machine code's sha256} of the original configs of
    `mutants` at the flavor `section`: the LLVM lane over the tree's configs (its result cache
    usually holds them), so that a mutant whose module compiles to the same code is known."""
    ids = collections.defaultdict(set)
    for m in mutants:
        ids[m["family"]].add(m["orig"])
    selection = [f"{family}:{','.join(str(i) for i in sorted(found))}" for family, found in sorted(ids.items())]
    report = os.path.join(folder, "originals.json")
    run([os.path.join(args.build, "llvm_lane", "check_llvm"), *lane_flags(args, os.path.join(args.root, "parity", "configs")),
         "--flavor", section, "--no-proofs", "--json", report, *selection], folder, "originals")
    return {("original", m["family"], m["config"]): m.get("code_sha256", "")
            for m in load_report(report, "originals").get("modules", [])}


def proofs_for_survivors(args, folder, section, newest, survivors):
    """The LLVM lane's proofs (docs/contracts.md) over the mutants every other check passed: a
    config folder of those alone. Proving every mutant is too slow to be a campaign (a refuted
    promise runs up to three witnesses of 10 s each, a hard one may search for minutes; measured
    at 3 canonical mutants a minute), and a mutant another check killed needs no proof."""
    configs = os.path.join(folder, "survivors")
    if os.path.isdir(configs):
        shutil.rmtree(configs)
    os.makedirs(configs)
    keep = {(m["family"], m["id"]) for m in survivors}
    for name in os.listdir(os.path.join(folder, "configs")):
        with open(os.path.join(folder, "configs", name), encoding="utf-8") as handle:
            data = json.load(handle)
        data["configs"] = [c for c in data["configs"] if (data["family"], c["id"]) in keep]
        if data["configs"]:
            with open(os.path.join(configs, name), "w", encoding="utf-8") as handle:
                json.dump(data, handle)
    proven = run_llvm(args, folder, configs, section, newest, "proofs", True)
    return {("proofs",) + key[1:]: verdict for key, verdict in proven.items() if key[0] == "llvm"}


def launch_reasons(args, mutants, flavors):
    """{mutant name: the reason} of the mutants that the plan's launch facts prove equivalent
    (launch_equivalence.py, lane_equivalence.py): asked of the flavor's LLVM, of the contract
    prover and of the lane evaluation, for each mutant's own spec."""
    engine = start_engine(args.build)
    prove = os.path.join(args.build, "proof", "kemit_prove")
    found = {}
    try:
        hello = engine.ask({"op": "hello"})
        facts = {f.get("name"): f for f in hello.get("arch_facts", [])}
        for m in mutants:
            reason = launch_reason(engine, prove, m, flavors, facts)
            if reason:
                found[mutant_name(m)] = reason
    except RuntimeError as error:
        usage(f"the engine failed while the mutants' launch facts were asked: {error}")
    finally:
        engine.close()
    return found


def launch_equivalences(args, survivors, flavors):
    """The survivors that the launch facts prove equivalent get that verdict, with the reason."""
    reasons = launch_reasons(args, survivors, flavors)
    for m in survivors:
        if mutant_name(m) in reasons:
            m["verdict"], m["how"] = "EQUIVALENT", reasons[mutant_name(m)]


def numerics_kills(mutants):
    return [m for m in mutants if m["verdict"] == "KILLED" and m["how"].startswith("numerics")]


def contradicted_equivalences(args, mutants, flavors):
    """[(mutant, reason)] of the mutants the numerics lane kills that a launch fact would call
    equivalent: each is a rule that is not sound (the lanes ran the mutant and saw it differ)."""
    killed = numerics_kills(mutants)
    reasons = launch_reasons(args, killed, flavors)
    return [(m, reasons[mutant_name(m)]) for m in killed if mutant_name(m) in reasons]


def launch_reason(engine, prove, m, flavors, facts):
    """Why a survivor cannot change a result at any launch its plan allows, or None."""
    config, section, arch = m["config"], m["section"], m["config"]["arch"]
    answer = engine.ask({"op": "emit", "family": m["family"], "config": m["orig"], "arch": arch,
                         "spec": config["spec"], "flavors": flavors})
    if answer.get("status") != "ok":
        return None
    text = answer["canonical"] if section == mutate_ops.CANONICAL else (answer.get("ll", {}).get(section) or {}).get("text")
    if text is None:
        return None
    mutated, change = mutate_ops.apply(section, text, m["operator"], m["k"])
    if change is None:
        return None
    blocks = launch_equivalence.plan_blocks(answer.get("plan"))
    lone = launch_equivalence.plan_lone_axes(answer.get("plan"))
    arch_facts = facts.get(arch, {})
    if m["operator"] == "dpp_bound_ctrl":
        reason = launch_equivalence.full_wave_at_dpp(mutated, change["line"] - 1, blocks, arch_facts.get("wave_size"),
                                                     section, arch)
        if reason:
            return reason
    compare = launch_equivalence.disagreement(section, change["before"], change["after"])
    if compare is not None:
        limits = {key: arch_facts.get(key) for key in ("max_block_lanes", "max_grid_lanes", "lds_bytes", "wave_size")}
        name, differs = compare
        answers = launch_equivalence.prover_answers(prove, answer["canonical"], answer.get("plan", ""), limits,
                                                    [(name, d) for d in differs])
        reason = launch_equivalence.sides_never_meet(name, differs, answers or {}, change["before"])
        if reason:
            return reason
    if section == mutate_ops.CANONICAL:
        return lowered_equivalence(engine, answer, mutated, flavors, (blocks, lone), arch_facts.get("wave_size"), arch)
    return lane_equivalence.same_where_read(text, mutated, change["line"] - 1, blocks, arch_facts.get("wave_size"),
                                           section, arch, lone)


def lowered_equivalence(engine, answer, mutated, flavors, launches, wave_size, arch):
    """Why a canonical mutant changes no module the engine ships: lowered by the engine at every
    flavor, each module is the original's or equivalent to it by the lane evaluation; else None.
    `launches`: the plan's (workgroup sizes, lone grid axes) of each kernel."""
    blocks, lone = launches
    found = []
    for flavor in flavors:
        shipped = answer.get("ll", {}).get(flavor) or {}
        if "rejected" in shipped:
            continue  # the engine ships no module for this processor at this flavor
        original = shipped.get("text")
        lowered = engine.ask({"op": "lower", "canonical": mutated, "flavors": [flavor]})
        text = (lowered.get("ll", {}).get(flavor) or {}).get("text") if lowered.get("status") == "ok" else None
        if original is None or text is None:
            return None
        line = lane_equivalence.first_difference(original, text)
        if line is None:
            found.append(f"{flavor}: the original's module")
            continue
        if not lane_equivalence.same_where_read(original, text, line, blocks, wave_size, flavor, arch, lone):
            return None
        found.append(f"{flavor}: equivalent by the lane evaluation")
    return (f"lowered by the engine at every flavor that ships a module for {arch}, none changes ({'; '.join(found)})"
            if found else None)


def run(argv, folder, lane):
    with open(os.path.join(folder, f"{lane}.log"), "w", encoding="utf-8") as log:
        code = subprocess.call(argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    if code not in (0, 1):
        usage(f"the {lane} lane stopped with exit {code} over {folder}; its output: {folder}/{lane}.log")


def load_report(path, lane):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        usage(f"the {lane} lane wrote no report {path} ({error}); its output: {os.path.dirname(path)}/{lane}.log")


def applied(folder, lane, m):
    try:
        with open(os.path.join(folder, "applied", lane, f"{m['family']}.{m['id']}.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def equivalence(m, change, proofs):
    """The reason a surviving mutant cannot change a result, or None (docs/mutation.md, "Verdicts");
    `proofs` is the LLVM lane's verdict with its proofs on, when it ran."""
    if m["operator"] == "flag_add" and proofs and proofs[0] == "LLVM_OK":
        # The prover maps every flag of every LLVM line and every canonical nsw/nuw to an
        # obligation and leaves none unproven (docs/contracts.md): LLVM_OK means it was PROVEN.
        return "the contract prover proves the added promise holds at every launch the plan allows"
    if m["operator"] == "flag_drop":
        return "a dropped nsw/nuw/exact promise leaves every defined result unchanged"
    waves = change.get("wave_size"), change.get("largest_workgroup")
    if m["operator"] == "remove_barrier" and None not in waves and waves[1] <= waves[0]:
        return (f"every workgroup is one wave (at most {waves[1]} work-items, wave size {waves[0]}): its lanes run in "
                "lockstep, so the barrier orders nothing; LLVM 16, 19 and 22 emit no s_barrier for it either")
    if m["operator"] == "remove_fence" and any("@llvm.amdgcn.s.barrier()" in n for n in change.get("neighbours", [])):
        return ("a fence beside an s.barrier: the lanes run memory sequentially consistent, so it orders nothing "
                "the barrier does not (on hardware the release/acquire pair matters; not killable by a CPU lane)")
    return None


def same_code(m, change, verdicts):
    """The reason a flavor's mutant is equivalent when that flavor's llc compiles it to the very
    machine code of the original config (the hardware runs the same instructions), else None. Only
    for a changed instruction (an indented line): the code text leaves out the kernel descriptor,
    which a changed global or attribute could move."""
    mutant, original = verdicts.get(("code", m["family"], m["id"])), verdicts.get(("original", m["family"], m["orig"]))
    instruction = change.get("before", "").startswith("  ")
    if m["section"] == mutate_ops.CANONICAL or not instruction or not mutant or mutant != original:
        return None
    return f"{m['section']}'s llc compiles it to the original's machine code (sha256 {mutant[:12]}): the hardware runs the same instructions"


def classify(m, folder, verdicts):
    """KILLED, SURVIVED, INVALID, EQUIVALENT or NOT_APPLIED, with how and what changed."""
    key = (m["family"], m["id"])
    records = {lane: applied(folder, lane, m) for lane in ("numerics", "llvm")}
    # The LLVM lane asks for the config's own spec, so its record names the drawn site itself.
    change = next((records[lane]["change"] for lane in ("llvm", "numerics")
                   if records[lane] and records[lane].get("change")), None)
    m["change"] = change
    m["changes"] = {lane: r.get("change") for lane, r in records.items() if r}
    key_verdicts = [verdicts.get((lane,) + key) for lane in ("numerics", "llvm")]
    if change is None:
        broken = [v for v in key_verdicts if v and v[0] not in ("NUMERIC_OK", "LLVM_OK", "NOT_APPLICABLE")]
        if broken:
            return "ERROR", f"no mutated text reached the lanes: {broken[0][0]}: {first_line(broken[0][1])}"
        return "NOT_APPLIED", "the operator has no site in the text the lanes asked for"
    invalid = next((r.get("invalid") for r in records.values() if r and r.get("invalid")), None)
    if invalid:
        return "INVALID", f"the canonical parser refuses it: {invalid.splitlines()[0]}"
    proofs = verdicts.get(("proofs",) + key)
    llvm = proofs or verdicts.get(("llvm",) + key)
    if llvm and m["section"] != mutate_ops.CANONICAL and llvm[0] in INVALID_LLVM:
        return "INVALID", f"{m['section']}'s LLVM refuses it: {llvm[0]}: {first_line(llvm[1])}"
    kills = []
    numerics = verdicts.get(("numerics",) + key)
    if numerics and numerics[0] != "NUMERIC_OK":
        kills.append(f"numerics {numerics[0]}: {first_line(numerics[1])}")
    if llvm and llvm[0] not in ("LLVM_OK", "NOT_APPLICABLE"):
        kills.append(f"llvm{' (proofs)' if proofs else ''} {llvm[0]}: {first_line(llvm[1])}")
    if kills and m["operator"] == "flag_drop" and not (numerics and numerics[0] != "NUMERIC_OK") \
            and proofs and proofs[0] == "PROOF_UNPROVEN":
        # Every original config is PROVEN, so its promises never break and the mutant computes
        # the same values: the prover's doubt is a false alarm, recorded with the mutant.
        return "EQUIVALENT", ("a dropped nsw/nuw/exact promise leaves every defined result unchanged; the prover "
                              f"then leaves an obligation UNPROVEN (a false alarm): {first_line(proofs[1])}")
    if kills:
        return "KILLED", "; ".join(kills)
    if numerics is None and "numerics" in m.get("lanes", ()):
        return "NOT_APPLIED", "the numerics lane did not judge it"
    reason = equivalence(m, change, proofs) or same_code(m, change, verdicts)
    if reason:
        return "EQUIVALENT", reason
    return "SURVIVED", "every lane passed it"


def first_line(text):
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def score_of(counts):
    valid = counts["KILLED"] + counts["SURVIVED"] + counts["EQUIVALENT"]
    judged = valid - counts["EQUIVALENT"]
    return (counts["KILLED"] / judged) if judged else None


def summarize(mutants, key):
    groups = collections.defaultdict(collections.Counter)
    for m in mutants:
        groups[key(m)][m["verdict"]] += 1
    return {name: dict(counts, score=score_of(counts)) for name, counts in sorted(groups.items())}


def repro(args, m):
    parts = [PYTHON, os.path.relpath(os.path.join(HERE, "kemit_mutate.py"), ROOT), "--mutant", mutant_name(m)]
    if os.path.abspath(args.build) != os.path.join(ROOT, "build"):
        parts += ["--build", args.build]
    return shlex.join(parts)


def git_commit(root):
    try:
        return subprocess.check_output(["git", "-C", root, "rev-parse", "HEAD"], text=True,
                                       stderr=subprocess.DEVNULL).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_json(path, args, started, seconds, mutants, totals, floor):
    report = {
        "format": "kemit-report/1", "tool": TOOL, "tool_version": version(args.root), "lane": "mutate",
        "commit": git_commit(args.root), "started": started, "duration_seconds": round(seconds, 3),
        "repro": sys.argv, "run_key": [os.path.basename(sys.argv[0])] + strip_report_args(sys.argv[1:]),
        "shard": {"index": args.shard[0], "count": args.shard[1]} if args.shard else None,
        "seed": args.seed, "sample": args.sample, "floor": floor,
        "summary": totals,
        "by_family": summarize(mutants, lambda m: m["family"]),
        "by_section": summarize(mutants, lambda m: m["section"]),
        "by_operator": summarize(mutants, lambda m: m["operator"]),
        "mutants": [{"name": mutant_name(m), "family": m["family"], "config": m["orig"], "section": m["section"],
                     "operator": m["operator"], "k": m["k"], "verdict": m["verdict"], "how": m["how"],
                     "reviewed": bool(m.get("reviewed")),
                     "before": (m["change"] or {}).get("before"), "after": (m["change"] or {}).get("after"),
                     "line": (m["change"] or {}).get("line"), "lanes_saw": m.get("changes", {}),
                     "repro": repro(args, m)} for m in mutants],
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1, sort_keys=True)


# Flags that say where a shard writes or how fast it runs, not which mutants it judges: shards of
# one run may differ in them.
NOT_IN_RUN_KEY = ("--json", "--junit", "--shard", "--out", "--jobs")


def strip_report_args(argv):
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in NOT_IN_RUN_KEY:
            skip = True
            continue
        if arg.split("=")[0] in NOT_IN_RUN_KEY:
            continue
        out.append(arg)
    return out


def write_junit(path, args, seconds, mutants):
    """JUnit as every lane writes it (docs/reports.md): a suite `mutate.<family>`, a case per mutant;
    a survivor is a failure, an invalid, equivalent or unapplied mutant is skipped."""
    suites = ET.Element("testsuites", name=TOOL)
    by_family = collections.defaultdict(list)
    for m in mutants:
        by_family[m["family"]].append(m)
    total_failures = 0
    for family, items in sorted(by_family.items()):
        failures = sum(m["verdict"] == "SURVIVED" for m in items)
        skipped = sum(m["verdict"] in ("INVALID", "EQUIVALENT", "NOT_APPLIED") for m in items)
        errors = sum(m["verdict"] == "ERROR" for m in items)
        total_failures += failures
        suite = ET.SubElement(suites, "testsuite", name=f"mutate.{family}", tests=str(len(items)),
                              failures=str(failures), errors=str(errors), skipped=str(skipped), time="0",
                              timestamp=datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%S"))
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="format", value="kemit-report/1")
        ET.SubElement(props, "property", name="tool", value=f"{TOOL} {version(args.root)}")
        for m in items:
            case = ET.SubElement(suite, "testcase", name=mutant_name(m), classname=f"mutate.{family}", time="0")
            if m["verdict"] == "SURVIVED":
                failure = ET.SubElement(case, "failure", message=f"SURVIVED: {m['operator']} at {m['section']}",
                                        type="SURVIVED")
                failure.text = survivor_text(args, m)
            elif m["verdict"] == "ERROR":
                ET.SubElement(case, "error", message=f"ERROR: {m['how']}", type="ERROR")
            elif m["verdict"] in ("INVALID", "EQUIVALENT", "NOT_APPLIED"):
                ET.SubElement(case, "skipped", message=f"{m['verdict']}: {m['how']}")
    suites.set("tests", str(len(mutants)))
    suites.set("failures", str(total_failures))
    suites.set("errors", str(sum(m["verdict"] == "ERROR" for m in mutants)))
    suites.set("time", f"{seconds:.3f}")
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def survivor_text(args, m):
    change = m["change"] or {}
    after = change.get("after") or []
    small = (m.get("changes") or {}).get("numerics") or {}
    note = ""
    if small.get("mapped") == "rank":
        note = f"\n    the numerics lane's small spec has no op of that shape: it ran line {small.get('line')}: " \
               f"{(small.get('before') or '').strip()}"
    return (f"{m['family']} config {m['orig']} [{m['section']}] {m['operator']} (site {m['k']}), line {change.get('line')}\n"
            f"    before: {(change.get('before') or '').strip()}\n"
            f"    after:  {' / '.join(a.strip() for a in after) if after else '(removed)'}{note}\n"
            f"    reproduce: {repro(args, m)}")


def version(root):
    try:
        with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as handle:
            found = re.search(r"project\(\s*kemit\s+VERSION\s+([\d.]+)", handle.read())
        return found.group(1) if found else "unknown"
    except OSError:
        return "unknown"


def load_floor(path):
    """The floor's score, read before any mutant runs: a bad floor file is a usage error, not a
    traceback at the end of an hour's campaign."""
    if not os.path.isfile(path):
        usage(f"--floor {path}: not a regular file; give the floor's JSON file (parity/mutate/floor.json)")
    try:
        with open(path, encoding="utf-8") as handle:
            score = json.load(handle)["score"]
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as error:
        usage(f"--floor {path}: not a JSON object with a \"score\" ({type(error).__name__}: {error}); "
              f"write {{\"score\": F}} with F in [0, 1]")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        usage(f"--floor {path}: the score must be a number in [0, 1] (got {json.dumps(score)[:40]})")
    return float(score)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=TOOL, description="the harness's mutation score (docs/mutation.md)")
    parser.add_argument("--only", action="append", default=[], help="families whose name contains one of these (comma-separated)")
    parser.add_argument("--sample", type=int, default=280, help="mutants to draw (0: every site; default 280)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shard", help="K/N: judge only shard K of N of the drawn mutants")
    parser.add_argument("--operators", help="only these operators (comma-separated)")
    parser.add_argument("--sections", help="only these sections (canonical and flavor names, comma-separated)")
    parser.add_argument("--lanes", default="numerics,llvm", help="the lanes that judge (default numerics,llvm)")
    parser.add_argument("--mutant", action="append", default=[],
                        help="a mutant, FAMILY:ID@SECTION:OPERATOR:K, as a survivor's reproduce line names it "
                             "(repeat it to judge several in one run: a report's survivors after a lane got stronger)")
    parser.add_argument("--floor", help="a JSON file {\"score\": F}: exit 1 when the score is below F")
    parser.add_argument("--json")
    parser.add_argument("--junit")
    parser.add_argument("--out", help="the generated folders (default <build>/mutate)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--root", default=ROOT)
    parser.add_argument("--build")
    parser.add_argument("--cache", help="the lanes' result cache (default theirs)")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--timeout", type=float, default=30,
                        help="seconds the numerics lane gives one mutant (default 30; a mutated loop may never end)")
    parser.add_argument("--no-proofs", dest="proofs", action="store_false",
                        help="no contract proofs for the mutants that survive the other checks")
    parser.add_argument("--check-equivalences", action="store_true",
                        help="also ask the launch facts of every mutant the numerics lane kills: any it would call "
                             "equivalent is an unsound rule (exit 1)")
    parser.add_argument("--reviewed", default=os.path.join(HERE, "reviewed"),
                        help="the ledger folder of reviewed equivalences (default parity/mutate/reviewed)")
    parser.add_argument("--no-reviewed", dest="reviewed", action="store_const", const=None,
                        help="leave the reviewed equivalences out: the score the rules and lanes give alone")
    parser.add_argument("--judge-reviewed", action="store_true",
                        help="judge every mutant of the ledger: exit 1 when one is stale or a lane kills it")
    parser.add_argument("--merge", nargs="+", metavar="SHARD_JSON",
                        help="join the --json reports of every shard of one run into --json (and --junit)")
    parser.add_argument("--version", action="store_true")
    args = parser.parse_args(argv)
    args.root = os.path.abspath(args.root)
    args.build = os.path.abspath(args.build or os.path.join(args.root, "build"))
    args.out = os.path.abspath(args.out or os.path.join(args.build, "mutate"))
    args.only = [part for value in args.only for part in value.split(",") if part]
    args.lanes = [lane for lane in args.lanes.split(",") if lane]
    if set(args.lanes) - {"numerics", "llvm"} or not args.lanes:
        usage(f"--lanes takes numerics and/or llvm (got {','.join(args.lanes)})")
    args.operators = set(args.operators.split(",")) if args.operators else set()
    unknown = args.operators - set(mutate_ops.OPERATORS)
    if unknown:
        usage(f"unknown operator(s) {', '.join(sorted(unknown))} (known: {', '.join(mutate_ops.OPERATORS)})")
    args.sections = set(args.sections.split(",")) if args.sections else set()
    if args.shard:
        found = re.match(r"^(\d+)/(\d+)$", args.shard)
        if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
            usage(f"--shard takes K/N with 1 <= K <= N (got {args.shard})")
        args.shard = (int(found.group(1)), int(found.group(2)))
    if args.sample < 0:
        usage(f"--sample takes a count >= 0 (got {args.sample})")
    if args.merge and args.check_equivalences:
        usage("--check-equivalences judges mutants as they run; run it with the campaign, not with --merge")
    args.floor_score = load_floor(args.floor) if args.floor else None
    args.ledger = {}
    if args.reviewed and not args.merge:
        try:
            args.ledger = reviewed.load(args.reviewed)
        except reviewed.LedgerError as error:
            usage(str(error))
    if args.judge_reviewed:
        if not args.ledger:
            usage("--judge-reviewed: the ledger lists no mutant (or --no-reviewed left it out)")
        args.mutant += [name for name in args.ledger if name not in args.mutant]
    for name in args.mutant:
        if not MUTANT_NAME.match(name):
            usage(f"--mutant takes FAMILY:ID@SECTION:OPERATOR:K (got {name})")
    for tool in () if args.merge else ("cpp_engine/kemit_emit", "parity/check_numerics", "llvm_lane/check_llvm"):
        if not os.access(os.path.join(args.build, tool), os.X_OK):
            usage(f"no {tool} in the build {args.build}: build it (ninja -C {args.build}) or name another with --build")
    return args


def named_mutant(args, name):
    family, orig, section, operator, k = MUTANT_NAME.match(name).groups()
    configs = load_configs(args.root, [family]).get(family, [])
    config = next((c for c in configs if c["id"] == int(orig)), None)
    if config is None:
        usage(f"no emitting config {family}:{orig} in {args.root}/parity/configs/{family}.json")
    if operator not in mutate_ops.OPERATORS:
        usage(f"unknown operator {operator} (known: {', '.join(mutate_ops.OPERATORS)})")
    return {"family": family, "orig": int(orig), "section": section, "operator": operator, "k": int(k), "config": config}


def select(args, engine, flavors):
    if args.mutant:
        mutants = [named_mutant(args, name) for name in dict.fromkeys(args.mutant)]
        assign_ids(mutants)
        return mutants
    table = cached_site_table(args, engine, load_configs(args.root, args.only), flavors)
    mutants = draw(table, args.sample, args.seed, args.operators, args.sections)
    mutants.sort(key=lambda m: (m["family"], m["orig"], m["section"], m["operator"], m["k"]))
    assign_ids(mutants)
    if args.shard:
        mutants = [m for i, m in enumerate(mutants) if i % args.shard[1] == args.shard[0] - 1]
    return mutants


def assign_ids(mutants):
    """Each mutant's config id, from its name: the numerics lane seeds a config's inputs with its
    id, so a mutant gets the same inputs in a shard, in the whole run and in its `--mutant` repro
    (an id from its place in the folder gave one mutant another verdict in a shard)."""
    taken = collections.defaultdict(set)
    for m in mutants:
        number = int(hashlib.sha256(mutant_name(m).encode()).hexdigest()[:7], 16) + 1
        while number in taken[m["family"]]:
            number += 1  # two names of one family on one number: as unlikely as 1 in 2^28 a pair
        taken[m["family"]].add(number)
        m["id"] = number


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        print(f"{TOOL} {version(args.root)}")
        return 0
    started_clock = time.time()
    started = datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")
    if args.merge:
        return merge(args, started, started_clock)
    print(f"{TOOL} {version(args.root)}: tree {args.root}, build {args.build}, generated folders {args.out}")
    engine = start_engine(args.build)
    try:
        hello = engine.ask({"op": "hello"})
        mutants = select(args, engine, hello["flavors"])
    except RuntimeError as error:
        usage(str(error))
    finally:
        engine.close()
    flavors = hello["flavors"]
    if not mutants:
        usage("the selection draws no mutant (no operator has a site in the selected configs and sections)")
    sections = write_folders(args.out, args.root, mutants)
    for m in mutants:
        m["lanes"] = args.lanes
    for section in sections:
        folder = os.path.join(args.out, section)
        verdicts = run_lanes(args, folder, section, flavors[-1])
        judged = [m for m in mutants if m["section"] == section]
        for m in judged:
            m["verdict"], m["how"] = classify(m, folder, verdicts)
        survivors = [m for m in judged if m["verdict"] in ("SURVIVED", "EQUIVALENT")]
        if "llvm" in args.lanes and section != mutate_ops.CANONICAL and survivors:
            verdicts.update(original_codes(args, folder, section, survivors))
            for m in survivors:
                m["verdict"], m["how"] = classify(m, folder, verdicts)
            survivors = [m for m in judged if m["verdict"] in ("SURVIVED", "EQUIVALENT")]
        if "llvm" in args.lanes and args.proofs and survivors:
            verdicts.update(proofs_for_survivors(args, folder, section, flavors[-1], survivors))
            for m in survivors:
                m["verdict"], m["how"] = classify(m, folder, verdicts)
        survivors = [m for m in judged if m["verdict"] == "SURVIVED"]
        if survivors:
            launch_equivalences(args, survivors, flavors)
    stale, wrong = reviewed.apply(args.ledger, mutants, mutant_name)
    totals = collections.Counter(m["verdict"] for m in mutants)
    totals = {v: totals.get(v, 0) for v in ("KILLED", "SURVIVED", "EQUIVALENT", "INVALID", "NOT_APPLIED", "ERROR")}
    score = score_of(totals)
    floor = args.floor_score
    unsound = contradicted_equivalences(args, mutants, flavors) if args.check_equivalences else []
    seconds = time.time() - started_clock
    print_summary(args, mutants, totals, score, floor, seconds)
    for m, differs in stale:
        print(f"STALE reviewed equivalence {mutant_name(m)}: {differs}; the module changed since the review: "
              f"judge it again (--mutant) and review it anew, or remove it from {args.reviewed}")
    for m in wrong:
        print(f"WRONG reviewed equivalence {mutant_name(m)}: the lanes kill it ({first_line(m['how'])}); "
              f"remove it from {args.reviewed}")
    for m, reason in unsound:
        print(f"UNSOUND {mutant_name(m)}: the lanes kill it ({first_line(m['how'])}), "
              f"yet a launch fact calls it equivalent: {reason}")
    if args.json:
        write_json(args.json, args, started, seconds, mutants, dict(totals, score=score, reviewed=count_reviewed(mutants)), floor)
    if args.junit:
        write_junit(args.junit, args, seconds, mutants)
    if args.check_equivalences:
        killed = len(numerics_kills(mutants))
        if unsound or not killed:
            print(f"RESULT: RED ({len(unsound)} killed mutant(s) an equivalence rule calls equivalent: see UNSOUND above)"
                  if unsound else "RESULT: RED (--check-equivalences: the numerics lane killed no mutant to check against)")
            return 1
        print(f"equivalence rules checked against {killed} mutant(s) the numerics lane kills: none calls one equivalent")
    if wrong:
        print(f"RESULT: RED ({len(wrong)} mutant(s) the ledger calls equivalent are killed: see WRONG above)")
        return 1
    if args.judge_reviewed and stale:
        print(f"RESULT: RED ({len(stale)} reviewed equivalence(s) no longer pin the module the lanes ran: see STALE above)")
        return 1
    if args.mutant:
        return 0 if all(m["verdict"] != "SURVIVED" for m in mutants) else 1
    if floor is not None and (score is None or score < floor):
        print(f"RESULT: RED (score {fmt(score)} is below the floor {floor:.4f} of {args.floor})")
        return 1
    if totals["ERROR"]:
        print(f"RESULT: RED ({totals['ERROR']} mutant(s) never reached a lane: see ERROR above)")
        return 1
    print("RESULT: GREEN" if score is not None else "RESULT: RED (no valid mutant was judged)")
    return 0 if score is not None else 1


def merge(args, started, started_clock):
    """The shards' reports as one run's: every shard of the same run (run_key), each once."""
    reports = []
    for path in args.merge:
        try:
            with open(path, encoding="utf-8") as handle:
                reports.append(json.load(handle))
        except (OSError, ValueError) as error:
            usage(f"--merge: cannot read {path} ({error})")
    keys = {json.dumps(r.get("run_key")) for r in reports}
    shards = sorted((r.get("shard") or {}).get("index", 0) for r in reports)
    count = (reports[0].get("shard") or {}).get("count")
    if len(keys) != 1 or not count or shards != list(range(1, count + 1)):
        usage(f"--merge takes the reports of shards 1..N of one run (got shards {shards} of {count}, "
              f"{len(keys)} different run(s))")
    mutants = []
    for report in reports:
        for m in report["mutants"]:
            mutants.append(dict(m, orig=m["config"], change={"before": m["before"], "after": m["after"],
                                                             "line": m["line"]}, changes=m.get("lanes_saw", {})))
    args.shard, args.seed, args.sample = None, reports[0].get("seed"), reports[0].get("sample")
    counts = collections.Counter(m["verdict"] for m in mutants)
    totals = {v: counts.get(v, 0) for v in ("KILLED", "SURVIVED", "EQUIVALENT", "INVALID", "NOT_APPLIED", "ERROR")}
    score = score_of(totals)
    seconds = time.time() - started_clock
    print_summary(args, mutants, totals, score, reports[0].get("floor"), seconds)
    if args.json:
        write_json(args.json, args, started, seconds, mutants, dict(totals, score=score, reviewed=count_reviewed(mutants)),
                   reports[0].get("floor"))
    if args.junit:
        write_junit(args.junit, args, seconds, mutants)
    return 0


def count_reviewed(mutants):
    return sum(1 for m in mutants if m.get("reviewed"))


def fmt(score):
    return "n/a" if score is None else f"{score:.4f}"


def print_summary(args, mutants, totals, score, floor, seconds):
    for title, key in (("family", lambda m: m["family"]), ("section", lambda m: m["section"]),
                       ("operator", lambda m: m["operator"])):
        print(f"== by {title}")
        for name, counts in summarize(mutants, key).items():
            print(f"  {name:28} score {fmt(counts['score']):>6}  killed {counts.get('KILLED', 0)}, survived "
                  f"{counts.get('SURVIVED', 0)}, equivalent {counts.get('EQUIVALENT', 0)}, invalid "
                  f"{counts.get('INVALID', 0)}, not applied {counts.get('NOT_APPLIED', 0)}")
    survivors = [m for m in mutants if m["verdict"] == "SURVIVED"]
    for m in survivors:
        print("SURVIVED " + survivor_text(args, m))
    for m in mutants:
        if m["verdict"] == "ERROR":
            print(f"ERROR {mutant_name(m)}: {m['how']}")
    for m in mutants if args.mutant else ():
        change = m["change"] or {}
        print(f"{mutant_name(m)}: {m['verdict']}: {m['how']}")
        if change:
            print(f"    line {change.get('line')} before: {change.get('before', '').strip()}")
            print(f"    after: {' / '.join(a.strip() for a in change.get('after') or []) or '(removed)'}")
    print(f"mutants {len(mutants)}: killed {totals['KILLED']}, survived {totals['SURVIVED']}, equivalent "
          f"{totals['EQUIVALENT']} ({count_reviewed(mutants)} by review), invalid {totals['INVALID']}, not applied {totals['NOT_APPLIED']}, error {totals['ERROR']}; "
          f"score killed / (valid - equivalent) = {fmt(score)}{'' if floor is None else f' (floor {floor:.4f})'}; "
          f"{seconds:.1f} s")


if __name__ == "__main__":
    sys.exit(main())

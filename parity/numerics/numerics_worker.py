"""The numerics worker: what of the numerics lane must be Python (the plans, their inputs and the
numpy references), behind a line protocol like the engines' `--serve` (docs/numerics.md, "The
numerics worker"). `check_numerics` (parity/numerics/check_numerics.cpp) drives it for the configs
it finds neither in the result cache nor refused; kemit_fuzz drives it for fuzzed specs. Both use
the parity driver's worker pool, so a crash or a hang is isolated to one request and the worker is
respawned. One JSON object per line, in order:

    -> {"id": 0, "op": "hello"}
    <- {"id": 0, "status": "ok", "engine": "numerics", "protocol": 1, "families": [...], "flavors": []}

    -> {"id": 1, "op": "plan", "family": "gemm_mma", "config": 7,
        "arch": {"name": "gfx942", "wave_size": 64, "fp8_format": "fnuz"}, "spec": {the spec with the engine's defaults}}
    <- {"id": 1, "status": "ok", "spec_run": {the small spec}, "buffer_range": null | bytes}
     | {"id": 1, "status": "ok", "refused": "no numerics plan for family ... | too large ..."}

    -> {"id": 2, "op": "run", "family", "config", "arch", "spec" (as for plan), "spec_run",
        "launch_plan": "<the engine's plan text>", "sections": {"canonical": "<text>", "llvm19": "<module>"},
        "majors": {"llvm19": 19}}
    <- {"id": 2, "status": "ok", "results": [{"section", "verdict", "detail", "mismatch",
        "lane_instructions", "run_seconds", "seconds"}, ...]}   (in the order of "sections")

`plan` is the family's plan (`plan` of references/<family>.py) of the config: the spec to emit and the lowered buffer range
(test-only, docs/protocol.md). `run` builds the same case again (inputs from the fixed seed and the
config id, the reference's outputs), checks its spec is `spec_run`, runs each section's text: the
canonical text in the reference interpreter (kemit_cpp.run), a flavor's module in that flavor's
executor (the EXEC verb of kemit_llcheckN), launch by launch as the engine's plan orders them, and
compares the outputs with the reference. The worker asks no engine for these two: the texts and the
engine's facts (the processor's, each flavor's LLVM major) come in the request.

For kemit_fuzz (docs/fuzz.md), the worker also asks the C++ engine's worker itself:

    -> {"id": 6, "op": "work_limit", "configs": [{"family", "id", "arch", "spec"}, ...]}
    <- {"id": 6, "status": "ok", "work_limit": 123456}
    -> {"id": 7, "op": "numerics", "family": "gemm_mma", "config": 7, "arch": "gfx942", "spec": {...},
        "work_limit": 123456}
    <- {"id": 7, "status": "ok", "verdict": "NUMERIC_OK" | "NUMERIC_MISMATCH" | "NUMERIC_DIVERGED" | "NUMERIC_RACE"
        | "NUMERIC_SCHEDULE" | "NOT_EXECUTABLE" | "SKIPPED",
        "section": "llvm19", "detail": "...", "sections": {"canonical": "NUMERIC_OK", ...},
        "spec_run": {...}, "seconds": 0.12}

`verdict` is the first section's that is not NUMERIC_OK (its `section` and `detail`), else
NUMERIC_OK; `sections` holds every section's verdict (a flavor the engine refuses for the arch is
absent). SKIPPED: the spec is not small enough to run: the lane's plan cannot shrink it to a
problem it runs (its small spec is refused), or the problem is larger than 95% of the numbered
configs' (work = lanes launched x the canonical lines each lane runs, a line inside `for` loops
with constant bounds counted once per trip, within a few percent of the interpreter's lane
instructions; `work_limit` measures it over the numbered emitting configs kemit_fuzz sends, and
kemit_fuzz keeps it in the result cache, keyed by the configs, the lane's sources and the engine
binary, so that a later run does not pay the ~20 s again).
Skips are counted and reported, never a pass in disguise. Anything else is a failure of the spec.
"""
import argparse
import hashlib
import json
import math
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field, replace

import numpy as np

import plans
from executor_client import Checker, CheckerError, checker_path
from launch_plan import PlanError, parse_plan, runs
from module_source import ArchFacts, Built, EngineSource

VERDICTS = ("NUMERIC_OK", "NUMERIC_MISMATCH", "NUMERIC_DIVERGED", "NUMERIC_RACE", "NUMERIC_SCHEDULE", "NOT_EXECUTABLE")


@dataclass
class Result:
    family: str
    config: int
    verdict: str
    detail: str = ""
    mismatch: dict = None
    lane_instructions: int = 0
    interp_seconds: float = 0.0   # the interpreter's or the executor's own time
    seconds: float = 0.0
    spec: dict = field(default_factory=dict)
    section: str = "canonical"
    outputs_sha256: str = ""  # every output's bytes after every input set, in order (sections compare it)
    # per case that passed, in order, its outputs' bytes: a section that gets the same bytes for the
    # case passes the same comparison, so it need not compare again (run_section's `passed`)
    passed_outputs: list = field(default_factory=list, repr=False)
    cached: bool = False  # taken from the result cache: its counters were measured by an earlier run
    same_program_as: str = ""  # the earlier flavor whose run this is: its module decodes to the same program


class Checkers:
    """One executor (kemit_llcheckN) per flavor and thread, started on first use. `majors` (flavor ->
    LLVM major) comes from the engine's hello, through the request or the engine's worker."""

    def __init__(self, build, majors=None, env=None):
        self.build, self.env = build, env
        self.majors = dict(majors or {})
        self._local = threading.local()
        self._all, self._lock = [], threading.Lock()

    def version(self, flavor):
        """The LLVM version string the flavor's executor announces (part of its cache keys)."""
        return self.get(flavor).version

    def get(self, flavor):
        mine = getattr(self._local, "checkers", None)
        if mine is None:
            mine = self._local.checkers = {}
        if flavor not in self.majors:
            raise CheckerError(f"no LLVM major for flavor {flavor}: the engine's hello (flavor_facts) does not "
                               f"list it")
        if flavor not in mine or not mine[flavor].alive():  # a checker that died is replaced
            mine[flavor] = Checker(checker_path(self.build, self.majors[flavor]), self.env)
            with self._lock:
                self._all.append(mine[flavor])
        return mine[flavor]

    def close(self):
        for checker in self._all:
            checker.close()


def no_plan(family):
    return f"no numerics plan for family {family} (parity/numerics/references/{family}.py defines no `plan`)"


def make_cases(family, spec, arch, config_id, first_only=False):
    """[(input set, case)] of a config: the random inputs first, then each named set its family
    gives for the spec (plans.input_sets; a set of several cases names each "set (note)"); every
    case runs the same small spec and buffer range. first_only: the
    random case alone (what a plan request needs: its spec and buffer range)."""
    sets = plans.input_sets(family, spec)
    cases = []
    for inputs in sets[:1 if first_only else None]:
        made = plans.make_case(family, spec, arch, config_id, inputs)
        # a set of several launches (tile_ends): each case named by what tells it apart
        cases += [(f"{inputs} ({case.note})", case) for case in made] if isinstance(made, list) else [(inputs, made)]
    for inputs, case in cases[1:]:
        if (case.spec, case.buffer_range) != (cases[0][1].spec, cases[0][1].buffer_range):
            raise ValueError(f"the {inputs} inputs' case runs another spec or buffer range than the random one's")
    return cases


def config_cases(family, config, source):
    """The config's cases (make_cases), or None and a NOT_EXECUTABLE reason. The spec's defaults and the
    arch's wave size come from the engine's worker (the lane imports no engine code)."""
    arch, reason = source.arch(config["arch"])
    spec, refusal = source.parse_spec(family, config["spec"]) if arch else (None, "")
    if arch is None or spec is None:  # an unknown family or arch, a spec the engine refuses
        return None, f"the engine refuses the config: {reason or refusal}"
    if plans.family_plan(family) is None:
        return None, no_plan(family)
    try:
        return make_cases(family, spec, arch, config["id"]), ""
    except plans.TooLarge as error:
        return None, str(error)


def compare_outputs(result, case, buffers, inputs):
    for output in case.outputs:
        mismatch = plans.compare(output, buffers[output.name])
        if mismatch:
            result.verdict, result.mismatch = "NUMERIC_MISMATCH", dict(mismatch, inputs=inputs)
            named = "" if inputs == "random" else f"inputs {inputs}: "
            result.detail = (f"{named}{mismatch['output']}: {mismatch['bad']} of {mismatch['elements']} elements off; "
                             f"max abs error {mismatch['max_abs_error']:.6g}, max rel error {mismatch['max_rel_error']:.6g}; "
                             f"first bad index {mismatch['first_bad_index']}: got {mismatch['got']!r}, "
                             f"want {mismatch['want']!r} (tolerance {mismatch['tolerance']:.3g})")
            return


# The schedules a section runs after its in-order runs when they cannot decide every order
# (docs/numerics.md, "Races and schedules"): each reorders the waves between barriers and the
# workgroups, and its outputs must be the in-order run's bytes. Reverse costs one more run of the
# section; the random orders are for a deeper look (kemit_cpp.run and the EXEC verb take
# "random:SEED"), not the gate, as measured in bench/results.md.
SCHEDULES = ("reverse",)


def schedules_for(text):
    """The schedules of SCHEDULES that a section's text needs after its in-order runs. Without an
    atomic, the in-order run with the race detector decides them all: no two accesses to one byte
    were unordered, so in any order the barriers allow each read sees the write it saw in order
    (a kernel free of races is deterministic) and the outputs are the in-order bytes. An atomic's
    old value is its order's own, so a text that names one (any spelling) runs every schedule."""
    return SCHEDULES if "atomic" in text or "cmpxchg" in text else ()


class Race(RuntimeError):
    """Two accesses to one byte that nothing orders: the text names both and the byte."""


def run_plan(kemit_cpp, checkers, section, text, case, built, family, config_id, schedule, races):
    """The engine's launch plan run on a fresh copy of the inputs, launch by launch over views of the
    same buffers, on the canonical text in the interpreter or a flavor's module in its executor:
    (buffers, lane instructions, seconds). Raises Race, PlanError, CheckerError, or the run's error."""
    buffers = {name: array.copy() for name, array in case.buffers.items()}  # every run starts alike
    lanes, seconds = 0, 0.0
    for launch, grid, views, scalars in runs(parse_plan(built.plan), case_sizes(case), buffers, case.grid):
        block = launch.block  # in launch order, chunk by chunk
        if section == "canonical":
            try:
                stats = kemit_cpp.run(text, grid, block, views, scalars, kernel=launch.kernel, schedule=schedule,
                                      races=races)
            except kemit_cpp.RaceError as error:
                raise Race(str(error)) from error
            lanes, seconds = lanes + stats["lane_instructions"], seconds + stats["seconds"]
            continue
        name = f"{family}.{config_id}.{section}.ll"
        ok, error, count, took = checkers.get(section).execute(text, name, grid, block, views, scalars,
                                                               launch.kernel, schedule, races)
        lanes, seconds = lanes + count, seconds + took
        if not ok:
            raise Race(error) if error.startswith("race: ") else RuntimeError(f"ExecError: {error}")
    return buffers, lanes, seconds


def first_difference(case, want, got):
    """The first output byte where `got` differs from `want` (both a run's buffers), or None."""
    for output in case.outputs:
        a, b = want[output.name].view(np.uint8).ravel(), got[output.name].view(np.uint8).ravel()
        differ = np.flatnonzero(a != b)
        if differ.size:
            at = int(differ[0])
            return f"{output.name} byte {at}: 0x{int(b[at]):02x}, in order 0x{int(a[at]):02x}"
    return None


def run_section(kemit_cpp, checkers, section, text, cases, built, family, config_id, passed=None, schedules=None):
    """One section's Result: each input set's case run in order with the race detector and compared
    with the reference (the first failing set decides), then the random case in every schedule of
    `schedules` (default schedules_for(text)), whose outputs must be the in-order run's bytes.
    passed: another section's passed_outputs over the same cases (the canonical one's); a case with
    those very bytes passed the comparison there and is not compared again."""
    start = time.perf_counter()
    result = Result(family, config_id, "NUMERIC_OK", spec=cases[0][1].spec, section=section)
    outputs, in_order = hashlib.sha256(), None
    schedule, named = "in-order", ""

    def run(case, schedule, races):
        buffers, lanes, seconds = run_plan(kemit_cpp, checkers, section, text, case, built, family, config_id,
                                           schedule, races)
        result.lane_instructions, result.interp_seconds = result.lane_instructions + lanes, result.interp_seconds + seconds
        return buffers
    try:
        for inputs, case in cases:
            named = "" if inputs == "random" else f"inputs {inputs}: "  # which case stopped, as a mismatch says
            buffers = run(case, schedule, True)
            got = [plans.bits(buffers[output.name]).tobytes() for output in case.outputs]
            if not passed or len(passed) <= len(result.passed_outputs) or passed[len(result.passed_outputs)] != got:
                compare_outputs(result, case, buffers, inputs)
            if result.verdict != "NUMERIC_OK":
                break
            if in_order is None:  # the random inputs' run: what the schedules must reproduce
                in_order = buffers
            result.passed_outputs.append(got)
            outputs.update(b"".join(got))
        if schedules is None:
            schedules = schedules_for(text)
        for schedule in schedules if result.verdict == "NUMERIC_OK" else ():
            difference = first_difference(cases[0][1], in_order, run(cases[0][1], schedule, False))
            if difference:  # the in-order runs watched for races
                result.verdict, result.detail = "NUMERIC_SCHEDULE", f"schedule {schedule}: {difference}"
                break
    except Race as error:
        result.verdict, result.detail = "NUMERIC_RACE", str(error)
    except PlanError as error:
        result.verdict, result.detail = "NOT_EXECUTABLE", f"PlanError: {error}"
    except CheckerError as error:
        result.verdict, result.detail = "NOT_EXECUTABLE", f"CheckerError: {error}"
    except Exception as error:  # ParseError, InterpError, ExecError: the op and the index are in the text
        detail = f"{type(error).__name__}: {error}" if section == "canonical" else str(error)
        if schedule == "in-order":
            result.verdict, result.detail = "NOT_EXECUTABLE", named + detail
        else:  # the in-order run passed: the failure depends on the order
            result.verdict, result.detail = "NUMERIC_SCHEDULE", f"schedule {schedule}: {detail}"
    if result.verdict == "NUMERIC_OK":
        result.outputs_sha256 = outputs.hexdigest()
    result.seconds = time.perf_counter() - start
    return result


def case_sizes(case):
    """The case's values of the contract's sizes: its own `sizes`, else its scalars (n, rows: a
    family whose sizes are its kernel's integer params)."""
    return dict(case.scalars if case.sizes is None else case.sizes)


def build_cases(family, config, source):
    """(cases, built) of a config (make_cases), or (None, [the NOT_EXECUTABLE Result]) when nothing
    can run."""
    start = time.perf_counter()
    cases, reason = config_cases(family, config, source)
    if cases is None:
        return None, [Result(family, config["id"], "NOT_EXECUTABLE", reason, seconds=time.perf_counter() - start)]
    case = cases[0][1]
    lowered = {"buffer_range": case.buffer_range} if case.buffer_range else {}  # test-only, docs/protocol.md
    built = source.build(family, config["id"], config["arch"], case.spec, **lowered)
    if built.canonical is None:
        range_note = f" (buffer range lowered to {case.buffer_range} bytes)" if case.buffer_range else ""
        return None, [Result(family, config["id"], "NOT_EXECUTABLE",
                             f"the small spec {json.dumps(case.spec, sort_keys=True)}{range_note} is refused: {built.refused}",
                             seconds=time.perf_counter() - start, spec=case.spec)]
    return cases, built


def check_config(kemit_cpp, family, config, source, checkers=None, sections=None, schedules=None):
    """A config's Results, one per section run (a flavor the engine refuses for the arch is left out);
    sections: the canonical one and every flavor the source serves unless given; schedules: as
    run_section's."""
    sections = sections or ("canonical",) + source.flavors()
    cases, built = build_cases(family, config, source)
    if cases is None:
        return built
    texts = [(section, built.canonical if section == "canonical" else built.flavors.get(section)) for section in sections]
    texts = [(section, text) for section, text in texts if text is not None]  # None: the engine refuses the flavor
    return diverged(run_sections(kemit_cpp, checkers, texts, cases, built, family, config["id"], schedules))


def run_sections(kemit_cpp, checkers, texts, cases, built, family, config_id, schedules=None):
    """A Result per (section, text) of `texts`, in order. A flavor's module that decodes to the same
    program as an earlier flavor's that passed (the executors' DIGEST: llvm19's and llvm22's texts
    mostly differ in attribute spellings only) takes that run's Result: the same program on the
    same inputs runs alike, so it runs once."""
    results, passed_programs = [], {}
    for section, text in texts:
        program = "" if section == "canonical" else program_digest(checkers, section, text, family, config_id)
        earlier = passed_programs.get(program)
        if earlier:
            results.append(replace(earlier, section=section, lane_instructions=0, interp_seconds=0.0, seconds=0.0,
                                   same_program_as=earlier.section))
            continue
        result = run_section(kemit_cpp, checkers, section, text, cases, built, family, config_id,
                             canonical_outputs(results), schedules)
        if program and result.verdict == "NUMERIC_OK":
            passed_programs[program] = result
        results.append(result)
    return results


def program_digest(checkers, section, text, family, config_id):
    """The digest of the flavor's decoded module, or "" (it cannot be decoded, or its executor
    failed: the section's own run then reports why)."""
    try:
        digest, _ = checkers.get(section).digest(text, f"{family}.{config_id}.{section}.ll")
    except CheckerError:
        return ""
    return digest


def canonical_outputs(results):
    """The canonical section's passed_outputs among the results so far (run_section's `passed`)."""
    return next((r.passed_outputs for r in results if r.section == "canonical"), None)



LIMIT_QUANTILE = 0.95
CONST = re.compile(r"%(\d+) = const \{value=(-?\d+)\}")
FOR = re.compile(r"for %\d+ = %(\d+) to %(\d+) step %(\d+)")


def trips(loop, consts):
    """A `for` line's trip count when its bounds and step are constants, else 1 (unknown)."""
    low, high, step = (consts.get(value) for value in loop.groups())
    if None in (low, high, step) or step <= 0:
        return 1
    return max(1, -(-(high - low) // step))


def lines_per_lane(canonical):
    """The canonical lines one lane runs: each line weighted by the trips of the loops around it
    (both arms of an `if` counted). Lines alone missed the loops: a conv_fwd_lds_halo spec with a
    large filter over many channels ran minutes in the interpreter inside the old limit."""
    consts, weights, total = {}, [1], 0
    for line in canonical.splitlines():
        text = line.strip()
        constant = CONST.match(text)
        if constant:
            consts[constant.group(1)] = int(constant.group(2))
        if text.startswith("}"):
            weights.pop()
        total += weights[-1]
        if text.endswith("{"):
            loop = FOR.search(text)
            weights.append(weights[-1] * (trips(loop, consts) if loop else 1))
    return total


def work(cases, built):
    """Lanes launched x lines each runs: a proxy of the interpreter's time on the case. The
    launches are the engine's launch plan as check_numerics runs them (a run-time grid or block is
    the case's) with every input set; a plan the lane cannot read counts 0 here, so that check_config runs and reports
    it (NOT_EXECUTABLE, PlanError) rather than this worker failing."""
    try:
        lanes = sum(math.prod(grid) * launch.block for _, case in cases
                    for launch, grid, _, _ in runs(parse_plan(built.plan), case_sizes(case), case.buffers, case.grid))
    except PlanError:
        return 0
    return lines_per_lane(built.canonical) * lanes


def numbered_work_limit(configs, source):
    """The work that 95% of the numbered emitting configs (as kemit_fuzz sends them, loaded by the
    strict loader) stay within. Not the largest: the few largest numbered configs (up to 80 times
    the 95th percentile) run minutes in the executors on a shared machine, and the fuzzer draws
    thousands of specs, not a handful."""
    works = []
    for config in configs:
        if plans.family_plan(config["family"]) is None:
            continue
        cases, built = build_cases(config["family"], dict(config, expect="emit"), source)
        if cases is not None:
            works.append(work(cases, built))
    works.sort()
    return works[int(LIMIT_QUANTILE * (len(works) - 1))] if works else 0


def diverged(results):
    """The results, each flavor's NUMERIC_DIVERGED where it passed but its outputs differ from the
    canonical section's in some bit: both run the same operations in the same order, so a lowering
    that changes one rounding is a finding (check_numerics applies the same rule to its sections)."""
    canonical = next((r for r in results if r.section == "canonical" and r.outputs_sha256), None)
    for r in results:
        if canonical and r.outputs_sha256 and r.outputs_sha256 != canonical.outputs_sha256:
            r.verdict = "NUMERIC_DIVERGED"
            r.detail = "outputs within tolerance but not bit-identical to the canonical section's"
    return results


def verdict_of(results):
    """The first section run that is not NUMERIC_OK, else the first (all agree)."""
    return next((r for r in results if r.verdict != "NUMERIC_OK"), results[0])


class Lane:
    """What the worker runs with, each started on first use: the interpreter module, the engine's
    worker (the fuzzer's specs only) and the executors."""

    def __init__(self, build):
        self.build = build
        self.checkers = Checkers(build)
        self._kemit_cpp = self._source = None

    @property
    def kemit_cpp(self):
        if self._kemit_cpp is None:
            sys.path.insert(0, os.path.join(os.path.abspath(self.build), "bindings"))
            try:
                import kemit_cpp
            except ImportError as error:
                raise RuntimeError(f"cannot import kemit_cpp from {self.build}/bindings ({error}); build it with "
                                   f"`cmake --build {self.build} --target kemit_cpp`") from error
            self._kemit_cpp = kemit_cpp
        return self._kemit_cpp

    @property
    def source(self):
        if self._source is None:
            self._source = EngineSource("cpp", self.build)
        return self._source

    def close(self):
        if self._source is not None:
            self._source.close()
        self.checkers.close()


def requested_cases(request, first_only=False):
    """(cases, "") of a plan or run request (make_cases), or (None, why the config cannot run)."""
    family, arch = request["family"], request["arch"]
    if plans.family_plan(family) is None:
        return None, no_plan(family)
    facts = ArchFacts(arch["name"], int(arch["wave_size"]), arch["fp8_format"])
    try:
        return make_cases(family, request["spec"], facts, int(request["config"]), first_only), ""
    except plans.TooLarge as error:
        return None, str(error)


def finite(value):
    """JSON has no inf or NaN: a mismatch's non-finite figures travel as "inf", "-inf", "nan"."""
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def plan_answer(request):
    cases, reason = requested_cases(request, first_only=True)
    if cases is None:
        return {"status": "ok", "refused": reason}
    return {"status": "ok", "spec_run": cases[0][1].spec, "buffer_range": cases[0][1].buffer_range}


def run_answer(request, lane):
    cases, reason = requested_cases(request)
    if cases is None:
        return {"status": "error", "error": f"the plan refuses the config: {reason}"}
    if cases[0][1].spec != request["spec_run"]:
        return {"status": "error", "error": f"the plan gives the spec {json.dumps(cases[0][1].spec, sort_keys=True)}, "
                                            f"not the spec_run of the request"}
    built = Built(None, {}, "", plan=request["launch_plan"])
    lane.checkers.majors.update(request["majors"])
    texts = list(request["sections"].items())
    kemit_cpp = lane.kemit_cpp if "canonical" in request["sections"] else None  # started only to interpret
    results = [{"section": r.section, "verdict": r.verdict, "detail": r.detail, "mismatch": finite(r.mismatch),
                "lane_instructions": r.lane_instructions, "run_seconds": r.interp_seconds,
                "outputs_sha256": r.outputs_sha256, "seconds": r.seconds, "same_program_as": r.same_program_as}
               for r in run_sections(kemit_cpp, lane.checkers, texts, cases, built, request["family"],
                                     int(request["config"]))]
    return {"status": "ok", "results": results}


def answer(request, lane, limit):
    kemit_cpp, source, checkers = lane.kemit_cpp, lane.source, lane.checkers
    checkers.majors.update(source.flavor_majors())
    start = time.perf_counter()
    config = {"id": request.get("config", 0), "arch": request["arch"], "spec": request["spec"], "expect": "emit"}
    cases, built = build_cases(request["family"], config, source)
    if cases is None:
        return {"status": "ok", "verdict": "SKIPPED", "detail": built[0].detail}
    size = work(cases, built)
    if size > limit:
        return {"status": "ok", "verdict": "SKIPPED",
                "detail": f"too large to run: work {size} over {limit}, the 95th percentile of "
                          "the numbered configs'"}
    results = check_config(kemit_cpp, request["family"], config, source, checkers)
    worst = verdict_of(results)
    failed = worst.verdict != "NUMERIC_OK"
    return {"status": "ok", "verdict": worst.verdict, "section": worst.section if failed else "", "detail": worst.detail,
            "sections": {r.section: r.verdict for r in results}, "spec_run": worst.spec,
            "seconds": round(time.perf_counter() - start, 4)}


def serve(lane):
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        try:
            if op == "hello":
                reply = {"status": "ok", "engine": "numerics", "protocol": 1, "families": plans.planned_families(),
                         "flavors": []}
            elif op == "plan":
                reply = plan_answer(request)
            elif op == "run":
                reply = run_answer(request, lane)
            elif op == "work_limit":
                reply = {"status": "ok", "work_limit": numbered_work_limit(request["configs"], lane.source)}
            elif op == "numerics":
                reply = answer(request, lane, int(request["work_limit"]))
            else:
                reply = {"status": "error", "error": f"unknown op {op!r}"}
        except Exception as error:  # a bug of the lane or the engine: the request fails as an error
            reply = {"status": "error", "error": f"{type(error).__name__}: {error}"}
        reply["id"] = request.get("id")
        sys.stdout.write(json.dumps(reply, allow_nan=False) + "\n")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", action="store_true", help="answer requests on stdin (the only mode)")
    parser.add_argument("--build", required=True,
                        help="the CMake build dir holding bindings/kemit_cpp, cpp_engine/kemit_emit and llvm_lane/kemit_llcheckN")
    args = parser.parse_args()
    lane = Lane(args.build)
    try:
        serve(lane)
    finally:
        lane.close()


if __name__ == "__main__":
    main()

"""check_numerics: every emitting parity config computes the right numbers, in every section
(docs/numerics.md).

For each config with expect "emit" of each family: the family's plan (plans.py) shrinks the spec
to a small problem; an engine's protocol worker (`--engine cpp|py`, default cpp) emits it: the
canonical text and each flavor's LLVM module. Two independent opinions then run it on the same
inputs from a fixed seed: the canonical text in the C++ reference interpreter (kemit_cpp.run),
and each flavor's module in the LLVM-IR executor of that flavor's LLVM (the EXEC verb of
kemit_llcheckN). Every section's outputs are compared with the family's numpy reference.

    /usr/bin/python3 parity/numerics/check_numerics.py --build build [--only conv,gemm]
        [--section canonical,llvm19] [--engine cpp|py] [--json report.json] [--junit report.xml] [--jobs 2]
        [--shard K/N] [--configs DIR] [--cache DIR | --no-cache]


Every section run's answer is kept in the shared result cache (numerics_cache.py; default
<build>/result-cache, or $KEMIT_CACHE): a run whose text, inputs, reference and runner are
unchanged is not run again.

Verdicts per config and section (canonical, llvm16, llvm19, llvm22): NUMERIC_OK; NUMERIC_MISMATCH
(max abs and rel error, first bad index); NOT_EXECUTABLE (the spec is refused, the family has no
plan, or the interpreter / executor stops: an unknown op or intrinsic, an out-of-bounds index, a
broken promise; a failure). A flavor the engine refuses for the config's arch is n/a. A family is
GREEN when it has configs and every section run is NUMERIC_OK (kemit_reports.row_status, the rule
of every lane); under --shard K/N (the configs whose `family:id` falls in shard K,
docs/reports.md) a family without configs in the shard is PARTIAL. The last line is
`RESULT: GREEN` or `RESULT: RED`; exit 0 / 1, and 2 for a usage or infrastructure error.
Reports: docs/reports.md.
"""
import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (HERE, os.path.join(ROOT, "parity", "report"), os.path.join(ROOT, "parity", "lane_support")):
    if path not in sys.path:
        sys.path.insert(0, path)

import kemit_reports  # noqa: E402
import locations  # noqa: E402
import numerics_cache  # noqa: E402
import plans  # noqa: E402
import result_cache  # noqa: E402
import selection  # noqa: E402
from executor_client import Checker, CheckerError, checker_path  # noqa: E402
from launch_plan import PlanError, launch_arguments, parse_plan  # noqa: E402
from module_source import FLAVORS, EngineSource  # noqa: E402

VERDICTS = ("NUMERIC_OK", "NUMERIC_MISMATCH", "NOT_EXECUTABLE")
SECTIONS = ("canonical",) + FLAVORS


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
    cached: bool = False  # taken from the result cache: its counters were measured by an earlier run


def load_kemit_cpp(build):
    sys.path.insert(0, os.path.join(os.path.abspath(build), "bindings"))
    try:
        import kemit_cpp
    except ImportError as error:
        print(f"check_numerics: cannot import kemit_cpp from {build}/bindings ({error}); build it with "
              f"`cmake --build {build} --target kemit_cpp`", file=sys.stderr)
        sys.exit(2)  # an infrastructure error, not a RED run
    return kemit_cpp


def load_configs(only, folder=None, shard=None):
    """[(family, emitting configs)] of the selected families; a shard keeps every family with the
    configs it owns, so that `kemit_report merge` sees them all."""
    folder = folder or os.path.join(ROOT, "parity", "configs")
    families = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        family = name[:-5]
        if only and not any(part in family for part in only):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            data = json.load(handle)
        families.append((family, [c for c in data["configs"] if c["expect"] == "emit"
                                  and kemit_reports.in_shard(shard, family, c["id"])]))
    return families


class Checkers:
    """One executor (kemit_llcheckN) per flavor and thread, started on first use."""

    def __init__(self, build, env=None):
        self.build, self.env = build, env
        self._local = threading.local()
        self._all, self._lock = [], threading.Lock()

    def version(self, flavor):
        """The LLVM version string the flavor's executor announces (part of its cache keys)."""
        return self.get(flavor).version

    def get(self, flavor):
        mine = getattr(self._local, "checkers", None)
        if mine is None:
            mine = self._local.checkers = {}
        if flavor not in mine or not mine[flavor].alive():  # a checker that died is replaced
            mine[flavor] = Checker(checker_path(self.build, flavor), self.env)
            with self._lock:
                self._all.append(mine[flavor])
        return mine[flavor]

    def close(self):
        for checker in self._all:
            checker.close()


def make_case(family, config, source):
    """The config's case, or a NOT_EXECUTABLE reason. The spec's defaults and the arch's wave size
    come from the engine's worker (the lane imports no engine code)."""
    arch, reason = source.arch(config["arch"])
    spec, refusal = source.parse_spec(family, config["spec"]) if arch else (None, "")
    if arch is None or spec is None:  # an unknown family or arch, a spec the engine refuses
        return None, f"the engine refuses the config: {reason or refusal}"
    if family not in plans.PLANS:
        return None, f"no numerics plan for family {family} (parity/numerics/plans.py)"
    try:
        return plans.make_case(family, spec, arch, config["id"]), ""
    except plans.TooLarge as error:
        return None, str(error)


def compare_outputs(result, case, buffers):
    for output in case.outputs:
        mismatch = plans.compare(output, buffers[output.name])
        if mismatch:
            result.verdict, result.mismatch = "NUMERIC_MISMATCH", mismatch
            result.detail = (f"{mismatch['output']}: {mismatch['bad']} of {mismatch['elements']} elements off; "
                             f"max abs error {mismatch['max_abs_error']:.6g}, max rel error {mismatch['max_rel_error']:.6g}; "
                             f"first bad index {mismatch['first_bad_index']}: got {mismatch['got']!r}, "
                             f"want {mismatch['want']!r} (tolerance {mismatch['tolerance']:.3g})")
            return


def run_section(kemit_cpp, checkers, section, text, case, built, family, config_id):
    """One section's Result: the engine's launch plan run, launch by launch over views of the same
    buffers, on the canonical text in the interpreter or a flavor's module in its executor."""
    start = time.perf_counter()
    buffers = {name: array.copy() for name, array in case.buffers.items()}  # every section starts alike
    lanes, seconds = 0, 0.0
    result = Result(family, config_id, "NUMERIC_OK", spec=case.spec, section=section)
    try:
        for launch in parse_plan(built.plan):  # in launch order
            grid, block = launch.grid or case.grid, launch.block or case.block
            views, scalars = launch_arguments(launch, buffers, case.scalars)
            if section == "canonical":
                stats = kemit_cpp.run(text, grid, block, views, scalars, kernel=launch.kernel)
                lanes, seconds = lanes + stats["lane_instructions"], seconds + stats["seconds"]
                continue
            name = f"{family}.{config_id}.{section}.ll"
            ok, error, count, took = checkers.get(section).execute(text, name, grid, block, views, scalars,
                                                                   launch.kernel)
            lanes, seconds = lanes + count, seconds + took
            if not ok:
                raise RuntimeError(f"ExecError: {error}")
    except PlanError as error:
        result.verdict, result.detail = "NOT_EXECUTABLE", f"PlanError: {error}"
    except CheckerError as error:
        result.verdict, result.detail = "NOT_EXECUTABLE", f"CheckerError: {error}"
    except Exception as error:  # ParseError, InterpError, ExecError: the op and the index are in the text
        result.verdict, result.detail = "NOT_EXECUTABLE", f"{type(error).__name__}: {error}" if section == "canonical" else str(error)
    if result.verdict == "NUMERIC_OK":
        compare_outputs(result, case, buffers)
    result.lane_instructions, result.interp_seconds = lanes, seconds
    result.seconds = time.perf_counter() - start
    return result


def build_case(family, config, source):
    """(case, built) of a config, or (None, [the NOT_EXECUTABLE Result]) when nothing can run."""
    start = time.perf_counter()
    case, reason = make_case(family, config, source)
    if case is None:
        return None, [Result(family, config["id"], "NOT_EXECUTABLE", reason, seconds=time.perf_counter() - start)]
    lowered = {"buffer_range": case.buffer_range} if case.buffer_range else {}  # test-only, docs/protocol.md
    built = source.build(family, config["id"], config["arch"], case.spec, **lowered)
    if built.canonical is None:
        range_note = f" (buffer range lowered to {case.buffer_range} bytes)" if case.buffer_range else ""
        return None, [Result(family, config["id"], "NOT_EXECUTABLE",
                             f"the small spec {json.dumps(case.spec, sort_keys=True)}{range_note} is refused: {built.refused}",
                             seconds=time.perf_counter() - start, spec=case.spec)]
    return case, built


def check_config(kemit_cpp, family, config, source, checkers=None, sections=SECTIONS, cache=None, context=None):
    """A config's Results, one per section run (a flavor the engine refuses for the arch is left out).
    With a cache (and its context, lane_context), a section whose key is stored is not run again."""
    case, built = build_case(family, config, source)
    if case is None:
        return built
    results = []
    for section in sections:
        text = built.canonical if section == "canonical" else built.flavors.get(section)
        if text is None:
            continue  # the engine refuses this flavor for the arch: n/a
        start = time.perf_counter()
        key = numerics_cache.run_key(context, section, text, built.plan, case) if cache and cache.enabled else None
        result = cached(cache, key, family, config["id"], section)
        if result is None:
            result = run_section(kemit_cpp, checkers, section, text, case, built, family, config["id"])
            if key and not result.detail.startswith("CheckerError"):  # a dead checker is not the module's answer
                cache.put(key, numerics_cache.encode(result))
        result.seconds = time.perf_counter() - start
        results.append(result)
    return results


def cached(cache, key, family, config_id, section):
    """The Result stored under key, or None (a value that is not a Result of this section is rejected)."""
    value = cache.get(key) if key else None
    if value is None:
        return None
    result = numerics_cache.decode(value, Result, family, config_id, section)
    if result is None:
        cache.reject(key, f"its value is not a numerics result of section {section}")
    else:
        result.cached = True
    return result


def lane_context(kemit_cpp, checkers, sections):
    """What every key holds besides the run itself: the lane's sources and each section's runner."""
    runners = {}
    for section in sections:
        if section == "canonical":
            runners[section] = "interpreter " + numerics_cache.digest_files([kemit_cpp.__file__])
        else:
            path = checker_path(checkers.build, section)
            runners[section] = f"executor {numerics_cache.digest_files([path])} {checkers.version(section)}"
    return {"plans": numerics_cache.lane_digest(HERE), "runners": runners}


def run_lane(kemit_cpp, families, jobs, source, checkers, sections=SECTIONS, cache=None):
    work = [(family, config) for family, configs in families for config in configs]
    context = lane_context(kemit_cpp, checkers, sections) if cache and cache.enabled else None
    progress = Progress("check_numerics", len(work))

    def one(item):
        results = check_config(kemit_cpp, item[0], item[1], source, checkers, sections, cache, context)
        progress.advance()
        return results

    with ThreadPoolExecutor(max_workers=jobs) as pool:  # the interpreter and the checkers run without the GIL
        nested = list(pool.map(one, work))
    progress.close()
    if cache:
        cache.prune()
    return [result for results in nested for result in results]


class Progress:
    """'check_numerics: 120/223, 8.4 s' on stderr, only on a terminal, at most ten times a second."""

    def __init__(self, label, total):
        self.label, self.total, self.done = label, total, 0
        self.start = self.last = time.perf_counter()
        self.shown = sys.stderr.isatty()
        self.drawn = False
        self.lock = threading.Lock()

    def advance(self):
        with self.lock:
            self.done += 1
            now = time.perf_counter()
            if not self.shown or (now - self.last < 0.1 and self.done < self.total):
                return
            self.last, self.drawn = now, True
            sys.stderr.write(f"\r\033[K{self.label}: {self.done}/{self.total} configs, {now - self.start:.1f} s")
            sys.stderr.flush()

    def close(self):
        if self.drawn:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def family_status(configs, results, sharded=False):
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in VERDICTS}
    evidence = kemit_reports.Evidence(passed=counts["NUMERIC_OK"], failed=len(results) - counts["NUMERIC_OK"])
    return kemit_reports.row_status(evidence, sharded), counts


def section_counts(results, sections):
    """Per section: (ok, run) over a family's results."""
    return {s: (sum(r.verdict == "NUMERIC_OK" for r in results if r.section == s), sum(r.section == s for r in results))
            for s in sections}


def report_rows(families, results, sharded):
    rows = []
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        ok = sum(r.verdict == "NUMERIC_OK" for r in mine)
        note = "" if configs else f"no emitting configs: add one to parity/configs/{family}.json"
        rows.append(kemit_reports.Row(family, "numerics", kemit_reports.Evidence(passed=ok, failed=len(mine) - ok), note))
    kemit_reports.judge_rows(rows, sharded)
    return rows


def reproduce(r):
    return (f"/usr/bin/python3 parity/numerics/check_numerics.py --only {r.family} --config {r.config} "
            f"--section {r.section}")


def report_cases(results):
    cases = []
    for r in results:
        case = kemit_reports.Case(r.family, r.config, r.section, r.verdict, seconds=r.seconds)
        if r.verdict != "NUMERIC_OK":
            case.outcome = "failed"
            case.message = kemit_reports.failure_message(r.verdict, r.detail)
            case.detail = f"{r.detail}\nspec run: {json.dumps(r.spec, sort_keys=True)}\nreproduce: {reproduce(r)}"
        cases.append(case)
    return cases


def report_text(families, results, wall, sections=SECTIONS, sharded=False, cache=None):
    lines = []
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        status, counts = family_status(configs, mine, sharded)
        per_section = "  ".join(f"{s} {ok}/{run}" for s, (ok, run) in section_counts(mine, sections).items())
        lines.append(f"{family:<30} {status:<5}  {per_section or 'no emitting configs'}")
    failures = [r for r in results if r.verdict != "NUMERIC_OK"]
    for r in failures:
        lines.append(f"FAIL {r.family} config {r.config} [{r.section}]: {r.verdict}")
        lines.append(f"    {r.detail}")
        lines.append(f"    spec run: {json.dumps(r.spec, sort_keys=True)}")
        lines.append(f"    reproduce: {reproduce(r)}")
    for opinion, chosen in (("interpreted (canonical)", ["canonical"]), ("executed (flavors)", list(FLAVORS))):
        picked = [r for r in results if r.section in chosen]
        ran = [r for r in picked if not r.cached]  # a cached result's counters were measured by an earlier run
        lanes, seconds = sum(r.lane_instructions for r in ran), sum(r.interp_seconds for r in ran)
        if picked:
            lines.append(f"{len(picked)} section run(s) {opinion}, {len(picked) - len(ran)} from the cache: "
                         f"{lanes} lane instructions run in {seconds:.1f} s ({lanes / seconds / 1e6 if seconds else 0:.1f} M/s)")
    lines.append(f"wall {wall:.1f} s, {cache.summary() if cache else 'cache: off'}")
    lines += [f"cache: {problem}" for problem in (cache.problems if cache else [])]
    green = kemit_reports.green(report_rows(families, results, sharded), [], sharded)
    lines.append("RESULT: GREEN" if green else "RESULT: RED")
    return "\n".join(lines), bool(green)


def write_reports(args, clock, families, results, wall, sections=SECTIONS):
    """The JSON (the lane's own fields plus the envelope) and the JUnit file: docs/reports.md. The
    JSON is also kept where --last-failed reads it (<build>/last-run/check_numerics.json)."""
    sharded = clock.shard is not None
    rows, cases, info = report_rows(families, results, sharded), report_cases(results), clock.info()
    data = {"seed": plans.SEED, "wall_seconds": wall, "sections": list(sections), "families": {}}
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        status, counts = family_status(configs, mine, sharded)
        data["families"][family] = {
            "status": status, "counts": counts,
            "sections": {s: {"ok": ok, "run": run} for s, (ok, run) in section_counts(mine, sections).items()},
            "configs": [
                {"id": r.config, "section": r.section, "verdict": r.verdict, "detail": r.detail,
                 "mismatch": r.mismatch, "spec_run": r.spec, "lane_instructions": r.lane_instructions,
                 "run_seconds": r.interp_seconds, "seconds": r.seconds}
                for r in mine]}
    document = kemit_reports.envelope("numerics", info, rows, cases, [])
    if args.json:
        kemit_reports.write_json_report(args.json, data, document)
    if args.junit:
        kemit_reports.write_text_file(args.junit, kemit_reports.junit_xml("numerics", info, rows, cases, []))
    last = selection.last_report_path(args.build)
    try:  # --last-failed is a convenience: never fail a run for it
        os.makedirs(os.path.dirname(last), exist_ok=True)
        kemit_reports.write_json_report(last, data, document)
    except OSError as error:
        print(f"check_numerics: note: cannot keep the last report for --last-failed at {last}: {error}", file=sys.stderr)


def select(args, families):
    """The families and configs the positional words, --filter and --last-failed keep."""
    ids, pattern = selection.parse_selection(args.select, args.filter)
    if args.last_failed:
        if ids:
            raise selection.SelectionError("--last-failed selects configs itself: drop the FAMILY:ID words "
                                           "(--filter still applies)")
        ids, path = selection.last_failed(args.build), selection.last_report_path(args.build)
        if ids:
            print(f"--last-failed: the configs that failed in the last run ({path}): "
                  f"{' '.join(selection.selection_words(ids))}", file=sys.stderr)
        else:
            print(f"--last-failed: nothing failed in the last run ({path}): every config runs", file=sys.stderr)
    return selection.apply_selection(families, ids, pattern)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", help="the source tree (default: the checkout at or above the current folder, "
                                       "else this script's tree; docs/driver.md \"Where it looks\")")
    parser.add_argument("--build", help="CMake build dir holding bindings/kemit_cpp (default $KEMIT_BUILD_DIR, "
                                        "else <tree>/build); it also holds cpp_engine/kemit_emit and llvm_lane/kemit_llcheckN")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--only", action="append", default=[], help="families whose name contains one of these (comma-separated)")
    parser.add_argument("--config", type=int, action="append", default=[], help="only these config ids")
    parser.add_argument("select", nargs="*", help="FAMILY or FAMILY:ID[,ID...]: only these families (exact names) or configs")
    parser.add_argument("--filter", help="only configs whose 'family:id' or 'why' this regex finds")
    parser.add_argument("--last-failed", action="store_true", help="only the configs that failed in the last run "
                                                                           "(its report is kept in <build>/last-run/)")
    parser.add_argument("--section", action="append", default=[],
                        help=f"only these sections (comma-separated; default all: {','.join(SECTIONS)})")
    parser.add_argument("--engine", default="cpp", choices=("cpp", "py"), help="the engine whose worker emits the modules")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", help="write the JSON report (docs/reports.md) to FILE")
    parser.add_argument("--junit", help="write the JUnit XML report to FILE")
    parser.add_argument("--shard", help="K/N: check only shard K of N (by family:id; docs/reports.md)")
    parser.add_argument("--configs", help="the config folder (default: <tree>/parity/configs)")
    parser.add_argument("--cache", help="result cache directory (default $KEMIT_CACHE, else BUILD/result-cache)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor fill the result cache")
    return parser.parse_args(argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.version:
        print(locations.version_line("check_numerics"))
        return 0
    try:
        where = locations.locate(args.root, args.build, args.configs)
    except locations.LocationError as error:
        print(f"check_numerics: {error}", file=sys.stderr)
        return 2
    if os.path.realpath(where.root) != os.path.realpath(ROOT):
        # Another tree's numbers come from that tree's own engine and plans: run its copy of the lane.
        script = os.path.join(where.root, "parity", "numerics", "check_numerics.py")
        if not os.path.isfile(script):
            print(f"check_numerics: {where.root} has no parity/numerics/check_numerics.py", file=sys.stderr)
            return 2
        os.execv(sys.executable, [sys.executable, script] + argv)
    print(locations.header_line("check_numerics", where), flush=True)
    args.build = where.build
    try:
        shard = kemit_reports.parse_shard(args.shard) if args.shard else None
    except kemit_reports.ShardError as error:
        print(f"check_numerics: {error}", file=sys.stderr)
        return 2
    clock = kemit_reports.RunClock("check_numerics", ROOT, [sys.argv[0]] + argv, shard)
    only = [part for item in args.only for part in item.split(",") if part]
    sections = [part for item in args.section for part in item.split(",") if part] or list(SECTIONS)
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        print(f"check_numerics: unknown section(s) {', '.join(unknown)}: choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    kemit_cpp = load_kemit_cpp(args.build) if "canonical" in sections else None
    families = load_configs(only, where.configs, shard)
    if not families:
        print(f"check_numerics: --only {','.join(only)} matches no family", file=sys.stderr)
        return 2
    if args.config:
        families = [(f, [c for c in configs if c["id"] in args.config]) for f, configs in families]
    try:
        families = select(args, families)
    except selection.SelectionError as error:
        print(f"check_numerics: {error}", file=sys.stderr)
        return 2
    for flavor in (s for s in sections if s != "canonical"):
        if not os.access(checker_path(args.build, flavor), os.X_OK):
            print(f"check_numerics: {checker_path(args.build, flavor)} is missing: the {flavor} section needs it "
                  f"(cmake --build {args.build} --target kemit_llcheck{flavor[4:]}; or --section to leave {flavor} out)",
                  file=sys.stderr)
            return 2
    source, checkers = EngineSource(args.engine, args.build), Checkers(args.build)
    cache = result_cache.ResultCache(result_cache.resolve_cache_dir(args.cache, args.no_cache, args.build))
    start = time.perf_counter()
    try:
        results = run_lane(kemit_cpp, families, max(1, args.jobs), source, checkers, sections, cache)
    except RuntimeError as error:  # an engine worker that cannot start or dies
        print(f"check_numerics: {error}", file=sys.stderr)
        return 2
    finally:
        source.close()
        checkers.close()
    wall = time.perf_counter() - start
    text, green = report_text(families, results, wall, sections, shard is not None, cache)
    write_reports(args, clock, families, results, wall, sections)
    if shard:
        print(f"shard {shard[0]}/{shard[1]}: families without configs in this shard are PARTIAL; merge the shards' "
              "--json reports with kemit_report merge")
    print(text)
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())

"""check_numerics: every emitting parity config computes the right numbers (docs/numerics.md).

For each config with expect "emit" of each family: the family's plan (plans.py) shrinks the spec
to a small problem, the Python engine builds its canonical IR, the C++ reference interpreter
(kemit_cpp.run, which parses the text with the C++ parser) runs it on inputs from a fixed seed,
and the outputs are compared with the family's numpy reference under the dtype's tolerance.

    /usr/bin/python3 parity/numerics/check_numerics.py --build build [--only conv,gemm]
        [--json report.json] [--junit report.xml] [--jobs 2]

Verdicts per config: NUMERIC_OK; NUMERIC_MISMATCH (max abs and rel error, first bad index);
NOT_EXECUTABLE (the spec is refused, the family has no plan, or the interpreter stops: an
unknown op, an out-of-bounds index, a broken promise; a failure). A family is GREEN when it has
configs and every one is NUMERIC_OK. The last line is `RESULT: GREEN` or `RESULT: RED`;
exit 0 / 1, and 2 for a usage or infrastructure error.
"""
import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
for path in (os.path.join(ROOT, "py_engine"), os.path.join(ROOT, "tests", "py"), HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import locations  # noqa: E402
import plans  # noqa: E402
from kemit.engine import emit  # noqa: E402
from kemit.families.registry import find_family  # noqa: E402
from kemit.target.arch import find_arch  # noqa: E402

VERDICTS = ("NUMERIC_OK", "NUMERIC_MISMATCH", "NOT_EXECUTABLE")


@dataclass
class Result:
    family: str
    config: int
    verdict: str
    detail: str = ""
    mismatch: dict = None
    lane_instructions: int = 0
    interp_seconds: float = 0.0
    seconds: float = 0.0
    spec: dict = field(default_factory=dict)


def load_kemit_cpp(build):
    sys.path.insert(0, os.path.join(os.path.abspath(build), "bindings"))
    try:
        import kemit_cpp
    except ImportError as error:
        print(f"check_numerics: cannot import kemit_cpp from {build}/bindings ({error}); build it with "
              f"`cmake --build {build} --target kemit_cpp`", file=sys.stderr)
        sys.exit(2)  # an infrastructure error, as in every tool
    return kemit_cpp


def load_configs(only):
    folder = os.path.join(ROOT, "parity", "configs")
    families = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        family = name[:-5]
        if only and not any(part in family for part in only):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            data = json.load(handle)
        families.append((family, [c for c in data["configs"] if c["expect"] == "emit"]))
    return families


def build_case(family, config):
    """(case, canonical text) of a config, or a NOT_EXECUTABLE reason."""
    try:
        module = find_family(family)
        arch = find_arch(config["arch"])
        spec = module.parse_spec(config["spec"])
    except Exception as error:  # an unknown family or arch, a spec the engine refuses
        return None, None, f"the Python engine refuses the config: {error}"
    if family not in plans.PLANS:
        return None, None, f"no numerics plan for family {family} (parity/numerics/plans.py)"
    case = plans.make_case(family, spec, arch, config["id"])
    result = emit(family, config["arch"], case.spec, [])
    if result.rejected:
        return None, None, f"the small spec {json.dumps(case.spec, sort_keys=True)} is refused: {result.reason}"
    return case, result.canonical, ""


def check_config(kemit_cpp, family, config):
    """One config's Result (the mutation tests call it with a family's builder monkeypatched)."""
    start = time.perf_counter()
    case, canonical, reason = build_case(family, config)
    if case is None:
        return Result(family, config["id"], "NOT_EXECUTABLE", reason, seconds=time.perf_counter() - start)
    runs = case.runs or [("", case.grid, case.block, tuple(case.buffers))]
    lanes, seconds = 0, 0.0
    try:
        for kernel, grid, block, names in runs:  # a module's kernels, in launch order
            buffers = {name: case.buffers[name] for name in names}
            stats = kemit_cpp.run(canonical, grid, block, buffers, case.scalars, kernel=kernel)
            lanes, seconds = lanes + stats["lane_instructions"], seconds + stats["seconds"]
    except Exception as error:  # ParseError, InterpError: the op and the index are in the text
        return Result(family, config["id"], "NOT_EXECUTABLE", f"{type(error).__name__}: {error}",
                      seconds=time.perf_counter() - start, spec=case.spec)
    result = Result(family, config["id"], "NUMERIC_OK", lane_instructions=lanes, interp_seconds=seconds, spec=case.spec)
    for output in case.outputs:
        mismatch = plans.compare(output, case.buffers[output.name])
        if mismatch:
            result.verdict, result.mismatch = "NUMERIC_MISMATCH", mismatch
            result.detail = (f"{mismatch['output']}: {mismatch['bad']} of {mismatch['elements']} elements off; "
                             f"max abs error {mismatch['max_abs_error']:.6g}, max rel error {mismatch['max_rel_error']:.6g}; "
                             f"first bad index {mismatch['first_bad_index']}: got {mismatch['got']!r}, "
                             f"want {mismatch['want']!r} (tolerance {mismatch['tolerance']:.3g})")
            break
    result.seconds = time.perf_counter() - start
    return result


def run_lane(kemit_cpp, families, jobs):
    work = [(family, config) for family, configs in families for config in configs]
    with ThreadPoolExecutor(max_workers=jobs) as pool:  # kemit_cpp.run releases the GIL
        results = list(pool.map(lambda item: check_config(kemit_cpp, item[0], item[1]), work))
    return results


def family_status(configs, results):
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in VERDICTS}
    green = bool(configs) and counts["NUMERIC_OK"] == len(results)
    return ("GREEN" if green else "RED"), counts


def report_text(families, results, wall):
    lines = []
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        status, counts = family_status(configs, mine)
        shown = ", ".join(f"{v} {n}" for v, n in counts.items() if n) or "no emitting configs"
        lines.append(f"{family:<30} {status:<5}  {shown}")
    failures = [r for r in results if r.verdict != "NUMERIC_OK"]
    for r in failures:
        lines.append(f"FAIL {r.family} config {r.config}: {r.verdict}")
        lines.append(f"    {r.detail}")
        lines.append(f"    spec run: {json.dumps(r.spec, sort_keys=True)}")
        lines.append(f"    reproduce: /usr/bin/python3 parity/numerics/check_numerics.py --only {r.family} --config {r.config}")
    lanes = sum(r.lane_instructions for r in results)
    interp = sum(r.interp_seconds for r in results)
    lines.append(f"{len(results)} config(s), {lanes} interpreted lane instructions in {interp:.1f} s "
                 f"({lanes / interp / 1e6 if interp else 0:.1f} M/s), wall {wall:.1f} s")
    green = families and all(family_status(c, [r for r in results if r.family == f])[0] == "GREEN" for f, c in families)
    lines.append("RESULT: GREEN" if green else "RESULT: RED")
    return "\n".join(lines), bool(green)


def write_json(path, families, results, wall):
    data = {"lane": "numerics", "seed": plans.SEED, "wall_seconds": wall, "families": {}}
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        status, counts = family_status(configs, mine)
        data["families"][family] = {"status": status, "counts": counts, "configs": [
            {"id": r.config, "verdict": r.verdict, "detail": r.detail, "mismatch": r.mismatch, "spec_run": r.spec,
             "lane_instructions": r.lane_instructions, "interp_seconds": r.interp_seconds, "seconds": r.seconds}
            for r in mine]}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
        handle.write("\n")


def write_junit(path, families, results):
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for family, configs in families:
        mine = [r for r in results if r.family == family]
        failures = [r for r in mine if r.verdict != "NUMERIC_OK"]
        out.append(f'  <testsuite name={quoteattr("numerics." + family)} tests="{len(mine) + 1}" failures="{len(failures) + (not configs)}">')
        for r in mine:
            out.append(f'    <testcase name={quoteattr(f"config {r.config}")} time="{r.seconds:.3f}">')
            if r.verdict != "NUMERIC_OK":
                out.append(f"      <failure message={quoteattr(r.verdict)}>{escape(r.detail)}</failure>")
            out.append("    </testcase>")
        out.append(f'    <testcase name="status">' + ("" if configs else '<failure message="RED">no emitting configs</failure>') + "</testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", help="the source tree (default: the checkout at or above the current folder, "
                                       "else this script's tree; docs/driver.md \"Where it looks\")")
    parser.add_argument("--build", help="CMake build dir holding bindings/kemit_cpp (default $KEMIT_BUILD_DIR, "
                                        "else <tree>/build)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--only", action="append", default=[], help="families whose name contains one of these (comma-separated)")
    parser.add_argument("--config", type=int, action="append", default=[], help="only these config ids")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json")
    parser.add_argument("--junit")
    args = parser.parse_args(argv)
    if args.version:
        print(locations.version_line("check_numerics"))
        return 0
    try:
        where = locations.locate(args.root, args.build)
    except locations.LocationError as error:
        print(f"check_numerics: {error}", file=sys.stderr)
        return 2
    if os.path.realpath(where.root) != os.path.realpath(ROOT):
        # Another tree's numbers come from that tree's own engine and plans: run its copy of the lane.
        script = os.path.join(where.root, "parity", "numerics", "check_numerics.py")
        if not os.path.isfile(script):
            print(f"check_numerics: {where.root} has no parity/numerics/check_numerics.py", file=sys.stderr)
            return 2
        os.execv(sys.executable, [sys.executable, script] + list(sys.argv[1:] if argv is None else argv))
    print(locations.header_line("check_numerics", where), flush=True)
    only = [part for item in args.only for part in item.split(",") if part]
    kemit_cpp = load_kemit_cpp(where.build)
    families = load_configs(only)
    if not families:
        print(f"check_numerics: --only {','.join(only)} matches no family", file=sys.stderr)
        return 2
    if args.config:
        families = [(f, [c for c in configs if c["id"] in args.config]) for f, configs in families]
    start = time.perf_counter()
    results = run_lane(kemit_cpp, families, max(1, args.jobs))
    wall = time.perf_counter() - start
    text, green = report_text(families, results, wall)
    print(text)
    if args.json:
        write_json(args.json, families, results, wall)
    if args.junit:
        write_junit(args.junit, families, results)
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())

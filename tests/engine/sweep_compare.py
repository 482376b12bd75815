#!/usr/bin/python3
"""Byte-for-byte sweep of the C++ engine against the Python reference engine (ctest
engine.sweep_compare).

Runs both engines' protocol workers (`kemit_emit --serve` and `python3 -m kemit.emit --serve`)
over pipes, sends the same request lines to both, and compares the decoded responses: every
elementwise op x dtype x vec x arch at every flavor, block sizes, waves_per_eu, refusals of odd
field values with their reason texts, odd protocol requests, and the numbered configs of the
families named by --families (parity/configs). Then single-shot CLI runs (stdout, exit code,
refusal and note lines). Where check_byte_identity compares the numbered configs, this compares
what no config holds: the values a caller should never send, and the protocol's error answers.

Exits 0 when everything is identical, 1 on the first difference (printing the first differing
line), 2 on a usage or start-up problem.

    /usr/bin/python3 tests/engine/sweep_compare.py --cpp build/cpp_engine/kemit_emit
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import threading

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = ("add", "sub", "mul", "max", "min", "fma", "relu", "silu")
DTYPES = ("f16", "bf16", "f32")
VECS = (1, 2, 4, 8)
ARCHS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250")
FLAVORS = ["llvm16", "llvm19", "llvm22"]


def emit_request(arch, spec, flavors=FLAVORS, family="elementwise"):
    return {"op": "emit", "family": family, "arch": arch, "spec": spec, "flavors": flavors}


def sweep_requests():
    """(request, what) pairs: the grid, the knobs, the refusals."""
    for op, dtype, vec, arch in itertools.product(OPS, DTYPES, VECS, ARCHS):
        yield emit_request(arch, {"op": op, "dtype": dtype, "vec": vec}), "grid"
    for block, arch, op in itertools.product((-64, 0, 32, 64, 96, 128, 192, 256, 512, 960, 1024, 1056, 2048),
                                             ARCHS, ("add", "silu")):
        yield emit_request(arch, {"op": op, "dtype": "f16", "vec": 4, "block": block}), "block"
    for waves, arch in itertools.product(range(-1, 11), ARCHS):
        yield emit_request(arch, {"op": "fma", "dtype": "bf16", "vec": 2, "waves_per_eu": waves}), "waves_per_eu"
    for arch in ARCHS:
        yield emit_request(arch, {}), "defaults"
        yield emit_request(arch, {"op": "relu", "dtype": "bf16", "vec": 8, "block": 1024, "waves_per_eu": 8}), "all"
    for spec in refusal_specs():
        yield emit_request("gfx942", spec), "refusal"
    for arch in ("gfx9000", "", "GFX942", 942, None, ["gfx942"], True):
        yield emit_request(arch, {"op": "add"}), "unknown arch"
    for flavors in (["llvm22"], ["llvm22", "llvm16"], [], ["llvm19", "llvm19"], ["llvm23"], ["nope"], "llvm22",
                    "", 5, None, {"llvm19": 1}):
        yield emit_request("gfx90a", {"op": "add"}, flavors), "flavors"
    for family in ("nope", "", 5, None, ["elementwise"]):
        yield emit_request("gfx90a", {}, FLAVORS, family), "unknown family"


def refusal_specs():
    yield from ({"op": "div"}, {"op": "ADD"}, {"op": ""}, {"dtype": "f64"}, {"dtype": "i32"}, {"vec": 3},
                {"vec": 0}, {"vec": 16}, {"vec": -1}, {"block": 96}, {"block": 2048}, {"block": 0},
                {"waves_per_eu": 9}, {"waves_per_eu": -1}, {"op": "div", "vec": 3, "block": 2048})
    yield from ({"opp": "add"}, {"zeta": 1, "alpha": 2}, {"op": "add", "Vec": 2}, {"": 1}, {"vec\u00e9": 1})
    for field, value in itertools.product(("op", "dtype", "vec", "block", "waves_per_eu"),
                                          ("4", 4.5, 4.0, True, False, None, [], [4], {}, {"a": 1}, 4, -0,
                                           2 ** 31, 2 ** 31 - 1, -2 ** 31, -2 ** 31 - 1, 2 ** 40, 2 ** 64,
                                           10 ** 30, -10 ** 30, 1e300, "caf\u00e9", "it's")):
        yield {field: value}
    yield from ([], [{"op": "add"}], "add", 5, 4.5, None, True)


def odd_lines():
    """Raw request lines outside the grid: protocol errors both engines must answer alike."""
    yield json.dumps({"id": 0, "op": "hello"}), "hello"
    yield json.dumps({"id": 1, "op": "bye"}), "unknown op"
    yield json.dumps({"id": 2, "op": 7}), "unknown op"
    yield json.dumps({"id": 3, "op": None}), "unknown op"
    yield json.dumps({"id": "four", "family": "elementwise"}), "missing field"
    yield json.dumps({"id": 5, "family": "elementwise", "arch": "gfx90a", "flavors": []}), "missing field"
    yield json.dumps({"family": "elementwise", "arch": "gfx90a", "spec": {}, "flavors": ["llvm22"]}), "no id"
    yield json.dumps({"id": [1, 2], "family": "elementwise", "arch": "gfx90a", "spec": {}, "flavors": []}), "id"
    yield json.dumps([1, 2, 3]), "not an object"
    yield "42", "not an object"
    yield '"hello"', "not an object"
    yield "null", "not an object"


MALFORMED = ("{", "not json", '{"id": 1,}', "{'id': 1}")  # texts differ by parser: status only


class Worker:
    """One engine's --serve worker; answers are read back on a thread while we write."""

    def __init__(self, name, command, env):
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=env, encoding="utf-8", cwd=REPO)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)

    def run(self, request_lines):
        for line in request_lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.close()
        code = self.process.wait(timeout=600)
        self.reader.join(timeout=60)
        return code, self.lines


def first_difference(a, b):
    a_lines, b_lines = a.splitlines(keepends=True), b.splitlines(keepends=True)
    for number, (x, y) in enumerate(zip(a_lines, b_lines), 1):
        if x != y:
            return number, x, y
    number = min(len(a_lines), len(b_lines)) + 1
    pick = lambda lines: lines[number - 1] if number <= len(lines) else "<end of text>"
    return number, pick(a_lines), pick(b_lines)


def describe(label, py, cpp):
    if isinstance(py, str) and isinstance(cpp, str):
        number, x, y = first_difference(py, cpp)
        return f"{label}: first difference at line {number}\n  py : {x!r}\n  cpp: {y!r}"
    return f"{label}:\n  py : {py!r}\n  cpp: {cpp!r}"


def compare_response(py, cpp, status_only):
    """None when the two responses agree, else a description of the first difference."""
    if status_only:
        py, cpp = {k: py.get(k) for k in ("id", "status")}, {k: cpp.get(k) for k in ("id", "status")}
    if py.get("engine") == "py" and cpp.get("engine") == "cpp":
        py, cpp = dict(py, engine=None), dict(cpp, engine=None)  # hello: all but the engine's name
    if py.get("status") != cpp.get("status"):
        brief = lambda r: {k: v for k, v in r.items() if k in ("id", "status", "reason", "error")}
        return describe("status", brief(py), brief(cpp))
    for key in sorted(set(py) | set(cpp)):
        if key == "ll" and isinstance(py.get(key), dict) and isinstance(cpp.get(key), dict):
            for flavor in sorted(set(py[key]) | set(cpp[key])):
                if py[key].get(flavor) != cpp[key].get(flavor):
                    a, b = py[key].get(flavor) or {}, cpp[key].get(flavor) or {}
                    if "text" in a and "text" in b:
                        return describe(f"ll.{flavor}.text", a["text"], b["text"])
                    return describe(f"ll.{flavor}", a, b)
        elif py.get(key) != cpp.get(key):
            return describe(key, py.get(key), cpp.get(key))
    return None


def parity_requests(families):
    """Every numbered config of parity/configs/<family>.json for the chosen families, at every flavor."""
    folder = os.path.join(REPO, "parity", "configs")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.endswith(".json") and (families == ["all"] or name[:-5] in families):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                document = json.load(handle)
            for config in document["configs"]:
                yield (emit_request(config["arch"], config["spec"], family=document["family"]),
                       f"parity {name}:{config['id']}")


def run_sweep(cpp_binary, py_path, families):
    entries = [(line, what, False) for line, what in odd_lines()]
    requests = itertools.chain(sweep_requests(), parity_requests(families))
    for number, (request, what) in enumerate(requests, 100):
        entries.append((json.dumps(dict(request, id=number)), what, False))
    entries += [(line, "malformed", True) for line in MALFORMED]
    lines = [line for line, _, _ in entries] + ["", "   "]  # blank lines get no answer
    env = dict(os.environ, PYTHONPATH=py_path)
    workers = [Worker("py", ["/usr/bin/python3", "-m", "kemit.emit", "--serve"], env),
               Worker("cpp", [cpp_binary, "--serve"], env)]
    results = {}
    threads = [threading.Thread(target=lambda w=w: results.__setitem__(w.name, w.run(lines))) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, (code, answers) in results.items():
        if code != 0 or len(answers) != len(entries):
            print(f"FAIL: the {name} worker exited {code} after {len(answers)} of {len(entries)} answers")
            return 1
    counts = {"requests": 0, "emitted": 0, "refused": 0, "sections": 0, "gated": 0, "errors": 0}
    for (line, what, status_only), py_line, cpp_line in zip(entries, results["py"][1], results["cpp"][1]):
        py, cpp = json.loads(py_line), json.loads(cpp_line)
        difference = compare_response(py, cpp, status_only)
        if difference:
            print(f"FAIL ({what}): request {line}\n{difference}")
            return 1
        counts["requests"] += 1
        if "ll" in py:
            counts["emitted"] += 1
        elif py.get("status") == "rejected":
            counts["refused"] += 1
        elif py.get("status") == "error":
            counts["errors"] += 1
        for section in (py.get("ll") or {}).values():
            counts["sections" if "text" in section else "gated"] += 1
    print("sweep: {requests} requests identical: {emitted} configs emitted (canonical text compared), "
          "{sections} LLVM sections compared byte for byte, {gated} flavor gates, {refused} refusals, "
          "{errors} error answers".format(**counts))
    return 0


def cli_cases():
    spec = '{"op": "silu", "dtype": "bf16", "vec": 4}'
    base = ["--family", "elementwise", "--arch"]
    yield base + ["gfx90a", "--spec", spec, "--flavor", "llvm16"]
    yield base + ["gfx90a", "--spec", spec, "--canonical"]
    yield base + ["gfx942", "--spec", spec, "--flavor", "llvm16"]
    yield base + ["gfx942", "--spec", '{"vec": 3}']
    yield base + ["gfx942", "--spec", spec, "--flavor", "llvm23"]
    yield base + ["gfx942", "--spec", spec, "--flavor", "llvm9"]
    yield base + ["gfx9000"]
    yield ["--family", "nope", "--arch", "gfx942"]
    yield ["--family", "elementwise"]
    yield []
    configs = os.path.join(REPO, "parity", "configs", "elementwise.json")
    if os.path.exists(configs):
        with open(configs, encoding="utf-8") as handle:
            ids = [config["id"] for config in json.load(handle)["configs"]][:6]
        for config_id in ids:
            yield ["--config", f"{configs}:{config_id}"]
        yield ["--config", f"{configs}:999999"]


def run_cli(cpp_binary, py_path):
    env = dict(os.environ, PYTHONPATH=py_path)
    cases = 0
    for args in cli_cases():
        py = subprocess.run(["/usr/bin/python3", "-m", "kemit.emit"] + args, capture_output=True, text=True,
                            env=env, cwd=REPO)
        cpp = subprocess.run([cpp_binary] + args, capture_output=True, text=True, env=env, cwd=REPO)
        refusal_or_note = [line for line in py.stderr.splitlines() if line.startswith(("rejected", "note:"))]
        cpp_refusal_or_note = [line for line in cpp.stderr.splitlines() if line.startswith(("rejected", "note:"))]
        if (py.returncode, py.stdout, refusal_or_note) != (cpp.returncode, cpp.stdout, cpp_refusal_or_note):
            print(f"FAIL (cli {' '.join(args)}): exit py {py.returncode} cpp {cpp.returncode}")
            print(describe("stdout", py.stdout, cpp.stdout))
            print(describe("stderr", py.stderr, cpp.stderr))
            return 1
        cases += 1
    print(f"cli: {cases} single-shot runs identical (exit code, stdout, refusal and note lines)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpp", default=os.path.join(REPO, "build", "cpp_engine", "kemit_emit"))
    parser.add_argument("--py-path", default=os.path.join(REPO, "py_engine"))
    parser.add_argument("--families", default="elementwise",
                        help="comma-separated families whose parity configs are swept too, or 'all' "
                             "(default: elementwise; the grid and refusal sweep is elementwise's)")
    args = parser.parse_args()
    if not os.access(args.cpp, os.X_OK):
        print(f"error: no C++ worker at {args.cpp}; build it with "
              "`cmake --build build --target kemit_emit` or pass --cpp", file=sys.stderr)
        return 2
    families = args.families.split(",")
    return run_sweep(args.cpp, args.py_path, families) or run_cli(args.cpp, args.py_path)


if __name__ == "__main__":
    sys.exit(main())

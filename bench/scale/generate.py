"""Synthetic configs for the scale bench: N valid configs drawn from each family's own config space.

For each family, candidates recombine the field values seen in that family's emitting parity
configs (a random emitting config as the base, each field swapped with probability 1/2 for a value
another emitting config of the family uses, the arch from the same set), with a fixed seed. A
candidate is kept when both engines emit it, asked through their protocol workers (`--serve`,
docs/protocol.md), and when its (arch, spec) is new. When a family's space runs out before its
share, the remaining configs repeat kept ones (reported as `unique` < `configs`).

    /usr/bin/python3 bench/scale/generate.py --build build --total 1000 --out /tmp/scale/configs
"""
import argparse
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAVORS = ["llvm16", "llvm19", "llvm22"]
BATCH = 40  # requests in flight per worker: small enough that neither pipe fills both ways


class Worker:
    """One engine's protocol worker; answers come in request order."""

    def __init__(self, argv, env=None):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env={**os.environ, **(env or {})}, bufsize=1 << 20)

    def ask(self, requests):
        for request in requests:
            self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return [json.loads(self.process.stdout.readline()) for _ in requests]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def engines(build):
    py = Worker(["/usr/bin/python3", "-m", "kemit.emit", "--serve"], {"PYTHONPATH": os.path.join(ROOT, "py_engine")})
    cpp = Worker([os.path.join(build, "cpp_engine", "kemit_emit"), "--serve"])
    return py, cpp


def space(configs):
    """The family's emitting (arch, spec) pairs and, per field, the values they use."""
    emitting = [(c["arch"], c["spec"]) for c in configs if c["expect"] == "emit"]
    values = {}
    for _, spec in emitting:
        for key, value in spec.items():
            if json.dumps(value, sort_keys=True) not in [json.dumps(v, sort_keys=True) for v in values.get(key, [])]:
                values.setdefault(key, []).append(value)
    return emitting, values


def candidate(rng, emitting, values):
    arch, spec = rng.choice(emitting)
    spec = dict(spec)
    for key in list(spec):
        if rng.random() < 0.5:
            spec[key] = rng.choice(values[key])
    return rng.choice(emitting)[0] if rng.random() < 0.3 else arch, spec


def emits(answer):
    return answer.get("status") == "ok" and any("text" in section for section in answer.get("ll", {}).values())


def generate_family(family, configs, count, workers, rng):
    """(kept (arch, spec) list of length `count`, number unique, candidates tried)."""
    emitting, values = space(configs)
    kept, seen, tried = [], set(), 0
    while len(kept) < count and tried < 40 * count + 200:
        batch = []
        while len(batch) < BATCH:
            arch, spec = candidate(rng, emitting, values)
            key = json.dumps([arch, spec], sort_keys=True)
            tried += 1
            if key not in seen and key not in [json.dumps([a, s], sort_keys=True) for a, s in batch]:
                batch.append((arch, spec))
            if tried >= 40 * count + 200:
                break
        requests = [{"id": i + 1, "op": "emit", "family": family, "config": i + 1, "arch": a, "spec": s,
                     "flavors": FLAVORS} for i, (a, s) in enumerate(batch)]
        answers = [worker.ask(requests) for worker in workers]
        for (arch, spec), py, cpp in zip(batch, *answers):
            seen.add(json.dumps([arch, spec], sort_keys=True))
            if emits(py) and emits(cpp) and len(kept) < count:
                kept.append((arch, spec))
    unique = len(kept)
    if not kept:
        kept = list(emitting)
    while len(kept) < count:
        kept.append(kept[len(kept) % max(unique, 1)])
    return kept, unique, tried


def write_family(folder, family, kept):
    lines = [json.dumps({"id": i + 1, "arch": arch, "expect": "emit", "why": "bench/scale: recombined", "spec": spec},
                        sort_keys=True) for i, (arch, spec) in enumerate(kept)]
    with open(os.path.join(folder, f"{family}.json"), "w", encoding="utf-8") as handle:
        handle.write('{\n  "family": "' + family + '",\n  "configs": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n")


def generate(build, total, out, seed=20261202):
    """Writes the configs; returns {family: (configs, unique, tried)}."""
    os.makedirs(out, exist_ok=True)
    source = os.path.join(ROOT, "parity", "configs")
    families = sorted(name[:-5] for name in os.listdir(source) if name.endswith(".json"))
    shares = [total // len(families) + (i < total % len(families)) for i in range(len(families))]
    workers = engines(build)
    stats = {}
    try:
        for family, share in zip(families, shares):
            with open(os.path.join(source, f"{family}.json"), encoding="utf-8") as handle:
                configs = json.load(handle)["configs"]
            kept, unique, tried = generate_family(family, configs, share, workers, random.Random(f"{seed}:{family}"))
            write_family(out, family, kept)
            stats[family] = (share, unique, tried)
    finally:
        for worker in workers:
            worker.close()
    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--total", type=int, required=True, help="configs over all families")
    parser.add_argument("--out", required=True, help="the config folder to write")
    args = parser.parse_args()
    for family, (configs, unique, tried) in generate(args.build, args.total, args.out).items():
        print(f"{family:<30} {configs:>6} configs, {unique:>6} unique ({tried} candidates tried)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

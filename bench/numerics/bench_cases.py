"""Benchmark of the numerics worker's case making (the plans' inputs and numpy references), side by
side in one run: the CPU each family's cases cost over every emitting numbered config, in this tree
and, with --against, in an old one (old, new, new, old, ...), and whether every reference output
is bit-identical between the two.

    /usr/bin/python3 bench/numerics/bench_cases.py --build build [--only FAMILY,...]
    /usr/bin/python3 bench/numerics/bench_cases.py --build build --against OLD_TREE [--rounds 2]

The specs (with their defaults) and the arch facts come from the C++ engine's worker of --build,
as the lane asks for them; each tree's plans and references make the cases in a child process of
its own (so the two trees' modules never meet), timed by that child's CPU.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def configs(tree, only):
    """[(family, config)] of every emitting numbered config of the tree, in file order."""
    folder = os.path.join(tree, "parity", "configs")
    picked = []
    for name in sorted(os.listdir(folder)):
        family = name[:-len(".json")]
        if name.endswith(".json") and (not only or family in only):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                picked += [(family, c) for c in json.load(handle)["configs"] if c.get("expect") == "emit"]
    return picked


def make_all(tree, build, only, out):
    """The child: every config's cases made by `tree`'s worker code; per family CPU seconds and a
    digest per config of every output's reference values, written to `out`."""
    sys.path.insert(0, os.path.join(tree, "parity", "numerics"))
    import numerics_worker  # noqa: E402 (the tree's own)
    import plans  # noqa: E402
    from module_source import EngineSource  # noqa: E402
    source = EngineSource("cpp", build)
    seconds, digests = {}, {}
    for family, config in configs(tree, only):
        arch, _ = source.arch(config["arch"])
        spec, _ = source.parse_spec(family, config["spec"])
        if arch is None or spec is None:
            continue
        start = time.process_time()
        try:
            cases = numerics_worker.make_cases(family, spec, arch, config["id"])
        except plans.TooLarge:
            cases = []
        seconds[family] = seconds.get(family, 0.0) + time.process_time() - start
        digest = hashlib.sha256()
        for inputs, case in cases:
            for output in case.outputs:
                digest.update(f"{inputs}/{output.name}".encode())
                digest.update(output.want.tobytes())
        digests[f"{family}:{config['id']}"] = digest.hexdigest()
    source.close()
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"seconds": seconds, "digests": digests}, handle)


def timed(tree, args):
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "cases.json")
        subprocess.run([sys.executable, os.path.abspath(__file__), "--child", tree, "--build", args.build,
                        "--only", args.only, "--out", out], check=True)
        with open(out, encoding="utf-8") as handle:
            return json.load(handle)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build whose engine gives the specs")
    parser.add_argument("--against", help="an old tree (its parity/numerics/ and configs) to compare with")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree with --against")
    parser.add_argument("--only", default="", help="families, comma-separated (default: all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    only = {f for f in args.only.split(",") if f}
    if args.child:
        make_all(args.child, args.build, only, args.out)
        return 0
    trees = [("old", os.path.abspath(args.against)), ("new", ROOT)] if args.against else [("new", ROOT)]
    order = [t for r in range(args.rounds) for t in (trees if r % 2 == 0 else trees[::-1])] if args.against else trees
    runs = {name: [] for name, _ in trees}
    for name, tree in order:
        runs[name].append(timed(tree, args))
    families = sorted({f for rs in runs.values() for r in rs for f in r["seconds"]},
                      key=lambda f: -min(r["seconds"].get(f, 0.0) for r in runs["new"]))
    print(f"{'family':<30} " + " ".join(f"{name + ' CPU s':>12}" for name, _ in trees) + ("  ratio" if args.against else ""))
    best = {name: {f: min(r["seconds"].get(f, 0.0) for r in rs) for f in families} for name, rs in runs.items()}
    for family in families + ["total"]:
        cells = {name: sum(best[name].values()) if family == "total" else best[name][family] for name, _ in trees}
        ratio = f"  {cells['old'] / cells['new']:.2f}x" if args.against and cells["new"] else ""
        print(f"{family:<30} " + " ".join(f"{cells[name]:>12.2f}" for name, _ in trees) + ratio)
    print("(each tree's best of its runs; CPU of the child that made the cases)")
    if args.against:
        old, new = runs["old"][0]["digests"], runs["new"][0]["digests"]
        common = sorted(set(old) & set(new))
        differing = [key for key in common if old[key] != new[key]]
        print(f"reference outputs: {len(common) - len(differing)} of {len(common)} configs bit-identical")
        if differing:
            print(f"differing: {', '.join(differing[:10])}" + (" ..." if len(differing) > 10 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`python3 -m kemit.emit`: print one config's IR, or serve the engine protocol (--serve)."""
import argparse
import gc
import json
import os
import re
import stat
import subprocess
import sys

from .engine import emit
from .llvm.flavors import UnknownFlavor, flavor_names, newest_flavor, resolve_flavor


def version_text():
    """What --version prints: the CMake project VERSION of the tree this package runs from (and its
    git describe), else the version of the installed distribution."""
    tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        with open(os.path.join(tree, "CMakeLists.txt"), encoding="utf-8") as handle:
            version = re.search(r"project\(kemit VERSION ([0-9.]+)", handle.read()).group(1)
        describe = subprocess.run(["git", "-C", tree, "describe", "--always", "--dirty", "--tags"],
                                  capture_output=True, text=True, check=False).stdout.strip() or "no git"
        return f"python3 -m kemit.emit {version} (git {describe})"
    except (OSError, AttributeError):
        from importlib.metadata import PackageNotFoundError, version as installed_version
        try:
            return f"python3 -m kemit.emit {installed_version('kemit')} (installed)"
        except PackageNotFoundError:
            return "python3 -m kemit.emit (version unknown: no source tree, not installed)"


# The harness's input limits (docs/limits.md), kept here too: a config file named on the command
# line is read by the engine itself, and a FIFO must not hang it nor deep nesting exhaust the stack.
MAX_CONFIG_BYTES = 256 << 20
MAX_NESTING = 64


def deepest_nesting(text):
    """How deep objects and arrays nest in a JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def read_config_text(path):
    """The text of a config file: a regular file within the size limit, nested at most MAX_NESTING."""
    info = os.stat(path)  # stat, not open: opening a FIFO would wait for a writer
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path}: not a regular file; give a parity config file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise ValueError(f"{path}: the file is larger than the input limit of 256 MiB")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if deepest_nesting(text) > MAX_NESTING:
        raise ValueError(f"{path}: nesting deeper than the input limit of {MAX_NESTING} levels")
    return text


def config_from_file(reference):
    """FILE:ID -> (family, arch, spec) from a parity config file."""
    path, _, config_id = reference.rpartition(":")
    if not path or not config_id:
        raise ValueError("give FILE:ID, the config file and the id of one of its configs "
                         "(e.g. parity/configs/elementwise.json:12)")
    document = json.loads(read_config_text(path))
    for config in document["configs"]:
        if str(config["id"]) == config_id:
            return document["family"], config["arch"], config["spec"]
    raise ValueError(f"{path}: no config with id {config_id}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kemit.emit", description=__doc__)
    parser.add_argument("--serve", action="store_true", help="serve the engine protocol on stdin/stdout")
    parser.add_argument("--config", help="take family, arch and spec from FILE:ID")
    parser.add_argument("--family", help="the kernel family (e.g. elementwise), with --arch and --spec")
    parser.add_argument("--arch", help="the processor (e.g. gfx942)")
    parser.add_argument("--spec", default="{}", help="the spec as JSON")
    newest = newest_flavor().name  # tables/flavors.json's last row
    parser.add_argument("--flavor", default=newest,
                        help=f"the LLVM flavor to print ({', '.join(flavor_names())}; default: the newest, {newest}; "
                             f"a newer llvmN resolves to it)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--canonical", action="store_true", help="print the canonical IR instead")
    parser.add_argument("--plan", action="store_true", help="print the launch plan instead (docs/protocol.md)")
    args = parser.parse_args(argv)
    if args.version:  # computed only when asked: a --serve worker must not pay for git
        print(version_text())
        return 0
    if args.serve:
        from .serve import serve
        # A worker emits one spec after another, and each emit's objects are freed by reference
        # counting once its answer is written. The cyclic collector, run every 700 net allocations
        # by default, found nothing to free and took about 6% of the worker's CPU (bench/results.md): run
        # it rarely, and keep the modules imported once out of its scans. Emission is unchanged.
        gc.freeze()
        gc.set_threshold(100_000, 10, 10)
        return serve()
    if args.config:
        try:
            family, arch, spec = config_from_file(args.config)
        except (OSError, ValueError, KeyError, TypeError) as error:
            print(f"error: --config {args.config}: {error}", file=sys.stderr)
            return 2
    elif args.family and args.arch:
        try:
            if deepest_nesting(args.spec) > MAX_NESTING:
                raise ValueError(f"nesting deeper than the input limit of {MAX_NESTING} levels")
            family, arch, spec = args.family, args.arch, json.loads(args.spec)
        except ValueError as error:
            print(f"error: --spec is not valid JSON: {error}", file=sys.stderr)
            return 2
    else:
        parser.error("give --config FILE:ID, or --family and --arch (with --spec)")
    try:
        flavor, note = resolve_flavor(args.flavor)
        result = emit(family, arch, spec, [flavor.name])
    except (UnknownFlavor, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if note:
        print(note, file=sys.stderr)
    if result.rejected:
        print(f"rejected: {result.reason}", file=sys.stderr)
        return 1
    if args.plan:
        sys.stdout.write(result.plan)
        return 0
    if args.canonical:
        sys.stdout.write(result.canonical)
        return 0
    section = result.ll[0]
    if section.rejected:
        print(f"rejected at {section.flavor}: {section.reason}", file=sys.stderr)
        return 1
    sys.stdout.write(section.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

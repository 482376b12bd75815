#!/usr/bin/python3
"""The arrows that must never exist (docs/architecture.md), checked on the sources and on the build.

  /usr/bin/python3 ci/check_layering.py --root . --build build

Engine side (cpp_engine/, py_engine/, interp/, bindings/) never includes or imports harness code.
tooling/ (--version and where a tool looks, linked by both sides) includes neither side's headers.
Harness side (parity/, golden/, llvm_lane/, input_limits/) never includes an engine header,
imports an engine module, is compiled with an engine's include folder or links an engine library:
it reaches an engine only through the engine's `--serve` worker (docs/protocol.md). The build side
is read from the generated build graph (build.ninja): what each harness target is compiled with and
links.

Prints one line per violation (file or target, the offending line, the rule) and
`LAYERING: OK` or `LAYERING: VIOLATED (N)` last. Exit 0 ok, 1 violated, 2 usage error.
"""
import argparse
import os
import re
import sys

ENGINE_DIRS = ("cpp_engine", "py_engine", "interp", "proof", "bindings")
HARNESS_DIRS = ("parity", "golden", "llvm_lane", "input_limits")
# Shared by both sides (every tool's --version and where it looks): it must know neither.
NEUTRAL_DIRS = ("tooling",)
# The one harness file that may import kemit_cpp, for the reference interpreter (kemit_cpp.run): the
# numerics worker's own opinion of a canonical text, not an engine; its modules come from the
# engine's worker (through check_numerics, or for the fuzzer through module_source.py).
INTERPRETER_USERS = {"parity/numerics/numerics_worker.py": "kemit_cpp"}
# kemit/tables.h: the engines' generated tables (the harness takes their facts from hello)
ENGINE_HEADERS = re.compile(r'#\s*include\s*[<"](kemit/(ir|llvm|target|families|interp)/[^">]*|kemit/engine\.h'
                            r'|kemit/tables\.h|serve\.h|kemit_interp/[^">]*)[">]')
HARNESS_HEADERS = re.compile(r'#\s*include\s*[<"](kemit/(driver|lane|golden|run_diff|report|fuzz)/[^">]*)[">]')
PY_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))", re.M)
ENGINE_MODULES = ("kemit", "kemit_cpp")
HARNESS_MODULES = ("kemit_harness",)
ENGINE_LIBRARIES = re.compile(r"(^|/)lib(kemit|kemit_interp)\.a$")
ENGINE_INCLUDE_DIRS = ("cpp_engine/include", "interp/include", "cpp_engine/src")
SOURCE_SUFFIXES = (".cpp", ".h", ".hpp", ".cc", ".py")


def source_files(root, folders):
    for folder in folders:
        for directory, subdirs, files in os.walk(os.path.join(root, folder)):
            subdirs[:] = sorted(d for d in subdirs if d not in ("__pycache__", "build"))
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(directory, name)
                    yield os.path.relpath(path, root), path


def imported_modules(text):
    """Top-level module names a Python source imports (relative imports are its own package)."""
    for match in PY_IMPORT.finditer(text):
        names = [match.group(1)] if match.group(1) else re.split(r"\s*,\s*", match.group(2))
        for name in names:
            if name and not name.startswith("."):
                yield name.split(".")[0], match.group(0).strip()


def source_violations(root):
    problems = []
    for relative, path in source_files(root, ENGINE_DIRS):
        text = open(path, encoding="utf-8", errors="replace").read()
        for match in HARNESS_HEADERS.finditer(text):
            problems.append(f"{relative}: {match.group(0)}: an engine includes harness code")
        if relative.endswith(".py"):
            for module, line in imported_modules(text):
                if module in HARNESS_MODULES or (module == "kemit_cpp" and relative.startswith("py_engine/")):
                    problems.append(f"{relative}: {line}: the engine imports {module}")
    for relative, path in source_files(root, NEUTRAL_DIRS):
        text = open(path, encoding="utf-8", errors="replace").read()
        for match in list(ENGINE_HEADERS.finditer(text)) + list(HARNESS_HEADERS.finditer(text)):
            problems.append(f"{relative}: {match.group(0)}: tooling/ is shared by engines and harness and "
                            "includes neither")
    for relative, path in source_files(root, HARNESS_DIRS):
        text = open(path, encoding="utf-8", errors="replace").read()
        for match in ENGINE_HEADERS.finditer(text):
            problems.append(f"{relative}: {match.group(0)}: a harness source includes an engine header "
                            "(ask the engine's worker instead, docs/protocol.md)")
        if relative.endswith(".py"):
            for module, line in imported_modules(text):
                if module in ENGINE_MODULES and INTERPRETER_USERS.get(relative) != module:
                    problems.append(f"{relative}: {line}: a harness module imports the engine module {module} "
                                    "(ask the engine's worker instead, docs/protocol.md)")
    return problems


def ninja_statements(text):
    """(outputs, rule, inputs, variables) of every `build` statement of a build.ninja."""
    lines = text.replace("$\n", "").splitlines()
    statements, current = [], None
    for line in lines:
        if line.startswith("build "):
            head, _, rest = line[len("build "):].partition(": ")
            rule, _, inputs = rest.partition(" ")
            current = (head.split(), rule, inputs.replace("||", "|").split(), {})
            statements.append(current)
        elif current and line.startswith("  ") and " = " in line:
            key, _, value = line.strip().partition(" = ")
            current[3][key] = value
        elif not line.startswith("  "):
            current = None
    return statements


def target_of(rule):
    """The CMake target of a compile or link rule: CXX_COMPILER__<target>_<config>."""
    match = re.match(r"CXX_(?:COMPILER|EXECUTABLE_LINKER|STATIC_LIBRARY_LINKER|SHARED_LIBRARY_LINKER|"
                     r"MODULE_LIBRARY_LINKER)__(\w+?)_(?:Debug|Release|RelWithDebInfo|MinSizeRel|)$", rule)
    return match.group(1) if match else None


def harness_targets(statements, root):
    """Targets that compile a source of a harness folder."""
    targets = set()
    for _, rule, inputs, _ in statements:
        if rule.startswith("CXX_COMPILER__") and inputs:
            relative = os.path.relpath(inputs[0], root) if os.path.isabs(inputs[0]) else inputs[0]
            if relative.split("/")[0] in HARNESS_DIRS:
                targets.add(target_of(rule))
    return targets


def build_violations(root, build):
    ninja = os.path.join(build, "build.ninja")
    if not os.path.exists(ninja):
        return [f"{ninja}: missing: configure the build with -G Ninja first (ci/test.sh does)"]
    statements = ninja_statements(open(ninja, encoding="utf-8").read())
    harness = harness_targets(statements, root)
    if not harness:
        return [f"{ninja}: no harness target found: the check would compare nothing"]
    problems, seen_includes = [], {}
    generated = os.path.join(build, "generated")  # the engines' kemit/tables.h (cpp_engine/CMakeLists.txt)
    for outputs, rule, inputs, variables in statements:
        target = target_of(rule)
        if target not in harness:
            continue
        if rule.startswith("CXX_COMPILER__"):
            for include in variables.get("INCLUDES", "").split():
                folder = include[2:].rstrip("/")
                if include.startswith("-I") and (folder.endswith(ENGINE_INCLUDE_DIRS) or folder == generated):
                    seen_includes.setdefault(target, (outputs[0], include))
        else:
            linked = inputs + variables.get("LINK_LIBRARIES", "").split()
            for item in sorted({i for i in linked if ENGINE_LIBRARIES.search(i)}):
                problems.append(f"target {target}: {outputs[0]} links {item}: a harness target links an engine "
                                "library")
    for target, (output, include) in sorted(seen_includes.items()):
        problems.append(f"target {target}: {output} (and its other objects) is compiled with {include}: a harness "
                        "target sees engine headers (it links or inherits an engine library)")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--build", required=True, help="the CMake build directory (Ninja generator)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        print(f"check_layering: --root {args.root} is not a folder", file=sys.stderr)
        return 2
    root = os.path.abspath(args.root)
    problems = source_violations(root) + build_violations(root, os.path.abspath(args.build))
    for problem in problems:
        print(problem)
    print("LAYERING: OK" if not problems else f"LAYERING: VIOLATED ({len(problems)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

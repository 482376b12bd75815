#!/usr/bin/python3
"""The families' mirror (docs/architecture.md, "The mirror"), checked on the sources.

  /usr/bin/python3 ci/check_mirror.py --root .

For every Python family module py_engine/kemit/families/NAME.py, the C++ header
cpp_engine/include/kemit/families/NAME.h must exist and declare every top-level Python function,
in the Python file's order. A function the header declares that Python does not define is C++ only:
it is allowed when it reads the parsed spec (`read_spec`, `read_<group>_spec`, `spec_of`), stands in
for a Python constant of that module (`ROW_FIELDS()`), or its comment says "no Python counterpart"
(the comment lines right above it, or the comment that opens its group of declarations).

Prints one line per violation (file, function, the rule) and `MIRROR: OK` or
`MIRROR: VIOLATED (N)` last. Exit 0 ok, 1 violated, 2 usage error.
"""
import argparse
import ast
import os
import re
import sys

PY_FAMILIES = "py_engine/kemit/families"
CPP_HEADERS = "cpp_engine/include/kemit/families"
# C++ only by design: the parsed spec read into the typed Spec, and a family's Spec from a shared context
SPEC_READERS = re.compile(r"^(read_spec|read_\w+_spec|spec_of)$")
UNMARKED = "no Python counterpart"
# lines at column 0 that never start a function declaration
NOT_DECLARATIONS = ("//", "#", "}", "{", "namespace", "struct", "class", "enum", "using", "extern", "constexpr",
                    "template", "typedef", "static_assert")


def python_names(path):
    """(the top-level functions in order, the top-level constants) of a Python module."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    constants = {target.id for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    return functions, constants


def without_template_arguments(line):
    """The line with every <...> removed, innermost first: `std::function<std::string()>` has no '('."""
    while True:
        shorter = re.sub(r"<[^<>]*>", "", line)
        if shorter == line:
            return line
        line = shorter


def header_functions(path):
    """[(name, line number, marked)] of the functions a header declares at namespace level, in order;
    marked: a comment above it, or above its group of declarations, says it has no Python counterpart."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found, comment, group_comment, in_group = [], [], [], False
    for number, line in enumerate(lines, 1):
        if line.startswith("//"):
            comment.append(line)
            continue
        if not line.strip():  # a blank line ends the group of declarations
            comment, group_comment, in_group = [], [], False
            continue
        above, comment = comment, []
        if not in_group:  # the comment that opens the group
            group_comment, in_group = above, True
        if line[0].isspace() or line.startswith(NOT_DECLARATIONS):
            continue
        match = re.search(r"(\w+)\s*\(", without_template_arguments(line))
        if not match or "=" in line.split("(")[0]:
            continue
        marked = any(UNMARKED in text for text in above + group_comment)
        if not found or found[-1][0] != match.group(1):  # overloads count once
            found.append((match.group(1), number, marked))
    return found


def check_family(root, name):
    """The violations of one family module: [(file, line, text)]."""
    py_path = os.path.join(root, PY_FAMILIES, name + ".py")
    header = os.path.join(CPP_HEADERS, name + ".h")
    if not os.path.exists(os.path.join(root, header)):
        return [(header, 0, f"missing: the C++ mirror of {PY_FAMILIES}/{name}.py")]
    functions, constants = python_names(py_path)
    declared = header_functions(os.path.join(root, header))
    names = [entry[0] for entry in declared]
    problems = [(header, 0, f"{function}: defined in {name}.py, not declared here")
                for function in functions if function not in names]
    in_header = [function for function in names if function in functions]
    in_python = [function for function in functions if function in names]
    for index, (have, want) in enumerate(zip(in_header, in_python)):
        if have != want:
            line = declared[names.index(have)][1]
            after = f"after {in_python[index - 1]}" if index else "first"
            problems.append((header, line, f"{have}: out of the Python order (expected {want} {after})"))
            break
    for function, line, marked in declared:
        if function in functions or function in constants or SPEC_READERS.match(function) or marked:
            continue
        problems.append((header, line, f"{function}: C++ only, and its comment does not say '{UNMARKED}'"))
    return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the source tree")
    args = parser.parse_args(argv)
    families = os.path.join(args.root, PY_FAMILIES)
    if not os.path.isdir(families):
        print(f"check_mirror: {families} is not a folder; pass the source tree as --root", file=sys.stderr)
        return 2
    names = sorted(entry[:-3] for entry in os.listdir(families) if entry.endswith(".py") and entry != "__init__.py")
    problems = [problem for name in names for problem in check_family(args.root, name)]
    for path, line, text in problems:
        print(f"{path}:{line}: {text}" if line else f"{path}: {text}")
    print(f"MIRROR: VIOLATED ({len(problems)})" if problems else "MIRROR: OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

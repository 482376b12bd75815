#!/usr/bin/python3
"""The engines' mirror (docs/architecture.md, "The mirror"), checked on the sources.

  /usr/bin/python3 ci/check_mirror.py --root .

Declarations. For every Python module py_engine/kemit/LAYER/NAME.py of the layers families, ir and
llvm, the C++ header cpp_engine/include/kemit/LAYER/NAME.h must exist and declare every top-level
Python function, in the Python file's order. In ir/ and llvm/ a Python helper may instead be defined
only in the source cpp_engine/src/LAYER/NAME.cpp, and a module without a header of its own (a class
of Lowering methods) is checked on its source. A function the C++ file declares that Python does not
define is C++ only: it is allowed when it reads the parsed spec (`read_spec`, `read_<group>_spec`,
`spec_of`), stands in for a Python constant of that module (`ROW_FIELDS()`, `flavors()`), sits in
the source's anonymous namespace, or its comment says "no Python counterpart" or "C++ only" (the
comment lines right above it, or the comment that opens its group of declarations). A member
definition (`Lowering::lower_mma`) mirrors a Python method and is not ordered here.

Reason templates. Every text the engines format from a template (a string literal followed by
`.format(` in Python, the literal that opens `fmt::format(` in C++) is contract: each Python module
py_engine/kemit/PATH.py and its source cpp_engine/src/PATH.cpp hold the same templates in the same
order, and every hole is named (`{block}`, never `{}` or `{0}`).

Prints one line per violation (file, function, the rule) and `MIRROR: OK` or
`MIRROR: VIOLATED (N)` last. Exit 0 ok, 1 violated, 2 usage error.
"""
import argparse
import ast
import os
import re
import string
import sys

PY_ROOT = "py_engine/kemit"
CPP_HEADERS = "cpp_engine/include/kemit"
CPP_SOURCES = "cpp_engine/src"
DECLARED_LAYERS = ("families", "ir", "llvm")
# layers whose private helpers may be defined only in the source (its anonymous namespace)
SOURCE_HELPER_LAYERS = ("ir", "llvm")
# C++ only by design: the parsed spec read into the typed Spec, and a family's Spec from a shared context
SPEC_READERS = re.compile(r"^(read_spec|read_\w+_spec|spec_of)$")
UNMARKED = "no Python counterpart"
MARKS = (UNMARKED, "C++ only")
# lines at column 0 that never start a function declaration
NOT_DECLARATIONS = ("//", "#", "}", "{", "namespace", "struct", "class", "enum", "using", "extern", "constexpr",
                    "template", "typedef", "static_assert")
ANONYMOUS_OPEN = re.compile(r"^namespace\s*\{")
NAMESPACE_CLOSE = re.compile(r"^\}\s*(//.*)?$")
FMT_CALL = re.compile(r"\bfmt::format\(\s*")
STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'", "0": "\0"}


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


def declared_name(line):
    """(name, qualified) of the function a column-0 line declares or defines, or None."""
    if line[0].isspace() or line.startswith(NOT_DECLARATIONS):
        return None
    match = re.search(r"(::)?(\w+)\s*\(", without_template_arguments(line))
    if not match or "=" in line.split("(")[0]:
        return None
    return match.group(2), bool(match.group(1))


def header_functions(path):
    """[(name, line number, marked)] of the functions a C++ file declares at namespace level, in order;
    marked: a comment above it, or above its group of declarations, says it has no Python counterpart,
    or it sits in the anonymous namespace. Member definitions (`Class::name`) are left out."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    found, comment, group_comment, in_group, anonymous = [], [], [], False, False
    for number, line in enumerate(lines, 1):
        if ANONYMOUS_OPEN.match(line):
            anonymous = True
        elif anonymous and NAMESPACE_CLOSE.match(line):
            anonymous = False
        if line.startswith(("//", "template")):  # a template head leaves the comment to its function
            comment += [line] if line.startswith("//") else []
            continue
        if not line.strip():  # a blank line ends the group of declarations
            comment, group_comment, in_group = [], [], False
            continue
        above, comment = comment, []
        if not in_group:  # the comment that opens the group
            group_comment, in_group = above, True
        declared = declared_name(line)
        if not declared or declared[1]:
            continue
        name = declared[0]
        marked = anonymous or any(mark in text for text in above + group_comment for mark in MARKS)
        if not found or found[-1][0] != name:  # overloads count once
            found.append((name, number, marked))
    return found


def cpp_pair(root, layer, name):
    """The C++ file that declares a Python module's functions: its header, else (ir/, llvm/) its source;
    None if neither."""
    header, source = f"{CPP_HEADERS}/{layer}/{name}.h", f"{CPP_SOURCES}/{layer}/{name}.cpp"
    for path in (header, source) if layer in SOURCE_HELPER_LAYERS else (header,):
        if os.path.exists(os.path.join(root, path)):
            return path
    return None


def check_declarations(root, layer, name):
    """The declaration violations of one Python module: [(file, line, text)]."""
    py_file = f"{PY_ROOT}/{layer}/{name}.py"
    pair = cpp_pair(root, layer, name)
    if pair is None:
        return [(f"{CPP_HEADERS}/{layer}/{name}.h", 0, f"missing: the C++ mirror of {py_file}")]
    functions, constants = python_names(os.path.join(root, py_file))
    declared = header_functions(os.path.join(root, pair))
    names = [entry[0] for entry in declared]
    source = f"{CPP_SOURCES}/{layer}/{name}.cpp"
    in_source = set()
    if layer in SOURCE_HELPER_LAYERS and pair != source and os.path.exists(os.path.join(root, source)):
        in_source = {entry[0] for entry in header_functions(os.path.join(root, source))}
    problems = [(pair, 0, f"{function}: defined in {name}.py, not declared here"
                 + (f" nor defined in {name}.cpp" if layer in SOURCE_HELPER_LAYERS else ""))
                for function in functions if function not in names and function not in in_source]
    in_header = [function for function in names if function in functions]
    in_python = [function for function in functions if function in names]
    for index, (have, want) in enumerate(zip(in_header, in_python)):
        if have != want:
            line = declared[names.index(have)][1]
            after = f"after {in_python[index - 1]}" if index else "first"
            problems.append((pair, line, f"{have}: out of the Python order (expected {want} {after})"))
            break
    for function, line, marked in declared:
        if function in functions or function.upper() in constants or SPEC_READERS.match(function) or marked:
            continue
        problems.append((pair, line, f"{function}: C++ only, and its comment does not say '{UNMARKED}'"))
    return problems


def python_templates(path):
    """[(template, function, line)] of a Python module in source order: every string literal whose
    `.format` is called; function: the top-level function or method it sits in ("" at module level)."""
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    found = []

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function:
            function = node.name
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
            found.append((node.func.value.value, function, node.lineno, node.col_offset))
        for child in ast.iter_child_nodes(node):
            visit(child, function if not isinstance(child, ast.ClassDef) else "")

    visit(tree, "")
    return [(text, function, line) for text, function, line, _ in sorted(found, key=lambda item: item[2:])]


def unescape(body):
    return re.sub(r"\\(.)", lambda match: ESCAPES.get(match.group(1), match.group(0)), body)


def cpp_templates(path):
    """[(template, function, line)] of a C++ source in source order: the string literal (adjacent
    literals joined) that opens each fmt::format call; function: the last column-0 definition above it."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    starts, offset = [], 0
    for number, line in enumerate(text.split("\n"), 1):
        declared = line and declared_name(line)
        if declared:
            starts.append((offset, declared[0]))
        offset += len(line) + 1
    found = []
    for call in FMT_CALL.finditer(text):
        position, pieces = call.end(), []
        while True:
            literal = STRING_LITERAL.match(text, position)
            if not literal:
                break
            pieces.append(unescape(literal.group(1)))
            position = literal.end()
            while position < len(text) and text[position].isspace():
                position += 1
        if not pieces:
            continue
        function = next((name for start, name in reversed(starts) if start < call.start()), "")
        found.append(("".join(pieces), function, text.count("\n", 0, call.start()) + 1))
    return found


def unnamed_holes(template):
    """The holes of a template that have no name: `{}`, `{0}`."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    except ValueError:
        return ["(unbalanced braces)"]
    return [f"{{{field}}}" for field in fields if not field or field.isdigit()]


def check_templates(root, module):
    """The template violations of one Python module (path under PY_ROOT, no .py) and its C++ source."""
    py_file, cpp_file = f"{PY_ROOT}/{module}.py", f"{CPP_SOURCES}/{module}.cpp"
    python = python_templates(os.path.join(root, py_file))
    if not os.path.exists(os.path.join(root, cpp_file)):
        return [(py_file, line, f"{function}: template {text!r} has no C++ source {cpp_file} to mirror it")
                for text, function, line in python[:1]]
    cpp = cpp_templates(os.path.join(root, cpp_file))
    problems = [(path, line, f"{function}: template {text!r} has an unnamed hole {hole}; name every hole")
                for path, side in ((py_file, python), (cpp_file, cpp))
                for text, function, line in side for hole in unnamed_holes(text)]
    python_texts, cpp_texts = [entry[0] for entry in python], [entry[0] for entry in cpp]
    for index in range(max(len(python), len(cpp))):
        if index >= len(cpp):
            text, function, line = python[index]
            problems.append((cpp_file, 0, f"{function}: template {text!r} of {py_file}:{line} is missing here"))
        elif index >= len(python):
            text, function, line = cpp[index]
            problems.append((cpp_file, line, f"{function}: template {text!r} is not in {py_file}"))
        elif python_texts[index] != cpp_texts[index]:
            text, function, line = cpp[index]
            want, want_function, want_line = python[index]
            in_python, in_cpp = text in python_texts[index:], want in cpp_texts[index:]
            if not in_python and not in_cpp:
                rule = "differs from Python's"
            elif not in_cpp:
                rule = "stands where Python has a template this file lacks"
            elif not in_python:
                rule = "is not in the Python file"
            else:
                rule = "is out of the Python order"
            problems.append((cpp_file, line, f"{function}: template {text!r} {rule} (expected {want!r} of "
                             f"{want_function}, {py_file}:{want_line})"))
        else:
            continue
        break
    return problems


def python_modules(root):
    """Every module under PY_ROOT as its path without .py, sorted."""
    modules = []
    for folder, _, files in os.walk(os.path.join(root, PY_ROOT)):
        relative = os.path.relpath(folder, os.path.join(root, PY_ROOT))
        modules += [os.path.normpath(os.path.join(relative, entry[:-3])) for entry in files
                    if entry.endswith(".py") and entry != "__init__.py"]
    return sorted(modules)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the source tree")
    args = parser.parse_args(argv)
    families = os.path.join(args.root, PY_ROOT, "families")
    if not os.path.isdir(families):
        print(f"check_mirror: {families} is not a folder; pass the source tree as --root", file=sys.stderr)
        return 2
    modules = python_modules(args.root)
    problems = [problem for module in modules if os.path.dirname(module) in DECLARED_LAYERS
                for problem in check_declarations(args.root, *os.path.split(module))]
    problems += [problem for module in modules for problem in check_templates(args.root, module)]
    for path, line, text in problems:
        print(f"{path}:{line}: {text}" if line else f"{path}: {text}")
    print(f"MIRROR: VIOLATED ({len(problems)})" if problems else "MIRROR: OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

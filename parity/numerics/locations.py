"""Where check_numerics looks: the rule of docs/driver.md "Where it looks", as the C++ tools apply
it (tooling/src/locations.cpp; tests/daily_use/test_where_it_looked.py checks the two agree).

    tree:    --root DIR; else the kemit checkout at or above the current directory (the first
             folder up holding py_engine/kemit/ and parity/configs/); else the tree of this script.
    build:   --build DIR; else $KEMIT_BUILD_DIR; else <tree>/build (a script has no build of its own).
    configs: --configs DIR; else <tree>/parity/configs.
"""
import os
import re
import subprocess
from dataclasses import dataclass

SCRIPT_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Locations:
    root: str
    build: str
    configs: str
    root_origin: str
    build_origin: str
    configs_origin: str

    def describe(self):
        return (f"tree {self.root} ({self.root_origin}), build {self.build} ({self.build_origin}), "
                f"configs {self.configs} ({self.configs_origin})")


class LocationError(ValueError):
    """A folder given by a flag does not exist (a usage error: exit 2)."""


def is_checkout(folder):
    return os.path.isdir(os.path.join(folder, "py_engine", "kemit")) and \
        os.path.isdir(os.path.join(folder, "parity", "configs"))


def checkout_above(start):
    folder = os.path.abspath(start)
    while True:
        if is_checkout(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return ""
        folder = parent


def existing(flag, value):
    if not os.path.isdir(value):
        raise LocationError(f"{flag} {value}: no such folder")
    return os.path.normpath(os.path.abspath(value))


def locate(root=None, build=None, configs=None, cwd=None, environ=os.environ):
    cwd = cwd or os.getcwd()
    if root:
        root, root_origin = existing("--root", root), "--root"
    elif checkout_above(cwd):
        root, root_origin = checkout_above(cwd), "cwd"
    else:
        root, root_origin = SCRIPT_TREE, "built-in"
    if build:
        build, build_origin = existing("--build", build), "--build"
    elif environ.get("KEMIT_BUILD_DIR"):
        build, build_origin = existing("$KEMIT_BUILD_DIR", environ["KEMIT_BUILD_DIR"]), "$KEMIT_BUILD_DIR"
    else:
        build, build_origin = os.path.join(root, "build"), "tree"
    if configs:
        configs, configs_origin = existing("--configs", configs), "--configs"
    else:
        configs, configs_origin = os.path.join(root, "parity", "configs"), "tree"
    return Locations(root, build, configs, root_origin, build_origin, configs_origin)


def version_line(tool):
    """`<tool> <CMake project VERSION> (git <describe>)`, as the C++ tools print it."""
    with open(os.path.join(SCRIPT_TREE, "CMakeLists.txt"), encoding="utf-8") as handle:
        version = re.search(r"project\(kemit VERSION ([0-9.]+)", handle.read()).group(1)
    describe = subprocess.run(["git", "-C", SCRIPT_TREE, "describe", "--always", "--dirty", "--tags"],
                              capture_output=True, text=True, check=False).stdout.strip() or "no git"
    return f"{tool} {version} (git {describe})"


def header_line(tool, where):
    return f"{version_line(tool)}: {where.describe()}"

"""Sanitizer builds only (cmake/sanitizer.cmake): the tests whose Python imports the instrumented
kemit_cpp module put this folder on PYTHONPATH and the sanitizer runtimes in KEMIT_SANITIZER_PRELOAD.

AddressSanitizer must come first in the library list of an interpreter that loads kemit_cpp, so a
Python process started without the runtimes starts itself again with them in LD_PRELOAD (before
any of its own code runs). Once started with them, it takes LD_PRELOAD out of its environment:
the programs it starts (git, cmake, the compiler, llc) run without the runtimes, as a user runs
them; our own programs link them, and a Python child starts itself again the same way.
"""
import importlib.machinery
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_runtimes = os.environ.get("KEMIT_SANITIZER_PRELOAD")
if _runtimes:
    if os.environ.get("LD_PRELOAD") == _runtimes:
        del os.environ["LD_PRELOAD"]
    else:
        os.execve(sys.executable, sys.orig_argv, {**os.environ, "LD_PRELOAD": _runtimes})

# This file hides the interpreter's own sitecustomize (Debian's): run it as site.py would.
_theirs = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != _here])
if _theirs and _theirs.origin:
    with open(_theirs.origin, encoding="utf-8") as _file:
        exec(compile(_file.read(), _theirs.origin, "exec"), {"__name__": "sitecustomize", "__file__": _theirs.origin})

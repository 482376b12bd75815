"""kemit: the Python reference engine.

`kemit.emit(family, arch, spec, flavors, engine="py")` emits one config with this engine, with the
C++ engine through the `kemit_cpp` binding (engine="cpp"), or with both, raising EngineMismatch
on any difference (engine="both"). The command line is `python3 -m kemit.emit` (kemit/emit.py).
"""
from .engine import EmitResult, FlavorSection
from .engine import emit as _emit_py

__all__ = ["emit", "EmitResult", "FlavorSection", "EngineMismatch"]


class EngineMismatch(AssertionError):
    """The two engines disagreed; the message names the first differing field."""


def _cpp_module():
    try:
        import kemit_cpp
    except ImportError as error:
        raise ImportError("the C++ engine binding kemit_cpp is not importable: build it with "
                          "`cmake --build build --target kemit_cpp` and put build/bindings on "
                          f"PYTHONPATH ({error})") from error
    return kemit_cpp


def _emit_cpp(family, arch, spec, flavors):
    raw = _cpp_module().emit(family, arch, spec, list(flavors))
    return EmitResult(rejected=raw["rejected"], reason=raw["reason"], kernel_name=raw["kernel_name"],
                      canonical=raw["canonical"],
                      ll=[FlavorSection(s["flavor"], s["rejected"], s["text"], s["reason"]) for s in raw["ll"]])


def first_difference(py, cpp):
    """"" when the results are identical, else a description of the first differing field."""
    for field in ("rejected", "reason", "kernel_name", "canonical"):
        if getattr(py, field) != getattr(cpp, field):
            return f"{field} differs: py {getattr(py, field)!r:.200} vs cpp {getattr(cpp, field)!r:.200}"
    if [s.flavor for s in py.ll] != [s.flavor for s in cpp.ll]:
        return "flavor sections differ"
    for a, b in zip(py.ll, cpp.ll):
        if a != b:
            return f"{a.flavor} section differs"
    return ""


def emit(family, arch, spec, flavors, engine="py"):
    if engine == "py":
        return _emit_py(family, arch, spec, flavors)
    if engine == "cpp":
        return _emit_cpp(family, arch, spec, flavors)
    if engine != "both":
        raise ValueError(f"engine must be one of py, cpp, both (got {engine!r})")
    py, cpp = _emit_py(family, arch, spec, flavors), _emit_cpp(family, arch, spec, flavors)
    difference = first_difference(py, cpp)
    if difference:
        raise EngineMismatch(f"{family} on {arch}: {difference}")
    return py

"""Random elementwise specs: the Python engine emits or refuses cleanly, with the exact reason an
independent oracle predicts; and (once built) the C++ engine answers byte for byte the same.

Specs mix valid values, unknown fields, wrong JSON types, and integers in and out of int32 (up to
the int64 range, which both engines read exactly). Every emitted module also goes through the real
LLVM of its flavor (llvm_c.py).
"""
import os
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import llvm_c
from kemit.engine import emit
from kemit.llvm.flavors import FLAVORS
from kemit.target.arch import ARCHS

FLAVOR_NAMES = [f.name for f in FLAVORS]
PROCESSORS = {f.name: f.processors for f in FLAVORS}
OLDEST = {a.name: a.oldest_flavor for a in ARCHS}
WAVES = {a.name: a.wave_size for a in ARCHS}
OPS = ("add", "sub", "mul", "max", "min", "fma", "relu", "silu")
FIELDS = (("op", "str", "add"), ("dtype", "str", "f32"), ("vec", "int", 1), ("block", "int", 256),
          ("waves_per_eu", "int", 0))
EXAMPLES = settings(max_examples=200, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- strategies ---------------------------------------------------------------------------------------
BOUNDARY_INTS = [0, 1, 2, 3, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 512, 1024, 1056, 2048, 9, -1, -64,
                 (1 << 31) - 1, -(1 << 31), 1 << 31, -(1 << 31) - 1, (1 << 63) - 1, -(1 << 63), 1 << 32]
INTS = st.one_of(st.sampled_from(BOUNDARY_INTS), st.integers(-(1 << 31), (1 << 31) - 1),
                 st.integers(-(1 << 63), (1 << 63) - 1))
WRONG = st.one_of(st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False),
                  st.sampled_from([4.0, 0.5, -0.0, 1e300]), st.text(max_size=5),
                  st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(0, 3), max_size=2))
VALID = {"op": st.sampled_from(OPS), "dtype": st.sampled_from(("f16", "bf16", "f32")),
         "vec": st.sampled_from((1, 2, 4, 8)), "block": st.sampled_from((32, 64, 96, 128, 192, 256, 512, 1024)),
         "waves_per_eu": st.integers(0, 8)}
MESSY = {"op": st.one_of(st.sampled_from(OPS), st.sampled_from(("tanh", "", "ADD")), st.text(max_size=6), WRONG),
         "dtype": st.one_of(st.sampled_from(("f16", "bf16", "f32", "f64", "")), st.text(max_size=4), WRONG),
         "vec": st.one_of(VALID["vec"], INTS, WRONG),
         "block": st.one_of(VALID["block"], INTS, WRONG),
         "waves_per_eu": st.one_of(VALID["waves_per_eu"], INTS, WRONG)}
UNKNOWN_FIELDS = st.dictionaries(
    st.one_of(st.sampled_from(("unroll", "Op", "vec ", "", "zeta", "alpha", "é")), st.text(max_size=6)),
    st.one_of(INTS, WRONG), max_size=3)


def specs():
    valid = st.fixed_dictionaries({}, optional=VALID)
    messy = st.fixed_dictionaries({}, optional=MESSY)
    with_unknown = st.builds(lambda known, extra: {**extra, **known}, messy, UNKNOWN_FIELDS)
    not_object = st.one_of(st.lists(st.integers(0, 2), max_size=2), st.text(max_size=3), st.none(), INTS,
                           st.booleans(), st.floats(allow_nan=False, allow_infinity=False))
    return st.one_of(valid, valid, valid, messy, with_unknown, not_object)


ARCH_NAMES = st.sampled_from([a.name for a in ARCHS] * 3 + ["gfx000", "gfx940", "", "GFX90A"])
FLAVOR_LISTS = st.lists(st.sampled_from(FLAVOR_NAMES), unique=True, max_size=3)


# ---- the oracle: the contract, written independently of the engine ----------------------------------
def json_kind(value):
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def expected_reason(arch, raw):
    """The refusal the contract demands (docs/protocol.md, families/spec.py order), or ""."""
    if arch not in WAVES:
        return f"unknown arch '{arch}' (known: {', '.join(a.name for a in ARCHS)})"
    if not isinstance(raw, dict):
        return f"elementwise spec must be a JSON object (got {json_kind(raw)})"
    names = [name for name, _, _ in FIELDS]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        return f"unknown field '{unknown[0]}' in elementwise spec (known: {', '.join(sorted(names))})"
    spec = {name: raw.get(name, default) for name, _, default in FIELDS}
    for name, kind, _ in FIELDS:
        value = spec[name]
        if kind == "str" and not isinstance(value, str):
            return f"field '{name}' must be a string (got {json_kind(value)})"
        if kind == "int":
            if isinstance(value, float):
                return f"field '{name}' must be an integer (got a fraction)"
            if json_kind(value) != "number":
                return f"field '{name}' must be an integer (got {json_kind(value)})"
            if not -2 ** 31 <= value <= 2 ** 31 - 1:
                return f"field '{name}' must fit in 32 bits"
    if spec["op"] not in OPS:
        return f"op must be one of {', '.join(OPS)} (got '{spec['op']}')"
    if spec["dtype"] not in ("f16", "bf16", "f32"):
        return f"dtype must be one of f16, bf16, f32 (got '{spec['dtype']}')"
    if spec["vec"] not in (1, 2, 4, 8):
        return f"vec must be one of 1, 2, 4, 8 (got {spec['vec']})"
    if spec["block"] < 1 or spec["block"] % WAVES[arch]:
        return f"block must be a positive multiple of the wave size {WAVES[arch]} on {arch} (got {spec['block']})"
    if spec["block"] > 1024:
        return f"block must be at most 1024 (got {spec['block']})"
    if not 0 <= spec["waves_per_eu"] <= 8:
        return f"waves_per_eu must be between 0 and 8 (got {spec['waves_per_eu']})"
    return ""


def expected_name(raw):
    spec = {name: raw.get(name, default) for name, _, default in FIELDS}
    name = f"ew_{spec['op']}_{spec['dtype']}_v{spec['vec']}_b{spec['block']}"
    return name + (f"_w{spec['waves_per_eu']}" if spec["waves_per_eu"] else "")


# ---- the Python engine against the oracle (and real LLVM) -------------------------------------------
def test_python_engine_emits_or_refuses_cleanly():
    seen = {"emitted": 0, "refused": 0, "gated": 0, "llvm_checked": 0}

    @EXAMPLES
    @given(arch=ARCH_NAMES, raw=specs(), flavors=FLAVOR_LISTS)
    def check(arch, raw, flavors):
        result = emit("elementwise", arch, raw, flavors)  # anything raised fails the test
        reason = expected_reason(arch, raw)
        if reason:
            seen["refused"] += 1
            assert (result.rejected, result.reason) == (True, reason)
            assert (result.kernel_name, result.canonical, result.ll) == ("", "", [])
            return
        seen["emitted"] += 1
        assert (result.rejected, result.reason) == (False, "")
        assert result.kernel_name == expected_name(raw)
        assert result.canonical.startswith(f"; kemit canonical IR 1\nkernel @{result.kernel_name} {{\n  arch {arch}\n")
        assert [s.flavor for s in result.ll] == flavors
        for section in result.ll:
            if arch in PROCESSORS[section.flavor]:
                assert (section.rejected, section.reason) == (False, "")
                assert section.text.startswith(f"; kemit kernel {result.kernel_name} for {arch} at {section.flavor}\n")
                try:
                    problem = llvm_c.checker(section.flavor).check(section.text)
                except llvm_c.MissingLLVM as missing:
                    pytest.fail(str(missing), pytrace=False)
                assert problem == ""
                seen["llvm_checked"] += 1
            else:
                seen["gated"] += 1
                assert (section.rejected, section.text) == (True, "")
                assert section.reason == f"{arch} needs flavor {OLDEST[arch]} or newer (got {section.flavor})"

    check()
    # The run compared something on both paths (hypothesis could in principle draw only one kind).
    assert seen["emitted"] >= 10 and seen["refused"] >= 10 and seen["llvm_checked"] >= 10, seen


def test_oracle_agrees_with_the_parity_configs():
    """The oracle itself is checked against the hand-written refusal texts of the config file."""
    from test_elementwise import CONFIGS, REFUSALS
    for config in CONFIGS:
        assert expected_reason(config["arch"], config["spec"]) == REFUSALS.get(config["id"], "")


# ---- the C++ engine through the binding module `kemit_cpp` ------------------------------------------
def py_answer(result):
    """The Python result in the binding's dict shape (bindings/engine_bindings.cpp: result_dict)."""
    return {"rejected": result.rejected, "reason": result.reason, "kernel_name": result.kernel_name,
            "canonical": result.canonical,
            "ll": [{"flavor": s.flavor, "rejected": s.rejected, "text": s.text, "reason": s.reason}
                   for s in result.ll]}


def first_line_difference(a, b):
    if not (isinstance(a, str) and isinstance(b, str)):
        return f" (py {a!r:.200} vs cpp {b!r:.200})"
    for number, (x, y) in enumerate(zip(a.splitlines(True), b.splitlines(True)), 1):
        if x != y:
            return f" at line {number}: py {x!r} vs cpp {y!r}"
    return f" (lengths {len(a)} vs {len(b)})"


def first_difference(py, cpp):
    for key in ("rejected", "reason", "kernel_name", "canonical"):
        if py[key] != cpp.get(key):
            return f"{key}: py {py[key]!r:.300} vs cpp {cpp.get(key)!r:.300}"
    if py["ll"] != cpp.get("ll"):
        for a, b in zip(py["ll"], cpp.get("ll") or []):
            for key in ("flavor", "rejected", "reason", "text"):
                if a[key] != b.get(key):
                    return f"section {a['flavor']}: {key} differs" + first_line_difference(a[key], b.get(key))
        return f"flavor sections differ: py {[s['flavor'] for s in py['ll']]} vs cpp {cpp.get('ll')!r:.300}"
    return ""


def test_cpp_engine_agrees_byte_for_byte(kemit_cpp):
    compared = {"emitted": 0, "refused": 0}

    @EXAMPLES
    @given(arch=ARCH_NAMES, raw=specs(), flavors=FLAVOR_LISTS)
    # A NUL byte in a field name or processor: the C++ reason once ended at it (a C string).
    @example(arch="gfx90a", raw={"\x00": 0}, flavors=[])
    @example(arch="gfx\x0090a", raw={}, flavors=["llvm19"])
    def check(arch, raw, flavors):
        py = py_answer(emit("elementwise", arch, raw, flavors))
        cpp = dict(kemit_cpp.emit("elementwise", arch, raw, flavors))
        cpp["ll"] = [dict(section) for section in cpp.get("ll", [])]
        difference = first_difference(py, cpp)
        assert difference == "", f"elementwise on {arch} with spec {raw!r}: {difference}"
        compared["refused" if py["rejected"] else "emitted"] += 1

    check()
    assert compared["emitted"] >= 10 and compared["refused"] >= 10, compared

"""Family `elementwise` over every config of parity/configs/elementwise.json, and its spec parsing."""
import json

import pytest

from repo_paths import ELEMENTWISE_CONFIGS
from kemit.engine import emit, family_names
from kemit.families import elementwise
from kemit.families.spec import SpecError
from kemit.llvm.flavors import FLAVORS
from kemit.target.arch import find_arch

FLAVOR_NAMES = [f.name for f in FLAVORS]
with open(ELEMENTWISE_CONFIGS, encoding="utf-8") as handle:
    DOCUMENT = json.load(handle)
CONFIGS = DOCUMENT["configs"]
KNOWN_FIELDS = "block, dtype, op, vec, waves_per_eu"

# The refusal text of every `reject` config: part of the contract both engines must print.
REFUSALS = {
    53: "op must be one of add, sub, mul, max, min, fma, relu, silu (got 'tanh')",
    54: "dtype must be one of f16, bf16, f32 (got 'f64')",
    55: "vec must be one of 1, 2, 4, 8 (got 3)",
    56: "block must be a positive multiple of the wave size 64 on gfx942 (got 96)",
    57: "block must be a positive multiple of the wave size 32 on gfx1100 (got 48)",
    58: "block must be a positive multiple of the wave size 64 on gfx90a (got 0)",
    59: "block must be at most 1024 (got 2048)",
    60: "waves_per_eu must be between 0 and 8 (got 9)",
    61: "waves_per_eu must be between 0 and 8 (got -1)",
    62: f"unknown field 'unroll' in elementwise spec (known: {KNOWN_FIELDS})",
    63: "field 'vec' must be an integer (got string)",
    64: "field 'vec' must be an integer (got a fraction)",
    65: "field 'op' must be a string (got boolean)",
    66: "unknown arch 'gfx000' (known: gfx90a, gfx942, gfx950, gfx1100, gfx1151, gfx1201, gfx1250)",
}

KERNEL_NAMES = {
    1: "ew_add_f32_v1_b256", 2: "ew_sub_f32_v1_b256", 3: "ew_mul_f32_v1_b256", 4: "ew_max_f32_v1_b256",
    5: "ew_min_f32_v1_b256", 6: "ew_fma_f32_v1_b256", 7: "ew_relu_f32_v1_b256", 8: "ew_silu_f32_v1_b256",
    9: "ew_add_f16_v4_b128", 10: "ew_sub_f16_v4_b128", 11: "ew_mul_f16_v4_b128", 12: "ew_max_f16_v4_b128",
    13: "ew_min_f16_v4_b128", 14: "ew_fma_f16_v4_b128", 15: "ew_relu_f16_v4_b128", 16: "ew_silu_f16_v4_b128",
    17: "ew_add_bf16_v8_b512", 18: "ew_sub_bf16_v8_b512", 19: "ew_mul_bf16_v8_b512", 20: "ew_max_bf16_v8_b512",
    21: "ew_min_bf16_v8_b512", 22: "ew_fma_bf16_v8_b512", 23: "ew_relu_bf16_v8_b512", 24: "ew_silu_bf16_v8_b512",
    25: "ew_add_f16_v1_b256", 26: "ew_add_f16_v2_b256", 27: "ew_add_f16_v4_b256", 28: "ew_add_f16_v8_b256",
    29: "ew_fma_bf16_v2_b256", 30: "ew_silu_f32_v8_b256", 31: "ew_relu_bf16_v1_b256", 32: "ew_mul_f16_v2_b256",
    33: "ew_add_f32_v4_b64", 34: "ew_add_f32_v4_b32", 35: "ew_mul_f32_v2_b1024", 36: "ew_fma_f16_v4_b256_w4",
    37: "ew_max_bf16_v4_b256", 38: "ew_min_f16_v8_b256", 39: "ew_sub_f32_v2_b256", 40: "ew_silu_bf16_v2_b256",
    41: "ew_silu_bf16_v4_b256", 42: "ew_relu_f16_v8_b256", 43: "ew_add_bf16_v8_b192", 44: "ew_fma_f16_v1_b96",
    45: "ew_min_f32_v8_b256_w2", 46: "ew_max_f16_v2_b64_w8", 47: "ew_sub_bf16_v1_b256", 48: "ew_silu_bf16_v4_b1024",
    49: "ew_relu_f16_v4_b256", 50: "ew_mul_f32_v1_b256", 51: "ew_fma_f32_v8_b64", 52: "ew_add_f32_v1_b256",
    67: "ew_fma_f16_v4_b256",
}


def emit_config(config):
    return emit("elementwise", config["arch"], config["spec"], FLAVOR_NAMES)


def test_the_config_file_covers_both_outcomes():
    assert DOCUMENT["family"] == "elementwise"
    ids = [c["id"] for c in CONFIGS]
    assert ids == sorted(set(ids)) and ids[0] >= 1
    assert {c["id"] for c in CONFIGS if c["expect"] == "reject"} == set(REFUSALS)
    assert {c["id"] for c in CONFIGS if c["expect"] == "emit"} == set(KERNEL_NAMES)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"config{c['id']}")
def test_expectation_holds(config):
    result = emit_config(config)
    assert result.rejected == (config["expect"] == "reject"), (config["why"], result.reason)
    if result.rejected:
        assert result.reason == REFUSALS[config["id"]]
        assert (result.kernel_name, result.canonical, result.ll) == ("", "", [])
        return
    assert result.reason == ""
    assert result.kernel_name == KERNEL_NAMES[config["id"]]
    assert result.canonical.startswith(f"; kemit canonical IR 1\nkernel @{result.kernel_name} {{\n"
                                       f"  arch {config['arch']}\n")
    # One section per flavor, in request order; a flavor gate refuses exactly the flavors whose
    # LLVM does not know the processor, and every other flavor emits.
    assert [s.flavor for s in result.ll] == FLAVOR_NAMES
    oldest = find_arch(config["arch"]).oldest_flavor
    for section, flavor in zip(result.ll, FLAVORS):
        if config["arch"] in flavor.processors:
            assert not section.rejected and section.reason == ""
            assert section.text.startswith(
                f"; kemit kernel {result.kernel_name} for {config['arch']} at {flavor.name}\n")
            assert f"define amdgpu_kernel void @{result.kernel_name}(" in section.text
        else:
            assert section.rejected and section.text == ""
            assert section.reason == f"{config['arch']} needs flavor {oldest} or newer (got {flavor.name})"


def test_every_flavor_is_exercised_by_some_config():
    """At least one config emits at every flavor, and at least one is gated at each older flavor."""
    emitted = {name: 0 for name in FLAVOR_NAMES}
    gated = {name: 0 for name in FLAVOR_NAMES}
    for config in CONFIGS:
        result = emit_config(config)
        for section in result.ll:
            (gated if section.rejected else emitted)[section.flavor] += 1
    assert all(emitted.values()) and gated["llvm16"] and gated["llvm19"] and not gated["llvm22"]


def test_flavors_are_answered_in_request_order():
    result = emit("elementwise", "gfx90a", {}, ["llvm22", "llvm16"])
    assert [s.flavor for s in result.ll] == ["llvm22", "llvm16"]
    assert emit("elementwise", "gfx90a", {}, []).ll == []


def test_unknown_family_and_flavor_are_errors_not_refusals():
    with pytest.raises(ValueError) as error:
        emit("nope", "gfx90a", {}, ["llvm19"])
    assert str(error.value) == f"unknown family 'nope' (known: {', '.join(family_names())})"
    with pytest.raises(ValueError) as error:
        emit("elementwise", "gfx90a", {}, ["llvm23"])
    assert str(error.value) == "unknown flavor 'llvm23' (known: llvm16, llvm19, llvm22)"


def test_unknown_arch_is_checked_before_the_spec():
    result = emit("elementwise", "gfx000", {"vec": "x"}, ["llvm19"])
    assert result.rejected and result.reason == REFUSALS[66]


CONFIG1_CANONICAL = """\
; kemit canonical IR 1
kernel @ew_add_f32_v1_b256 {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 b : ptr.global {align=16, noalias, nocapture, readonly}
  param %2 y : ptr.global {align=16, noalias, nocapture, writeonly}
  param %3 n : i32
  %4 = const {value=256} : i32
  %5 = workgroup_id {dim=x} : i32
  %6 = mul %5, %4 {nsw, nuw} : i32
  %7 = workitem_id {dim=x} : i32
  %8 = add %6, %7 {nsw, nuw} : i32
  %9 = num_workgroups {dim=x} : i32
  %10 = mul %9, %4 {nsw, nuw} : i32
  %11 = const {value=0} : i32
  for %12 = %8 to %3 step %10 {
    %13 = ptr_add %0, %12 {element=f32} : ptr.global
    %14 = load %13 {align=4} : f32
    %15 = ptr_add %1, %12 {element=f32} : ptr.global
    %16 = load %15 {align=4} : f32
    %17 = fadd %14, %16 : f32
    %18 = ptr_add %2, %12 {element=f32} : ptr.global
    store %17, %18 {align=4}
    yield
  }
}
"""


def test_config1_canonical_text():
    assert emit_config(CONFIGS[0]).canonical == CONFIG1_CANONICAL


# ---- kernel names and spec parsing ----------------------------------------------------------------
def test_kernel_name_formula():
    spec = elementwise.parse_spec({"op": "fma", "dtype": "bf16", "vec": 8, "block": 512, "waves_per_eu": 3})
    assert elementwise.kernel_name(spec) == "ew_fma_bf16_v8_b512_w3"
    assert elementwise.kernel_name(elementwise.parse_spec({})) == "ew_add_f32_v1_b256"


def test_defaults():
    assert elementwise.parse_spec({}) == {"op": "add", "dtype": "f32", "vec": 1, "block": 256, "waves_per_eu": 0}


def parse_error(raw):
    with pytest.raises(SpecError) as error:
        elementwise.parse_spec(raw)
    return str(error.value)


@pytest.mark.parametrize("raw, message", [
    # the spec's shape first
    ([], "elementwise spec must be a JSON object (got array)"),
    (None, "elementwise spec must be a JSON object (got null)"),
    ("add", "elementwise spec must be a JSON object (got string)"),
    (3, "elementwise spec must be a JSON object (got number)"),
    (True, "elementwise spec must be a JSON object (got boolean)"),
    # unknown fields, sorted, before any type error
    ({"zeta": 1, "alpha": 2, "vec": "x"}, f"unknown field 'alpha' in elementwise spec (known: {KNOWN_FIELDS})"),
    ({"op": 1, "Op": "add"}, f"unknown field 'Op' in elementwise spec (known: {KNOWN_FIELDS})"),
    ({"": 0}, f"unknown field '' in elementwise spec (known: {KNOWN_FIELDS})"),
    # then each field's type, in declaration order (op, dtype, vec, block, waves_per_eu)
    ({"waves_per_eu": "x", "block": "y", "vec": "z", "dtype": 1, "op": 2}, "field 'op' must be a string (got number)"),
    ({"waves_per_eu": "x", "block": "y", "vec": "z", "dtype": 1}, "field 'dtype' must be a string (got number)"),
    ({"waves_per_eu": "x", "block": "y", "vec": "z"}, "field 'vec' must be an integer (got string)"),
    ({"waves_per_eu": "x", "block": None}, "field 'block' must be an integer (got null)"),
    ({"waves_per_eu": [1]}, "field 'waves_per_eu' must be an integer (got array)"),
    ({"block": {"v": 1}}, "field 'block' must be an integer (got object)"),
    ({"vec": True}, "field 'vec' must be an integer (got boolean)"),
    ({"vec": 4.0}, "field 'vec' must be an integer (got a fraction)"),
    ({"op": None}, "field 'op' must be a string (got null)"),
    ({"dtype": ["f16"]}, "field 'dtype' must be a string (got array)"),
    # integers must fit in 32 bits (signed)
    ({"block": 1 << 31}, "field 'block' must fit in 32 bits"),
    ({"block": -(1 << 31) - 1}, "field 'block' must fit in 32 bits"),
    ({"waves_per_eu": (1 << 63) - 1}, "field 'waves_per_eu' must fit in 32 bits"),
])
def test_spec_parse_errors(raw, message):
    assert parse_error(raw) == message


def test_int32_bounds_parse_then_validate():
    low = elementwise.parse_spec({"block": -(1 << 31)})
    high = elementwise.parse_spec({"waves_per_eu": (1 << 31) - 1})
    assert elementwise.validate(low, find_arch("gfx90a")) == \
        "block must be a positive multiple of the wave size 64 on gfx90a (got -2147483648)"
    assert elementwise.validate(high, find_arch("gfx90a")) == "waves_per_eu must be between 0 and 8 (got 2147483647)"


@pytest.mark.parametrize("raw, arch, reason", [
    # validation runs in a fixed order: op, dtype, vec, block (wave multiple, then at most 1024), waves_per_eu
    ({"op": "tanh", "dtype": "f64", "vec": 3, "block": 7, "waves_per_eu": 99}, "gfx90a",
     "op must be one of add, sub, mul, max, min, fma, relu, silu (got 'tanh')"),
    ({"dtype": "f64", "vec": 3, "block": 7, "waves_per_eu": 99}, "gfx90a",
     "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"vec": 16, "block": 7, "waves_per_eu": 99}, "gfx90a", "vec must be one of 1, 2, 4, 8 (got 16)"),
    ({"vec": 0}, "gfx90a", "vec must be one of 1, 2, 4, 8 (got 0)"),
    ({"block": 7, "waves_per_eu": 99}, "gfx90a", "block must be a positive multiple of the wave size 64 on gfx90a (got 7)"),
    ({"block": -64}, "gfx1100", "block must be a positive multiple of the wave size 32 on gfx1100 (got -64)"),
    ({"block": 1056, "waves_per_eu": 99}, "gfx1201", "block must be at most 1024 (got 1056)"),
    ({"waves_per_eu": 99}, "gfx1250", "waves_per_eu must be between 0 and 8 (got 99)"),
    ({"op": "", "dtype": ""}, "gfx90a", "op must be one of add, sub, mul, max, min, fma, relu, silu (got '')"),
    ({"block": 96}, "gfx1100", ""), ({"block": 1024, "waves_per_eu": 8}, "gfx942", ""),
])
def test_validation_order(raw, arch, reason):
    assert elementwise.validate(elementwise.parse_spec(raw), find_arch(arch)) == reason

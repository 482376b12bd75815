"""The kemit_cpp binding: the C++ engine's tables and results equal the Python engine's.
(Whole emissions of both engines are compared through their workers: test_harness.py.)

Runs through ctest (which sets KEMIT_BUILD_DIR); skipped by hand without it, failed when the
variable is set and the module is missing.
"""
import dataclasses
import glob
import json
import os

import pytest

from kemit.families.registry import family_names, find_family
from kemit.llvm.flavors import FLAVORS, flavor_names, resolve_flavor
from kemit.target.arch import ARCHS, find_arch


def as_lists(value):
    """A record's fields with every tuple a list (the binding's pairs are tuples, its lists lists)."""
    if isinstance(value, dict):
        return {key: as_lists(item) for key, item in value.items()}
    return [as_lists(item) for item in value] if isinstance(value, (list, tuple)) else value


def test_flavor_tables_agree(kemit_cpp):
    assert as_lists(kemit_cpp.flavors()) == [as_lists(dataclasses.asdict(f)) for f in FLAVORS]


def test_arch_tables_agree(kemit_cpp):
    assert as_lists(kemit_cpp.archs()) == [as_lists(dataclasses.asdict(a)) for a in ARCHS]


@pytest.mark.parametrize("name", ["llvm16", "llvm19", "llvm22", "llvm23", "llvm30"])
def test_flavor_aliases_agree(kemit_cpp, name):
    flavor, note = resolve_flavor(name)
    assert kemit_cpp.resolve_flavor(name) == (flavor.name, note)


def test_unknown_flavor_is_a_value_error(kemit_cpp):
    with pytest.raises(ValueError, match="unknown flavor 'llvm17'"):
        kemit_cpp.resolve_flavor("llvm17")


def test_emit_checks_and_resolves_flavors_as_kemit_emit_does(kemit_cpp):
    """kemit_cpp.emit takes flavors as kemit.emit does (test_api.py): the same TypeErrors,
    an alias resolved with the CLIs' note as a UserWarning, ValueError for an unknown name."""
    with pytest.raises(TypeError, match=r"flavors must be a list of flavor names such as \['llvm19', 'llvm22'\], "
                                        "not str 'llvm22'"):
        kemit_cpp.emit("elementwise", "gfx942", {}, "llvm22")
    with pytest.raises(TypeError, match="each flavor must be a str such as 'llvm19', not int 22"):
        kemit_cpp.emit("elementwise", "gfx942", {}, [22])
    with pytest.warns(UserWarning, match="note: flavor llvm23 is not in the table; using llvm22, the newest"):
        result = kemit_cpp.emit("elementwise", "gfx942", {"op": "add"}, ["llvm23"])
    assert [s["flavor"] for s in result["ll"]] == ["llvm22"]
    assert result["ll"][0]["text"] == kemit_cpp.emit("elementwise", "gfx942", {"op": "add"}, ("llvm22",))["ll"][0]["text"]
    with pytest.raises(ValueError, match="unknown flavor 'llvm17'"):
        kemit_cpp.emit("elementwise", "gfx942", {}, ["llvm17"])


def test_family_lists_agree(kemit_cpp):
    assert kemit_cpp.family_names() == family_names()


def parity_configs():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "parity", "configs")
    for path in sorted(glob.glob(os.path.join(root, "*.json"))):
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        if document["family"] in family_names():
            for config in document["configs"]:
                yield pytest.param(document["family"], config, id=f"{document['family']}:{config['id']}")


@pytest.mark.parametrize("family,config", list(parity_configs()))
def test_parse_validate_and_name_agree(kemit_cpp, family, config):
    module = find_family(family)
    try:
        parsed = module.parse_spec(config["spec"])
    except ValueError as refusal:
        with pytest.raises(ValueError) as cpp_refusal:
            kemit_cpp.parse_spec(family, config["spec"])
        assert str(cpp_refusal.value) == str(refusal)
        return
    assert kemit_cpp.parse_spec(family, config["spec"]) == parsed
    assert kemit_cpp.kernel_name(family, config["spec"]) == module.kernel_name(parsed)
    try:
        arch = find_arch(config["arch"])
    except ValueError:
        return
    assert kemit_cpp.validate(family, config["spec"], config["arch"]) == module.validate(parsed, arch)

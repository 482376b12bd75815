"""The flavor table: names, aliases of newer LLVMs, and the exact error texts."""
import pytest

from kemit.llvm.flavors import FLAVORS, UnknownFlavor, find_flavor, flavor_names, newest_flavor, resolve_flavor

KNOWN = "llvm16, llvm19, llvm22"


def test_names_and_newest():
    assert flavor_names() == ["llvm16", "llvm19", "llvm22"]
    assert newest_flavor() is FLAVORS[-1] and newest_flavor().name == "llvm22"
    assert [f.major for f in FLAVORS] == sorted(f.major for f in FLAVORS)


@pytest.mark.parametrize("name", ["llvm16", "llvm19", "llvm22"])
def test_known_names_resolve_without_note(name):
    flavor, note = resolve_flavor(name)
    assert (flavor, note) == (find_flavor(name), "")
    assert flavor.name == name and flavor.major == int(name[4:])


@pytest.mark.parametrize("name, major", [("llvm23", 23), ("llvm30", 30), ("llvm100", 100)])
def test_newer_llvm_aliases_the_newest_with_a_note(name, major):
    flavor, note = resolve_flavor(name)
    assert flavor is find_flavor("llvm22")
    assert note == (f"note: flavor {name} is not in the table; using llvm22, the newest "
                    f"(add a row when LLVM {major} is measured)")


@pytest.mark.parametrize("name", ["llvm17", "llvm15", "llvm22.1", "llvm", "LLVM22", "llvm-23", "llvm+23",
                                  " llvm23", "llvm23 ", "gcc13", "", "llvm²³", "llvm٢٣", "16"])
def test_unknown_names_for_resolve(name):
    with pytest.raises(UnknownFlavor) as error:
        resolve_flavor(name)
    assert str(error.value) == f"unknown flavor '{name}' (known: {KNOWN}; a newer llvmN resolves to llvm22)"


@pytest.mark.parametrize("name", ["llvm23", "llvm17", "", "llvm16 "])
def test_find_flavor_takes_canonical_names_only(name):
    with pytest.raises(UnknownFlavor) as error:
        find_flavor(name)
    assert str(error.value) == f"unknown flavor '{name}' (known: {KNOWN})"


def test_unknown_flavor_is_a_value_error():
    # The CLI and the protocol server treat ValueError as a malformed request.
    assert issubclass(UnknownFlavor, ValueError)


# The measured syntax and intrinsic facts of llvm_flavors.md §4/§5/§10, one row per flavor.
@pytest.mark.parametrize("name, facts", [
    ("llvm16", dict(or_disjoint=False, zext_nneg=False, gep_nuw=False, splat_constants=False,
                    captures_attr=False, readfirstlane_mangled=False, vector_bf16_casts=False)),
    ("llvm19", dict(or_disjoint=True, zext_nneg=True, gep_nuw=True, splat_constants=True,
                    captures_attr=False, readfirstlane_mangled=True, vector_bf16_casts=True)),
    ("llvm22", dict(or_disjoint=True, zext_nneg=True, gep_nuw=True, splat_constants=True,
                    captures_attr=True, readfirstlane_mangled=True, vector_bf16_casts=True)),
])
def test_syntax_facts(name, facts):
    flavor = find_flavor(name)
    assert {key: getattr(flavor, key) for key in facts} == facts


def test_processor_lists_are_the_measured_allow_lists():
    """llvm_flavors.md §10.1 allow-lists, restricted to the arch table's processors."""
    assert {f.name: f.processors for f in FLAVORS} == {
        "llvm16": ("gfx90a", "gfx1100"),
        "llvm19": ("gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201"),
        "llvm22": ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"),
    }

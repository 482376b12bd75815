"""The arch table: lookups, error text, and agreement with the flavor table's processor lists."""
import pytest

from kemit.llvm.flavors import FLAVORS, find_flavor
from kemit.target.arch import ARCHS, UnknownArch, arch_names, find_arch

KNOWN = "gfx90a, gfx942, gfx950, gfx1100, gfx1151, gfx1201, gfx1250"


def test_names():
    assert ", ".join(arch_names()) == KNOWN
    assert len(set(arch_names())) == len(ARCHS)


@pytest.mark.parametrize("name", ["gfx000", "gfx940", "GFX90A", "gfx90a ", "", "gfx1200", "sm_90"])
def test_unknown_arch(name):
    with pytest.raises(UnknownArch) as error:
        find_arch(name)
    assert str(error.value) == f"unknown arch '{name}' (known: {KNOWN})"
    assert isinstance(error.value, ValueError)


# llvm_flavors.md §2: default wave size; LDS per workgroup; matrix-core kind.
@pytest.mark.parametrize("name, wave, lds, oldest, mma", [
    ("gfx90a", 64, 65536, "llvm16", "mfma"),
    ("gfx942", 64, 65536, "llvm19", "mfma"),
    ("gfx950", 64, 163840, "llvm22", "mfma"),
    ("gfx1100", 32, 65536, "llvm16", "wmma_gfx11"),
    ("gfx1151", 32, 65536, "llvm19", "wmma_gfx11"),
    ("gfx1201", 32, 65536, "llvm19", "wmma_gfx12"),
    ("gfx1250", 32, 327680, "llvm22", "wmma_gfx1250"),
])
def test_rows(name, wave, lds, oldest, mma):
    arch = find_arch(name)
    assert (arch.name, arch.wave_size, arch.lds_bytes, arch.oldest_flavor, arch.mma) == (name, wave, lds, oldest, mma)


@pytest.mark.parametrize("arch", ARCHS, ids=lambda a: a.name)
def test_oldest_flavor_agrees_with_the_processor_lists(arch):
    """The oldest flavor knows the processor, every older one does not, every newer one does."""
    oldest = find_flavor(arch.oldest_flavor)
    for flavor in FLAVORS:
        knows = arch.name in flavor.processors
        assert knows == (flavor.major >= oldest.major), (arch.name, flavor.name)


def test_every_listed_processor_is_in_the_arch_table():
    for flavor in FLAVORS:
        for name in flavor.processors:
            assert find_arch(name).name == name

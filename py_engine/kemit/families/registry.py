"""The families this engine knows, by name."""
from . import elementwise

FAMILIES = {module.FAMILY: module for module in (elementwise,)}


def family_names():
    return sorted(FAMILIES)


def find_family(name):
    if name not in FAMILIES:
        raise ValueError(f"unknown family '{name}' (known: {', '.join(family_names())})")
    return FAMILIES[name]

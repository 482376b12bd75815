"""The families this engine knows, by name: every module of this package that declares FAMILY, so a
family is added by its own file alone (the shared modules, spec, gemm_core and the `_common`
ones, declare none). Its optional entry points (flavor_gate, build_module, plan_module) are found
on its module (engine.py)."""
import importlib
import os
import pkgutil


def declared_families():
    """{FAMILY: module} of every module beside this one that declares FAMILY, named for it."""
    families = {}
    for info in pkgutil.iter_modules([os.path.dirname(__file__)]):
        module = importlib.import_module(f"{__package__}.{info.name}")
        if not hasattr(module, "FAMILY"):
            continue
        if module.FAMILY != info.name:
            raise ValueError(f"family file {info.name}: FAMILY is '{module.FAMILY}'; a family's file is named for it")
        families[module.FAMILY] = module
    return families


FAMILIES = declared_families()


def family_names():
    return sorted(FAMILIES)


def find_family(name):
    if name not in FAMILIES:
        raise ValueError("unknown family '{name}' (known: {known})".format(name=name, known=", ".join(family_names())))
    return FAMILIES[name]

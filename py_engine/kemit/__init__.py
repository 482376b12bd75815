"""kemit: the Python reference engine.

    import kemit
    result = kemit.emit("elementwise", "gfx942", {"op": "add"}, ["llvm19", "llvm22"])
    result.rejected, result.reason        # a validation refusal: nothing emitted
    result.canonical                      # the canonical IR (docs/ir.md)
    [s.text for s in result.ll]           # one FlavorSection per flavor, in the order asked

The engine stands alone: it imports nothing of the C++ engine or of the harness. Comparing it with
the C++ engine is the harness's work (`kemit_harness`, parity/pyharness/, through both engines'
protocol workers). The command line is `python3 -m kemit.emit` (kemit/emit.py); the protocol
worker is `python3 -m kemit.emit --serve` (kemit/serve.py, docs/protocol.md).
"""
import warnings

from .engine import EmitResult, FlavorSection
from .engine import emit as _emit
from .llvm.flavors import UnknownFlavor, resolve_flavor

__all__ = ["emit", "EmitResult", "FlavorSection", "UnknownFlavor"]


def _flavor_names(flavors):
    """The canonical names of `flavors` (a list or tuple of names), aliases resolved as the CLIs
    resolve them: a newer `llvmN` is the newest flavor, with the CLIs' note as a warning."""
    if isinstance(flavors, str) or not isinstance(flavors, (list, tuple)):
        raise TypeError(f"flavors must be a list of flavor names such as ['llvm19', 'llvm22'], "
                        f"not {type(flavors).__name__} {flavors!r}")
    names = []
    for name in flavors:
        if not isinstance(name, str):
            raise TypeError(f"each flavor must be a str such as 'llvm19', not {type(name).__name__} {name!r}")
        flavor, note = resolve_flavor(name)
        if note:
            warnings.warn(note, stacklevel=3)
        names.append(flavor.name)
    return names


def emit(family, arch, spec, flavors):
    """Emit one config with the Python reference engine.

    family: a family name (`kemit.engine.family_names()`); arch: a processor such as "gfx942";
    spec: the family's spec (a dict; see parity/configs/<family>.json); flavors: a list of flavor
    names ("llvm16", "llvm19", "llvm22"; a newer "llvmN" resolves to the newest with a warning).

    Returns an EmitResult: `rejected` and `reason` for a validation refusal (an unknown processor
    or a bad spec field included); otherwise `kernel_name`, `canonical` and one FlavorSection per
    flavor, each with its `text` or, refused by that flavor's gate, `rejected` and `reason`.

    Raises TypeError for flavors that are not a list of str, UnknownFlavor (a ValueError) for a
    flavor name that is not in the table, ValueError for an unknown family.
    """
    return _emit(family, arch, spec, _flavor_names(flavors))

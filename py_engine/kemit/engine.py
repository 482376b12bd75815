"""The engine's front door: emit one config (family, arch, spec) at the requested flavors.

parse spec -> validate -> build the canonical IR once -> lower once per flavor. A validation
refusal emits nothing; a flavor gate refuses that flavor only.
"""
from dataclasses import dataclass, field

from .families.registry import find_family, family_names  # noqa: F401 (re-exported)
from .families.spec import SpecError
from .ir.printer import print_module
from .llvm.flavors import find_flavor
from .llvm.lower import lower_module, processor_gate
from .target.arch import UnknownArch, find_arch


@dataclass
class FlavorSection:
    flavor: str
    rejected: bool = False
    text: str = ""
    reason: str = ""


@dataclass
class EmitResult:
    rejected: bool = False
    reason: str = ""
    kernel_name: str = ""
    canonical: str = ""
    ll: list = field(default_factory=list)


def emit(family, arch, spec, flavors):
    """Raises ValueError for an unknown family or flavor (a malformed request, not a refusal)."""
    module = find_family(family)
    chosen = [find_flavor(name) for name in flavors]
    try:
        target = find_arch(arch)
        parsed = module.parse_spec(spec)
    except (UnknownArch, SpecError) as refusal:
        return EmitResult(rejected=True, reason=str(refusal))
    reason = module.validate(parsed, target)
    if reason:
        return EmitResult(rejected=True, reason=reason)
    kernels = build_kernels(module, parsed, target)
    result = EmitResult(kernel_name=kernels[0].name, canonical=print_module(kernels))
    for flavor in chosen:
        gate = flavor_gate(module, parsed, target, flavor)
        if gate:
            result.ll.append(FlavorSection(flavor.name, rejected=True, reason=gate))
        else:
            result.ll.append(FlavorSection(flavor.name, text=lower_module(kernels, flavor)))
    return result


def build_kernels(module, spec, target):
    """The kernels of one module, in order: a family that builds more than one kernel (a second
    pass, say) has a `build_module(spec, arch) -> [kernel, ...]` hook; the others build one."""
    hook = getattr(module, "build_module", None)
    return hook(spec, target) if hook else [module.build(spec, target)]


def flavor_gate(module, spec, target, flavor):
    """"" when the flavor can lower the config, else its refusal for that flavor only.

    A family may gate on its own (an instruction the flavor's LLVM lacks) through a
    `flavor_gate(spec, arch, flavor) -> reason or ""` hook, checked before the processor gate.
    """
    hook = getattr(module, "flavor_gate", None)
    return (hook(spec, target, flavor) if hook else "") or processor_gate(target.name, flavor)

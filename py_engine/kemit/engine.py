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
from .plan import print_plan
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
    plan: str = ""
    ll: list = field(default_factory=list)


def emit(family, arch, spec, flavors, buffer_range=None):
    """Raises ValueError for an unknown family or flavor (a malformed request, not a refusal).

    buffer_range (None: the arch's, tables/archs.json) is test-only: the numerics lane lowers it so
    that small shapes plan the chunked launches real sizes need."""
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
    planned = plan_module(module, parsed, target, buffer_range or target.buffer_range)
    if planned.refusal:
        return EmitResult(rejected=True, reason=planned.refusal)
    kernels = planned.kernels
    result = EmitResult(kernel_name=kernels[0].name, canonical=print_module(kernels),
                        plan=print_plan(planned))
    for flavor in chosen:
        gate = flavor_gate(module, parsed, target, flavor)
        if gate:
            result.ll.append(FlavorSection(flavor.name, rejected=True, reason=gate))
        else:
            result.ll.append(FlavorSection(flavor.name, text=lower_module(kernels, flavor)))
    return result


def plan_module(module, spec, target, buffer_range):
    """The module's kernels and launch contract (plan.py), or the refusal of a plan that cannot be
    made: every family states its contract in a `plan_module(spec, arch, buffer_range) -> Planned`
    hook (docs/contracts.md)."""
    hook = getattr(module, "plan_module", None)
    if hook is None:
        raise ValueError(f"family {module.FAMILY} states no launch contract (it lacks plan_module; docs/contracts.md)")
    return hook(spec, target, buffer_range)


def flavor_gate(module, spec, target, flavor):
    """"" when the flavor can lower the config, else its refusal for that flavor only.

    A family may gate on its own (an instruction the flavor's LLVM lacks) through a
    `flavor_gate(spec, arch, flavor) -> reason or ""` hook, checked before the processor gate.
    """
    hook = getattr(module, "flavor_gate", None)
    return (hook(spec, target, flavor) if hook else "") or processor_gate(target.name, flavor)

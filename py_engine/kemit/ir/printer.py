"""The canonical printer: flavor-free text with explicit value ids and sorted attributes.

The text is the contract between the engines' builders: both must print the same bytes before
any lowering happens. Grammar and meaning: docs/ir.md.
"""
from ..tables import OP
from .types import type_text

HEADER = "; kemit canonical IR 1\n"


def print_kernel(kernel):
    return print_module([kernel])


def print_module(kernels):
    """A module of kernels (a family may build more than one): the header once, then each
    kernel's block in order. print_module([k]) == print_kernel(k)."""
    return HEADER + "".join("\n".join(kernel_lines(kernel)) + "\n" for kernel in kernels)


def kernel_lines(kernel):
    lines = [f"kernel @{kernel.name} {{", f"  arch {kernel.arch}"]
    for key in sorted(kernel.attrs):
        lines.append(f"  attr {key} {kernel.attrs[key]}")
    for param in kernel.params:
        lines.append(f"  param %{param.value.id} {param.name} : "
                     f"{type_text(param.value.type)}{attrs_text(param.attrs)}")
    for buffer in kernel.lds:
        lines.append(f"  lds %{buffer.value.id} {buffer.name} : {type_text(buffer.element)}"
                     f"[{buffer.count}]{attrs_text({'align': buffer.align})}")
    print_region(kernel.body, 1, lines)
    lines.append("}")
    return lines


def attrs_text(attrs):
    if not attrs:
        return ""
    items = [key if attrs[key] is True else f"{key}={attrs[key]}" for key in sorted(attrs)]
    return " {" + ", ".join(items) + "}"


def values_text(values):
    return ", ".join(f"%{v.id}" for v in values)


def print_region(region, depth, lines):
    for op in region.ops:
        if op.name == OP.for_loop:
            print_for(op, depth, lines)
        elif op.name == OP.if_then:
            print_if(op, depth, lines)
        else:
            lines.append("  " * depth + op_text(op))


def op_text(op):
    text = f"{values_text(op.results)} = " if op.results else ""
    text += op.name
    if op.operands:
        text += " " + values_text(op.operands)
    text += attrs_text(op.attrs)
    if op.results:
        text += f" : {type_text(op.results[0].type)}"
    return text


def print_for(op, depth, lines):
    pad = "  " * depth
    lo, hi, step, *inits = op.operands
    iv, *iters = op.regions[0].args
    head = f"{values_text(op.results)} = " if op.results else ""
    head += f"for %{iv.id} = %{lo.id} to %{hi.id} step %{step.id}"
    if iters:
        pairs = ", ".join(f"%{a.id} = %{i.id} : {type_text(i.type)}" for a, i in zip(iters, inits))
        head += f" iter({pairs})"
    lines.append(pad + head + " {")
    print_region(op.regions[0], depth + 1, lines)
    lines.append(pad + "}")


def print_if(op, depth, lines):
    pad = "  " * depth
    lines.append(f"{pad}if %{op.operands[0].id} {{")
    print_region(op.regions[0], depth + 1, lines)
    if len(op.regions) == 2:
        lines.append(pad + "} else {")
        print_region(op.regions[1], depth + 1, lines)
    lines.append(pad + "}")

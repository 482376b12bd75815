"""Launch plans (docs/protocol.md, "The launch plan"): how a module's kernels are launched for the
problem shape of its spec, in order.

A launch names its kernel, grid (x, y, z workgroups, or run-time: chosen by the caller from the
run-time sizes, as the family's launch contract says), block (lanes per workgroup), LDS bytes and
one binding per parameter: a pointer reads a buffer, whole or a view of `size` bytes from byte
`offset`; an integer takes the scalar of the same name. Every launch runs after the one before it,
over the same buffers.

A family whose module is launched once per kernel, with the run-time sizes of the caller, needs no
plan code: `single_launches` derives the plan from the built kernels. A family whose plan depends
on the problem shape (conv_fwd_lds_halo's batch chunks) has a `plan_module(spec, arch,
buffer_range) -> Planned` hook, which also builds the kernels the plan launches.
"""
from dataclasses import dataclass, field

from .ir.types import byte_size

BUFFER_RANGE = 1 << 31   # the 32-bit buffer range: a launch's view of a tensor must be smaller
HEADER = "; kemit launch plan 1\n"


@dataclass
class Binding:
    param: str
    kind: str          # "buffer" or "scalar"
    name: str          # the buffer's or the scalar's name
    offset: int = 0    # a view: its first byte in the buffer
    size: int = None   # a view: its bytes (None: the whole buffer)


@dataclass
class Launch:
    kernel: str
    grid: tuple        # (x, y, z) workgroups, or None: run-time
    block: int
    lds: int
    bindings: list = field(default_factory=list)


@dataclass
class Planned:
    """The kernels of a module and their launches, or the refusal of a plan that cannot be made."""
    refusal: str = ""
    kernels: list = field(default_factory=list)
    launches: list = field(default_factory=list)


def range_text(buffer_range):
    """How a refusal names the range: "2^31-byte" for the real one, the bytes for a lowered one."""
    return "2^31-byte" if buffer_range == BUFFER_RANGE else f"{buffer_range}-byte"


def kernel_block(kernel):
    """The block a kernel is built for: the top of its flat_work_group_size (None without one)."""
    sizes = kernel.attrs.get("flat_work_group_size")
    return int(sizes.split(",")[1]) if sizes else None


def kernel_lds_bytes(kernel):
    return sum(byte_size(buffer.element) * buffer.count for buffer in kernel.lds)


def whole_bindings(kernel):
    """Each parameter bound to the whole buffer, or the scalar, of its own name."""
    return [Binding(p.name, "buffer" if p.value.type.kind == "pointer" else "scalar", p.name) for p in kernel.params]


def single_launches(kernels):
    """The generic plan: each kernel launched once, in module order, with a run-time grid."""
    return [Launch(k.name, None, kernel_block(k), kernel_lds_bytes(k), whole_bindings(k)) for k in kernels]


def binding_text(binding):
    text = f"{binding.param}={binding.kind}:{binding.name}"
    return text if binding.size is None else text + f"@{binding.offset}+{binding.size}"


def launch_text(launch):
    grid = "run-time" if launch.grid is None else ",".join(str(g) for g in launch.grid)
    block = "run-time" if launch.block is None else str(launch.block)
    args = "".join(" " + binding_text(b) for b in launch.bindings)
    return f"launch {launch.kernel} grid {grid} block {block} lds {launch.lds} args{args}\n"


def print_plan(launches):
    """The plan's text: the header, then one line per launch, in launch order."""
    return HEADER + "".join(launch_text(launch) for launch in launches)

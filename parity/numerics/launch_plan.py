"""The engine's launch plan as the numerics lane runs it (docs/protocol.md, "The launch plan").

A plan is the `plan` text of an emit answer: a header line, then one line per launch, in order:

    launch <kernel> grid <x>,<y>,<z>|run-time block <lanes>|run-time lds <bytes> args <param>=<binding> ...

with a binding `buffer:<name>` (the whole buffer), `buffer:<name>@<offset>+<bytes>` (a view of
the buffer: `bytes` bytes from byte `offset`) or `scalar:<name>`. A run-time grid or block is the
lane's own (the run-time sizes are the lane's choice); everything else is the engine's.
"""
import re
from dataclasses import dataclass

HEADER = "; kemit launch plan 1"
LINE = re.compile(r"launch (\S+) grid (\S+) block (\S+) lds (\d+) args((?: \S+)*)\Z")
BINDING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(buffer|scalar):([A-Za-z_][A-Za-z0-9_]*)(?:@(\d+)\+(\d+))?\Z")


class PlanError(ValueError):
    """A plan the lane cannot run: malformed, or a view outside its buffer."""


@dataclass(frozen=True)
class Binding:
    param: str
    kind: str
    name: str
    offset: int = 0
    size: int = None  # None: the whole buffer


@dataclass(frozen=True)
class Launch:
    kernel: str
    grid: tuple   # None: run-time
    block: int    # None: run-time
    lds: int
    bindings: tuple


def parse_plan(text):
    """The launches of a plan text, in order; PlanError names the bad line."""
    if not text:
        raise PlanError("the engine's answer has no launch plan (an engine older than plans?)")
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        raise PlanError(f"the launch plan does not start with {HEADER!r} (got {lines[0] if lines else ''!r})")
    launches = [parse_launch(number, line) for number, line in enumerate(lines[1:], start=2)]
    if not launches:
        raise PlanError("the launch plan has no launch")
    return launches


def parse_launch(number, line):
    match = LINE.match(line)
    if not match:
        raise PlanError(f"launch plan line {number} is not a launch: {line!r}")
    kernel, grid, block, lds, args = match.groups()
    bindings = []
    for item in args.split():
        bound = BINDING.match(item)
        if not bound:
            raise PlanError(f"launch plan line {number}: {item!r} is not a binding")
        param, kind, name, offset, size = bound.groups()
        bindings.append(Binding(param, kind, name, int(offset or 0), None if size is None else int(size)))
    return Launch(kernel, None if grid == "run-time" else tuple(int(g) for g in grid.split(",")),
                  None if block == "run-time" else int(block), int(lds), tuple(bindings))


def view(array, binding):
    """The buffer itself, or its view of binding.size bytes from binding.offset (written in place)."""
    if binding.size is None:
        return array
    flat = array.reshape(-1)
    if binding.offset % flat.itemsize or binding.size % flat.itemsize:
        raise PlanError(f"view {binding.param}@{binding.offset}+{binding.size} is not aligned to the "
                        f"{flat.itemsize}-byte elements of buffer {binding.name}")
    if binding.offset + binding.size > flat.nbytes:
        raise PlanError(f"view {binding.param}@{binding.offset}+{binding.size} passes the end of buffer "
                        f"{binding.name} ({flat.nbytes} bytes)")
    first = binding.offset // flat.itemsize
    return flat[first:first + binding.size // flat.itemsize]


def launch_arguments(launch, buffers, scalars):
    """(buffers by param, scalars by param) of one launch; PlanError for a name the case lacks."""
    views, values = {}, {}
    for binding in launch.bindings:
        source = buffers if binding.kind == "buffer" else scalars
        if binding.name not in source:
            raise PlanError(f"launch of {launch.kernel}: the plan binds {binding.param} to {binding.kind} "
                            f"{binding.name}, which the lane's case does not have (has {', '.join(sorted(source))})")
        if binding.kind == "buffer":
            views[binding.param] = view(buffers[binding.name], binding)
        else:
            values[binding.param] = scalars[binding.name]
    return views, values

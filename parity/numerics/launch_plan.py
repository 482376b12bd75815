"""The engine's launch plan as the numerics lane runs it (docs/protocol.md, "The launch plan").

A plan (version 2) is the `plan` text of an emit answer: a header line, the run-time sizes with
their ranges, every buffer's bytes, then one line per launch, in order:

    size <name> <lo>..<hi>
    buffer <name> <bytes>
    launch <kernel> [chunks <size> by <C> [chunks <size> by <C> ]]grid <gx>,<gy>,<gz> block <lanes> lds <bytes> args ...

Bytes, grids, offsets and scalars are expressions over the sizes (and `first`, `count` of a
chunk, `first2`, `count2` of a nested one: every chunk of the second size inside each chunk of the
first); a grid dimension may be a range `lo..hi` the caller chooses from. The lane checks its case
against the contract (every size in range, every buffer exactly the contract's bytes: a wrong
contract formula fails here, naming the buffer) and runs every launch once per chunk, choosing a
ranged grid dimension from its case's grid (clamped into the range).
"""
import functools
import re
from dataclasses import dataclass

HEADER = "; kemit launch plan 2"
SIZE = re.compile(r"size ([A-Za-z_][A-Za-z0-9_]*) (\d+)\.\.(\d+)\Z")
BUFFER = re.compile(r"buffer ([A-Za-z_][A-Za-z0-9_]*) (\S+)\Z")
LINE = re.compile(r"launch (\S+) (?:chunks ([A-Za-z_][A-Za-z0-9_]*) by (\S+) )?"
                  r"(?:chunks ([A-Za-z_][A-Za-z0-9_]*) by (\S+) )?grid (\S+) block (\d+) lds (\d+) args((?: \S+)*)\Z")
BINDING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(?:buffer:([A-Za-z_][A-Za-z0-9_]*)(?:@(\S+))?|scalar:(\S+))\Z")
TOKEN = re.compile(r"\d+|[A-Za-z_][A-Za-z0-9_]*|[-+*/(),]")
CALLS = ("ceil", "min", "max")
CHUNK_NAMES = (("first", "count"), ("first2", "count2"))  # each chunk level's names, outermost first


class PlanError(ValueError):
    """A plan the lane cannot run: malformed, a case that breaks its contract, or a view outside its buffer."""


# ---- expressions ----------------------------------------------------------------------------
def parse_expr(text):
    """The expression's tree: ("int", v), ("name", n), (op, a, b) for + - * / ceil min max."""
    tokens = TOKEN.findall(text)
    if "".join(tokens) != text:
        raise PlanError(f"{text!r} is not an expression")
    tree, rest = parse_sum(tokens)
    if rest:
        raise PlanError(f"{text!r} is not an expression (stops at {''.join(rest)!r})")
    return tree


def parse_sum(tokens):
    left, tokens = parse_product(tokens)
    while tokens and tokens[0] in "+-":
        op, (right, tokens) = tokens[0], parse_product(tokens[1:])
        left = (op, left, right)
    return left, tokens


def parse_product(tokens):
    left, tokens = parse_atom(tokens)
    while tokens and tokens[0] in "*/":
        op, (right, tokens) = tokens[0], parse_atom(tokens[1:])
        left = (op, left, right)
    return left, tokens


def parse_atom(tokens):
    if not tokens:
        raise PlanError("an expression ends early")
    head, tokens = tokens[0], tokens[1:]
    if head.isdigit():
        return ("int", int(head)), tokens
    if head == "(":
        inner, tokens = parse_sum(tokens)
        return inner, expect(tokens, ")")
    if head in CALLS:
        first, tokens = parse_sum(expect(tokens, "("))
        second, tokens = parse_sum(expect(tokens, ","))
        return (head, first, second), expect(tokens, ")")
    if head[0].isalpha() or head[0] == "_":
        return ("name", head), tokens
    raise PlanError(f"unexpected {head!r} in an expression")


def expect(tokens, token):
    if not tokens or tokens[0] != token:
        raise PlanError(f"an expression lacks {token!r}")
    return tokens[1:]


OPERATIONS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a // b,
              "ceil": lambda a, b: -(-a // b), "min": min, "max": max}


def evaluate(tree, values):
    """The tree's value, in Python integers (the plan's meaning: mathematical integers)."""
    if tree[0] == "int":
        return tree[1]
    if tree[0] == "name":
        if tree[1] not in values:
            raise PlanError(f"the plan names {tree[1]!r}, which is no size here (has {', '.join(sorted(values))})")
        return values[tree[1]]
    return OPERATIONS[tree[0]](evaluate(tree[1], values), evaluate(tree[2], values))


# ---- the plan -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Binding:
    param: str
    kind: str          # "buffer" or "scalar"
    name: str          # the buffer's (a scalar's param for scalars)
    value: tuple = None   # a scalar's expression
    offset: tuple = None  # a view's offset and bytes (None: the whole buffer)
    size: tuple = None


@dataclass(frozen=True)
class Launch:
    kernel: str
    chunks: tuple   # per level, outermost first: (size, expression); () unchunked
    grid: tuple     # three (lo, hi) expression pairs; hi None: fixed
    block: int
    lds: int
    bindings: tuple


@dataclass(frozen=True)
class Plan:
    sizes: tuple     # (name, lo, hi)
    buffers: tuple   # (name, expression)
    launches: tuple


# A section runs its plan once per input set and schedule, and every section of a config has the
# same plan: parsed once (a Plan is immutable; a PlanError is raised again each time).
@functools.lru_cache(maxsize=64)
def parse_plan(text):
    """The plan of a text; PlanError names the bad line."""
    if not text:
        raise PlanError("the engine's answer has no launch plan (an engine older than plans?)")
    lines = text.splitlines()
    if lines[0] != HEADER:
        raise PlanError(f"the launch plan does not start with {HEADER!r} (got {lines[0]!r})")
    sizes, buffers, launches = [], [], []
    for number, line in enumerate(lines[1:], start=2):
        size, buffer = SIZE.match(line), BUFFER.match(line)
        if size:
            sizes.append((size.group(1), int(size.group(2)), int(size.group(3))))
        elif buffer:
            buffers.append((buffer.group(1), parse_expr(buffer.group(2))))
        else:
            launches.append(parse_launch(number, line))
    if not launches:
        raise PlanError("the launch plan has no launch")
    return Plan(tuple(sizes), tuple(buffers), tuple(launches))


def parse_launch(number, line):
    match = LINE.match(line)
    if not match:
        raise PlanError(f"launch plan line {number} is not a size, buffer or launch: {line!r}")
    kernel, chunk_size, chunk_by, inner_size, inner_by, grid, block, lds, args = match.groups()
    if inner_size is not None and inner_size == chunk_size:
        raise PlanError(f"launch plan line {number}: nested chunks of {inner_size} inside chunks of itself")
    dims = top_level_split(grid, ",")
    if len(dims) != 3:
        raise PlanError(f"launch plan line {number}: grid {grid!r} has not three dimensions")
    grid = tuple(tuple(parse_expr(part) for part in dim.split("..")) if ".." in dim else (parse_expr(dim), None)
                 for dim in dims)
    chunks = tuple((size, parse_expr(by)) for size, by in ((chunk_size, chunk_by), (inner_size, inner_by))
                   if size is not None)
    bindings = tuple(parse_binding(number, item) for item in args.split())
    return Launch(kernel, chunks, grid, int(block), int(lds), bindings)


def parse_binding(number, item):
    bound = BINDING.match(item)
    if not bound:
        raise PlanError(f"launch plan line {number}: {item!r} is not a binding")
    param, buffer, view, scalar = bound.groups()
    if scalar is not None:
        return Binding(param, "scalar", param, value=parse_expr(scalar))
    if view is None:
        return Binding(param, "buffer", buffer)
    split = top_level_plus(view)
    if split is None:
        raise PlanError(f"launch plan line {number}: view {item!r} lacks +<bytes>")
    return Binding(param, "buffer", buffer, offset=parse_expr(view[:split]), size=parse_expr(view[split + 1:]))


def top_level_plus(text):
    """Where the `+` between a view's offset and bytes is: the first outside parentheses (a sum
    as either part is printed in parentheses)."""
    places = top_level_places(text, "+")
    return places[0] if places else None


def top_level_places(text, separator):
    """The indices of separator outside parentheses."""
    depth, places = 0, []
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == separator and depth == 0:
            places.append(index)
    return places


def top_level_split(text, separator):
    bounds = [-1] + top_level_places(text, separator) + [len(text)]
    return [text[start + 1:end] for start, end in zip(bounds, bounds[1:])]


# ---- the case against the contract, and the launches it runs --------------------------------
def check_contract(plan, sizes, buffers):
    """PlanError unless every size of the plan is the case's and in its range, and every buffer
    has exactly the contract's bytes for those sizes (a wrong contract formula is caught here)."""
    for name, lo, hi in plan.sizes:
        if name not in sizes:
            raise PlanError(f"the contract's size {name} is not among the case's sizes ({', '.join(sorted(sizes))})")
        if not lo <= sizes[name] <= hi:
            raise PlanError(f"the case's {name} = {sizes[name]} is outside the contract's range {lo}..{hi}")
    for name, bytes_ in plan.buffers:
        if name not in buffers:
            raise PlanError(f"the contract's buffer {name} is not among the case's ({', '.join(sorted(buffers))})")
        want, got = evaluate(bytes_, sizes), buffers[name].nbytes
        if want != got:
            raise PlanError(f"the contract says buffer {name} is {want} bytes for sizes {dict(sorted(sizes.items()))}; "
                            f"the case's is {got} bytes (a wrong contract formula, or a wrong case)")


def chunk_values(launch, sizes):
    """The values of each run of a launch: the sizes, and per chunk its level's `first` and `count`
    (CHUNK_NAMES), every chunk of a nested level inside each of the outer one's (no run when a
    chunked size is 0)."""
    runs = [dict(sizes)]
    for (name, by), (first_name, count_name) in zip(launch.chunks, CHUNK_NAMES):
        length = evaluate(by, sizes)
        if length < 1:
            raise PlanError(f"launch of {launch.kernel}: chunks of {name} by {length} (< 1)")
        runs = [dict(values, **{first_name: first, count_name: min(length, sizes[name] - first)})
                for values in runs for first in range(0, sizes[name], length)]
    return runs


def launch_grid(launch, values, wanted):
    """The grid of one run: fixed dims evaluated, a ranged dim the case's own (wanted) clamped into its range."""
    grid = []
    for axis, (lo, hi) in enumerate(launch.grid):
        low = evaluate(lo, values)
        if hi is None:
            grid.append(low)
            continue
        high = evaluate(hi, values)
        if high < low:
            raise PlanError(f"launch of {launch.kernel}: grid dimension {axis} range {low}..{high} is empty")
        want = wanted[axis] if wanted and axis < len(wanted) else high
        grid.append(max(low, min(high, want)))
    return tuple(grid)


def view(array, binding, values):
    """The buffer itself, or its view of the binding's bytes from its offset (written in place)."""
    if binding.offset is None:
        return array
    offset, size = evaluate(binding.offset, values), evaluate(binding.size, values)
    flat = array.reshape(-1)
    if offset % flat.itemsize or size % flat.itemsize:
        raise PlanError(f"view {binding.param}@{offset}+{size} is not aligned to the "
                        f"{flat.itemsize}-byte elements of buffer {binding.name}")
    if offset < 0 or size < 0 or offset + size > flat.nbytes:
        raise PlanError(f"view {binding.param}@{offset}+{size} passes the end of buffer "
                        f"{binding.name} ({flat.nbytes} bytes)")
    first = offset // flat.itemsize
    return flat[first:first + size // flat.itemsize]


def launch_arguments(launch, buffers, values):
    """(buffers by param, scalars by param) of one run; PlanError for a buffer the case lacks."""
    views, scalars = {}, {}
    for binding in launch.bindings:
        if binding.kind == "scalar":
            scalars[binding.param] = evaluate(binding.value, values)
            continue
        if binding.name not in buffers:
            raise PlanError(f"launch of {launch.kernel}: the plan binds {binding.param} to buffer {binding.name}, "
                            f"which the lane's case does not have (has {', '.join(sorted(buffers))})")
        views[binding.param] = view(buffers[binding.name], binding, values)
    return views, scalars


def runs(plan, sizes, buffers, wanted_grid):
    """Every run of the plan in order: (launch, grid, views, scalars), after check_contract."""
    check_contract(plan, sizes, buffers)
    for launch in plan.launches:
        for values in chunk_values(launch, sizes):
            grid = launch_grid(launch, values, wanted_grid)
            views, scalars = launch_arguments(launch, buffers, values)
            yield launch, grid, views, scalars

"""Launch plans (docs/protocol.md, "The launch plan"; docs/contracts.md): a module's launch
contract. The run-time sizes a caller may pass and their ranges, every buffer's bytes as a
function of the sizes, then the launches in order: kernel, grid (fixed by the sizes, or a range the
caller chooses from), block, LDS bytes, an optional `chunks` (the launch runs once per chunk of a
size), an optional nested `chunks` of a second size inside each of those, and one binding per
parameter: a buffer whole, a view of `size` bytes from byte `offset`, or a scalar's value. Every
launch runs after the one before it, over the same buffers.

Sizes, bytes, offsets, grids and scalars are expressions (Expr) over the sizes and, in a chunked
launch, `first` and `count` (a nested level's: `first2` and `count2`). Both engines build the
same trees and print them with the same rules, so the texts are byte-identical; `evaluate` is the
meaning (mathematical integers).

Every family has a `plan_module(spec, arch, buffer_range) -> Planned` hook that builds the kernels
and states their contract. buffer_range is the arch's (tables/archs.json), lowered only by tests.
"""
from dataclasses import dataclass, field

from .ir.types import byte_size

HEADER = "; kemit launch plan 2\n"
# the largest tensor a chunked size may reach (bytes): past any one device's memory, so the
# contract limits nothing a caller can allocate; the plan tests run the sizes of 2^35 bytes
MAX_TENSOR_BYTES = 1 << 40
I32_MAX = (1 << 31) - 1
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
CHAINS = ("+", "*")  # an operator whose right operand of the same operator needs no parentheses


@dataclass(frozen=True)
class Expr:
    """An integer expression: op "int" (value), "name" (name), a binary operator "+ - * /" (floor
    division) or a call "ceil", "min", "max" over args."""
    op: str
    value: int = 0
    name: str = ""
    args: tuple = ()

    def __add__(self, other):
        return Expr("+", args=(self, expr(other)))

    def __sub__(self, other):
        return Expr("-", args=(self, expr(other)))

    def __mul__(self, other):
        return Expr("*", args=(self, expr(other)))

    def __floordiv__(self, other):
        return Expr("/", args=(self, expr(other)))


def expr(value):
    """An Expr as it is, an int as its constant."""
    return value if isinstance(value, Expr) else Expr("int", value=value)


def name(text):
    return Expr("name", name=text)


def scaled(e, factor):
    """e * factor, or e itself when factor is 1."""
    return e if factor == 1 else e * factor


def ceil_div(a, b):
    return Expr("ceil", args=(expr(a), expr(b)))


def min_of(a, b):
    return Expr("min", args=(expr(a), expr(b)))


def max_of(a, b):
    return Expr("max", args=(expr(a), expr(b)))


def expr_text(e):
    if e.op == "int":
        return str(e.value)
    if e.op == "name":
        return e.name
    if e.op in PRECEDENCE:
        left, right = e.args
        return operand_text(left, e.op, False) + e.op + operand_text(right, e.op, True)
    return e.op + "(" + expr_text(e.args[0]) + "," + expr_text(e.args[1]) + ")"


def operand_text(e, parent, is_right):
    """An operand in parentheses when it binds looser than its operator, or as tight on the right
    (a-(b-c), a/(b*c)) unless both are the same chaining operator (a+b+c, a*b*c)."""
    mine, theirs = PRECEDENCE.get(e.op, 3), PRECEDENCE[parent]
    looser = mine < theirs or (is_right and mine == theirs and not (e.op == parent and parent in CHAINS))
    return "(" + expr_text(e) + ")" if looser else expr_text(e)


def evaluate(e, values):
    """The expression's value (Python ints: mathematical integers) with names from values.
    Python only: the plan tests and the numerics lane evaluate plans; the engines only print them."""
    if e.op == "int":
        return e.value
    if e.op == "name":
        return values[e.name]
    a, b = (evaluate(arg, values) for arg in e.args)
    operations = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
                  "ceil": lambda: -(-a // b), "min": lambda: min(a, b), "max": lambda: max(a, b)}
    return operations[e.op]()


@dataclass
class Size:
    name: str
    lo: int
    hi: int


@dataclass
class Buffer:
    name: str
    bytes: Expr


@dataclass
class Dim:
    """A grid dimension: lo alone (fixed), or lo..hi (the caller chooses)."""
    lo: Expr
    hi: Expr = None


@dataclass
class Binding:
    param: str
    kind: str             # "buffer" or "scalar"
    name: str = ""        # the buffer's name
    value: Expr = None    # a scalar: its value
    offset: Expr = None   # a view: its first byte in the buffer (None: the whole buffer)
    size: Expr = None     # a view: its bytes


@dataclass
class Chunks:
    size: str   # the size the launch walks in chunks
    by: Expr    # the chunk length


@dataclass
class Launch:
    kernel: str
    grid: tuple           # three Dim
    block: int
    lds: int
    bindings: list = field(default_factory=list)
    chunks: Chunks = None
    inner: Chunks = None  # chunks of a second size inside each chunk of the first (first2, count2)


@dataclass
class Planned:
    """The kernels of a module and their contract, or the refusal of a plan that cannot be made."""
    refusal: str = ""
    kernels: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    buffers: list = field(default_factory=list)
    launches: list = field(default_factory=list)


def range_text(buffer_range):
    """How a refusal names the range: "2^31-byte" for a power of two, the bytes for a lowered one."""
    power = buffer_range.bit_length() - 1
    return f"2^{power}-byte" if buffer_range == 1 << power else f"{buffer_range}-byte"


def kernel_block(kernel):
    """The block a kernel is built for: the top of its flat_work_group_size."""
    sizes = kernel.attrs["flat_work_group_size"]
    return int(sizes.split(",")[1])


def kernel_lds_bytes(kernel):
    return sum(byte_size(buffer.element) * buffer.count for buffer in kernel.lds)


def fixed_grid(x, y=1, z=1):
    return (Dim(expr(x)), Dim(expr(y)), Dim(expr(z)))


def chosen_grid(hi):
    """A grid-stride kernel's grid: any count of workgroups in 1..hi along x."""
    return (Dim(expr(1), expr(hi)), Dim(expr(1)), Dim(expr(1)))


def whole(param):
    return Binding(param, "buffer", param)


def view(param, offset, size):
    return Binding(param, "buffer", param, offset=expr(offset), size=expr(size))


def scalar(param, value):
    return Binding(param, "scalar", value=expr(value))


def kernel_launch(kernel, grid, bindings, chunks=None, inner=None):
    """A launch of a built kernel: its block and LDS bytes are the kernel's."""
    return Launch(kernel.name, grid, kernel_block(kernel), kernel_lds_bytes(kernel), bindings, chunks, inner)


def chunk_length(unit_bytes, buffer_range, align=16):
    """The most units (elements, rows, ...) a chunk holds: every view's bytes (unit_bytes: each
    chunked view's bytes per unit) at most half the buffer range, so that a count plus a grid's
    lanes stays an i32, and the chunk a whole number of align bytes in every view (each chunk's
    views keep the params' alignment). 0 when not even one aligned step fits."""
    step = 1
    for unit in unit_bytes:
        need = align // gcd(unit, align)
        step = step * need // gcd(step, need)
    units = (buffer_range // 2) // max(unit_bytes)
    return units - units % step


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    return a * b // gcd(a, b)


def no_chunk_reason(what, unit_bytes, buffer_range):
    return "one {what} ({bytes} bytes) does not fit half the {range} range of 32-bit buffer offsets".format(
        what=what, bytes=unit_bytes, range=range_text(buffer_range))


FIRST, COUNT = Expr("name", name="first"), Expr("name", name="count")
FIRST2, COUNT2 = Expr("name", name="first2"), Expr("name", name="count2")  # a nested chunk's


def batch_view(param, unit_bytes):
    """The chunk's view of a buffer laid out unit by unit: unit_bytes per unit from the chunk's first."""
    return view(param, FIRST * unit_bytes, COUNT * unit_bytes)


def tensor_units(unit_bytes):
    """The top of a chunked size's range: the units of a MAX_TENSOR_BYTES tensor."""
    return MAX_TENSOR_BYTES // unit_bytes


def planned(kernels, sizes, buffer_bytes, launches):
    """A plan whose buffers are listed in order of first binding, each with its bytes from buffer_bytes."""
    order = []
    for launch in launches:
        order.extend(b.name for b in launch.bindings if b.kind == "buffer" and b.name not in order)
    return Planned(kernels=kernels, sizes=sizes, buffers=[Buffer(n, expr(buffer_bytes[n])) for n in order],
                   launches=launches)


def batch_plan(kernels, launched, size, unit_bytes, whole_bytes, buffer_range, max_grid_lanes, what):
    """The contract of a module whose kernels walk the units (elements, rows, ...) of one run-time
    size by grid-stride, each launch in chunks of that size: launched is [(kernel, units per
    workgroup, grid y)] in run order. Each kernel parameter named in unit_bytes is the chunk's
    view (those bytes per unit), one named in whole_bytes the whole buffer (those bytes), the one
    named `size` the chunk's count. The caller picks the grid along x, up to one workgroup per
    units-per-workgroup of the chunk and at most max_grid_lanes lanes (grid_top); `what` names a
    unit in the refusal when not one fits."""
    chunk = chunk_length(list(unit_bytes.values()), buffer_range)
    if chunk == 0:
        return Planned(refusal=no_chunk_reason(what, max(unit_bytes.values()), buffer_range))
    launches = []
    for kernel, per_group, grid_y in launched:
        bindings = [batch_binding(p.name, size, unit_bytes) for p in kernel.params]
        top = grid_top(chunk, per_group, kernel_block(kernel), max_grid_lanes)
        grid = (Dim(expr(1), top), Dim(expr(grid_y)), Dim(expr(1)))
        launches.append(kernel_launch(kernel, grid, bindings, Chunks(size, expr(chunk))))
    buffers = dict(whole_bytes)
    buffers.update({n: name(size) * unit for n, unit in unit_bytes.items()})
    return planned(kernels, [Size(size, 0, tensor_units(max(unit_bytes.values())))], buffers, launches)


def grid_top(chunk, per_group, block, max_grid_lanes):
    """The top of a batch launch's grid x: a workgroup per per_group units of the chunk, capped where
    that many workgroups of `block` lanes would pass the dispatch's max_grid_lanes (the kernel walks
    its units by grid-stride, so fewer workgroups cover them all)."""
    top = COUNT if per_group == 1 else ceil_div(COUNT, per_group)
    most_groups = (chunk + per_group - 1) // per_group
    if most_groups * block <= max_grid_lanes:
        return top
    return min_of(top, max_grid_lanes // block)


def batch_binding(param, size, unit_bytes):
    if param == size:
        return scalar(param, COUNT)
    return batch_view(param, unit_bytes[param]) if param in unit_bytes else whole(param)


def binding_text(binding):
    if binding.kind == "scalar":
        return f"{binding.param}=scalar:{expr_text(binding.value)}"
    text = f"{binding.param}=buffer:{binding.name}"
    return text if binding.offset is None else text + f"@{view_part(binding.offset)}+{view_part(binding.size)}"


def view_part(e):
    """A view's offset or bytes, in parentheses when it is a sum itself, so the `+` between them
    is the only one outside parentheses."""
    return "(" + expr_text(e) + ")" if e.op in ("+", "-") else expr_text(e)


def dim_text(dim):
    return expr_text(dim.lo) if dim.hi is None else f"{expr_text(dim.lo)}..{expr_text(dim.hi)}"


def chunks_text(chunks):
    return "" if chunks is None else f"chunks {chunks.size} by {expr_text(chunks.by)} "


def launch_text(launch):
    chunks = chunks_text(launch.chunks) + chunks_text(launch.inner)
    grid = ",".join(dim_text(d) for d in launch.grid)
    args = "".join(" " + binding_text(b) for b in launch.bindings)
    return f"launch {launch.kernel} {chunks}grid {grid} block {launch.block} lds {launch.lds} args{args}\n"


def print_plan(plan):
    """The plan's text: the header, the sizes, the buffers, then one line per launch, in launch order."""
    sizes = "".join(f"size {s.name} {s.lo}..{s.hi}\n" for s in plan.sizes)
    buffers = "".join(f"buffer {b.name} {expr_text(b.bytes)}\n" for b in plan.buffers)
    return HEADER + sizes + buffers + "".join(launch_text(launch) for launch in plan.launches)

"""Family `scratch_double`: y = a + a over n f32 elements (n at run time), one element a lane.

As small as a family can be: tests/architecture/test_scratch_family.py adds it, with nothing but
its own files, to a copy of the tree and shows both engines serve it."""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar
from ..plan import COUNT, Chunks, Size, batch_view, ceil_div, chunk_length, expr, fixed_grid, kernel_launch, name, \
    planned, scalar as scalar_binding, tensor_units
from .spec import parse_fields

FAMILY = "scratch_double"
FIELDS = (("block", "int", 64),)
MAX_BLOCK = 1024


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return f"scratch_double_b{spec['block']}"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the reason."""
    if spec["block"] > 0 and spec["block"] % arch.wave_size == 0 and spec["block"] <= MAX_BLOCK:
        return ""
    return "block must be a positive multiple of the wave size {wave_size} up to {max_block} (got {block})".format(
        wave_size=arch.wave_size, max_block=MAX_BLOCK, block=spec["block"])


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: n elements of a and y, in chunks; one lane per element."""
    kernel = build(spec, arch)
    bindings = [batch_view("a", 4), batch_view("y", 4), scalar_binding("n", COUNT)]
    grid = fixed_grid(ceil_div(COUNT, spec["block"]))
    launch = kernel_launch(kernel, grid, bindings, Chunks("n", expr(chunk_length([4], buffer_range))))
    return planned([kernel], [Size("n", 0, tensor_units(4))], {"a": name("n") * 4, "y": name("n") * 4}, [launch])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    f32, i32 = scalar("f32"), scalar("i32")
    a = b.param("a", pointer("global"), align=4, noalias=True, nocapture=True, readonly=True)
    y = b.param("y", pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    n = b.param("n", i32)
    gid = b.add(b.mul(b.workgroup_id("x"), b.const_int(i32, spec["block"]), ("nuw", "nsw")), b.workitem_id("x"),
                ("nuw", "nsw"))

    def double():
        x = b.load(f32, b.ptr_add(a, gid, f32), 4)
        b.store(b.fadd(x, x), b.ptr_add(y, gid, f32), 4)

    b.if_then(b.icmp("slt", gid, n), double)
    return b.finish()

"""Hand-built kernels shared by the printer, lowering and real-LLVM tests."""
from kemit.ir.builder import Builder
from kemit.ir.types import parse_type, pointer, scalar

I16, I32, I64, F32, BF16 = (scalar(n) for n in ("i16", "i32", "i64", "f32", "bf16"))
V4F32, V4BF16 = parse_type("<4 x f32>"), parse_type("<4 x bf16>")
GLOBAL = pointer("global")


def build_rules(arch="gfx90a"):
    """Every op but the structured ones, with each flag and cast a flavor spells differently."""
    b = Builder("rules", arch)
    b.attr("waves_per_eu", "4")
    b.attr("flat_work_group_size", "1,128")
    src = b.param("src", GLOBAL, align=16, noalias=True, nocapture=True, readonly=True)
    dst = b.param("dst", GLOBAL, nocapture=True, writeonly=True)
    n = b.param("n", I32)
    tid = b.workitem_id("x")
    groups = b.num_workgroups("y")
    mask = b.bit_or(tid, b.shl(groups, b.const_int(I32, 8), ("nuw",)), ("disjoint",))
    wide = b.zext(mask, I64, nneg=True)
    back = b.sext(b.trunc(wide, I16), I32)
    uniform = b.readfirstlane(back)
    v = b.fpext(b.load(V4BF16, b.ptr_add(src, uniform, BF16), 8), V4F32)
    h = b.fmax(b.fma(v, b.const_float(V4F32, 2.0), b.const_float(V4F32, -0.5)), b.const_float(V4F32, 0.0))
    b.store(b.fptrunc(h, V4BF16), b.ptr_add(dst, uniform, BF16), 8)
    s = b.sitofp(n, F32)
    e = b.exp(b.fmin(s, b.fneg(s)))
    pick = b.select(b.fcmp("olt", e, b.const_float(F32, 1.0)), e, s)
    q = b.urem(b.udiv(b.fptosi(pick, I32), n), b.sub(n, b.mul(tid, n)))
    b.store(b.bit_and(q, b.lshr(q, b.workgroup_id("z"))), dst, 4)
    return b.finish()


def build_wide_offset(arch="gfx942"):
    """A row offset past 2^31 elements: ptr_add with an i64 index into global memory."""
    b = Builder("wide", arch)
    x = b.param("x", GLOBAL, align=4)
    n = b.param("n", I32)
    row = b.zext(b.workgroup_id("x"), I64, nneg=True)
    offset = b.add(b.mul(row, b.zext(n, I64, nneg=True), ("nuw", "nsw")),
                   b.zext(b.workitem_id("x"), I64, nneg=True), ("nuw", "nsw"))
    b.store(b.const_float(F32, 1.0), b.ptr_add(x, offset, F32), 4)
    return b.finish()


def build_loop_shapes(arch="gfx1100"):
    """A loop carrying a value through an if/else inside its body, then an if without else."""
    b = Builder("shapes", arch)
    out = b.param("out", GLOBAL)
    n = b.param("n", I32)
    zero, one = b.const_int(I32, 0), b.const_int(I32, 1)

    def body(i, iters):
        odd = b.icmp("ne", b.bit_and(i, one), zero)
        b.if_then_else(odd, lambda: b.store(i, out, 4), lambda: b.barrier())
        return [b.add(iters[0], i, ("nsw",))]

    (total,) = b.for_loop(zero, n, one, [zero], body)
    b.if_then(b.icmp("sgt", total, n), lambda: b.store(total, out, 4))
    return b.finish()


def build_demo():
    """Params, two LDS buffers, a `for` with an iter value, a barrier, an if/else."""
    b = Builder("demo", "gfx942")
    b.attr("waves_per_eu", "2")                       # given unsorted, printed sorted
    b.attr("flat_work_group_size", "1,64")
    x = b.param("x", GLOBAL, align=16, readonly=True, noalias=True, nocapture=True)
    n = b.param("n", I32)
    tile = b.lds("tile", F32, 64, 16)
    b.lds("halves", parse_type("<4 x f16>"), 8, 8)
    tid = b.workitem_id("x")
    zero, one = b.const_int(I32, 0), b.const_int(I32, 1)
    acc0 = b.const_float(F32, 0.0)

    def body(i, iters):
        value = b.load(F32, b.ptr_add(x, i, F32), 4)
        return [b.fadd(iters[0], value)]

    (total,) = b.for_loop(zero, n, one, [acc0], body)
    slot = b.add(tid, one, ("nuw", "nsw"))
    b.store(total, b.ptr_add(tile, slot, F32), 4)
    b.barrier()

    def then():
        b.store(b.load(F32, b.ptr_add(tile, one, F32), 4), x, 4)

    def otherwise():
        b.store(b.const_float(F32, -2.5), x, 4)

    b.if_then_else(b.icmp("eq", tid, zero), then, otherwise)
    return b.finish()

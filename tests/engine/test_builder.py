"""The builder: value ids in creation order, every operand check's exact text, float_bits exactness."""
import pytest

from kemit.ir.builder import BuildError, Builder, float_bits
from kemit.ir.types import parse_type, pointer, scalar

I1, I16, I32, I64 = (scalar(n) for n in ("i1", "i16", "i32", "i64"))
F16, BF16, F32 = (scalar(n) for n in ("f16", "bf16", "f32"))
V4F32, V4F16, V4I1, V2I32 = (parse_type(t) for t in ("<4 x f32>", "<4 x f16>", "<4 x i1>", "<2 x i32>"))
GLOBAL = pointer("global")


def raises(message, action, *args, **kwargs):
    """Run action and require a BuildError with exactly `message`."""
    with pytest.raises(BuildError) as error:
        action(*args, **kwargs)
    assert str(error.value) == message


@pytest.fixture
def b():
    return Builder("k", "gfx942")


# ---- ids -------------------------------------------------------------------------------------
def test_ids_in_creation_order():
    b = Builder("k", "gfx942")
    p = b.param("p", GLOBAL)
    n = b.param("n", I32)
    buf = b.lds("buf", F32, 64, 16)
    c0 = b.const_int(I32, 0)
    c1 = b.const_int(I32, 1)
    seen = {}

    def body(iv, iters):
        seen["iv"], seen["acc"] = iv.id, iters[0].id
        seen["inner"] = b.add(iters[0], iv).id
        return [b.add(iters[0], c1)]

    (result,) = b.for_loop(c0, n, c1, [c0], body)
    tid = b.workitem_id("x")
    assert [p.id, n.id, buf.id, c0.id, c1.id] == [0, 1, 2, 3, 4]
    # The loop's induction variable and iter arguments come before its body, its results after.
    assert seen == {"iv": 5, "acc": 6, "inner": 7}
    assert (result.id, tid.id) == (9, 10)
    assert result.type == I32 and buf.type == pointer("lds")


def test_ids_of_if_regions_follow_program_order(b):
    c = b.icmp("eq", b.const_int(I32, 0), b.const_int(I32, 1))
    ids = []
    b.if_then_else(c, lambda: ids.append(b.workitem_id("x").id), lambda: ids.append(b.workgroup_id("y").id))
    ids.append(b.const_int(I32, 3).id)
    assert c.id == 2 and ids == [3, 4, 5]


def test_a_refused_op_takes_no_id(b):
    one = b.const_int(I32, 1)
    with pytest.raises(BuildError):
        b.add(one, b.const_float(F32, 1.0))
    assert b.const_int(I32, 2).id == 2


# ---- names and the kernel interface -----------------------------------------------------------
@pytest.mark.parametrize("name", ["K", "1k", "k-1", "", "k.x", "kä"])
def test_kernel_name_errors(name):
    raises(f"kernel name '{name}' must match [a-z_][a-z0-9_]*", Builder, name, "gfx942")


@pytest.mark.parametrize("name", ["v0", "v12", "A", "a b", "9x", ""])
def test_param_name_errors(b, name):
    raises(f"name '{name}' must match [a-z_][a-z0-9_]*, not look like v<N>, not be 'entry' or the kernel's name, and be unique", b.param, name, I32)


def test_names_are_unique_across_params_and_lds(b):
    b.param("a", I32)
    b.lds("buf", F32, 4, 4)
    message = "name '{}' must match [a-z_][a-z0-9_]*, not look like v<N>, not be 'entry' or the kernel's name, and be unique"
    raises(message.format("a"), b.lds, "a", F32, 4, 4)
    raises(message.format("buf"), b.lds, "buf", F32, 4, 4)
    raises(message.format("v1"), b.lds, "v1", F32, 4, 4)
    # `v` alone and `v1x` do not look like value names.
    assert b.lds("v", F32, 1, 4).id == 2 and b.lds("v1x", F32, 1, 4).id == 3


def test_params_after_lds_or_ops(b):
    b.param("a", I32)
    b.const_int(I32, 0)
    raises("param 'late' must be declared before LDS buffers and ops", b.param, "late", I32)
    b2 = Builder("k", "gfx942")
    b2.lds("buf", F32, 4, 4)
    raises("param 'p' must be declared before LDS buffers and ops", b2.param, "p", GLOBAL)


@pytest.mark.parametrize("kwargs", [{"align": 4}, {"noalias": True}, {"nocapture": True},
                                    {"readonly": True}, {"writeonly": True}])
def test_param_flags_need_a_pointer(b, kwargs):
    raises("param 'n': align and memory flags need a pointer (got i32)", b.param, "n", I32, **kwargs)


def test_param_attrs_recorded(b):
    b.param("p", GLOBAL, align=16, noalias=True, readonly=True)
    b.param("q", pointer("lds"))
    kernel = b.finish()
    assert [(p.name, p.attrs) for p in kernel.params] == [
        ("p", {"noalias": True, "readonly": True, "align": 16}), ("q", {})]


@pytest.mark.parametrize("element, count", [(GLOBAL, 4), (F32, 0), (I32, -1)])
def test_lds_errors(b, element, count):
    raises("LDS buffer 'buf' needs a scalar or vector element and a count >= 1", b.lds, "buf", element, count, 4)


@pytest.mark.parametrize("key, value", [("Key", "1"), ("k", "1 2"), ("k", "a=b"), ("k", ""), ("k", "\"x\"")])
def test_attr_errors(b, key, value):
    raises(f"kernel attribute {key}={value} has characters outside the canonical set", b.attr, key, value)


def test_finish_inside_a_region(b):
    c = b.icmp("eq", b.const_int(I32, 0), b.const_int(I32, 0))
    raises("finish() inside an open region", b.if_then, c, b.finish)


# ---- constants --------------------------------------------------------------------------------
def test_const_int_ranges(b):
    assert b.const_int(I16, -32768) and b.const_int(I16, 65535) and b.const_int(I1, -1)
    assert b.const_int(I64, (1 << 64) - 1) and b.const_int(V2I32, -(1 << 31))
    raises("constant 65536 does not fit i16", b.const_int, I16, 65536)
    raises("constant -32769 does not fit i16", b.const_int, I16, -32769)
    raises("constant 2 does not fit i1", b.const_int, I1, 2)
    raises("constant 4294967296 does not fit <2 x i32>", b.const_int, V2I32, 1 << 32)
    raises("const_int needs an integer type (got f32)", b.const_int, F32, 1)
    raises("const_int needs an integer type (got ptr.global)", b.const_int, GLOBAL, 1)


def test_const_float_attrs(b):
    b.const_float(F32, 1.0)
    b.const_float(F16, -2.5)
    b.const_float(BF16, 0.0)
    b.const_float(V4F16, 0.5)
    assert [op.attrs["value"] for op in b.finish().body.ops] == ["0x3F800000", "0xC100", "0x0000", "0x3800"]


def test_const_float_errors(b):
    raises("const_float needs a float type (got i32)", b.const_float, I32, 1.0)
    raises("const_float needs a float type (got ptr.global)", b.const_float, GLOBAL, 1.0)
    raises("constant 0.1 is not exact in f32", b.const_float, V4F32, 0.1)


@pytest.mark.parametrize("name, value, bits", [
    ("f32", 1.0, 0x3F800000), ("f32", -2.5, 0xC0200000), ("f32", 0.0, 0), ("f32", -0.0, 0x80000000),
    ("f32", 2.0 ** -149, 1), ("f32", float("inf"), 0x7F800000), ("f32", 3.4028234663852886e38, 0x7F7FFFFF),
    ("f16", 1.0, 0x3C00), ("f16", -2.5, 0xC100), ("f16", 0.0, 0), ("f16", -0.0, 0x8000),
    ("f16", 65504.0, 0x7BFF), ("f16", 2.0 ** -14, 0x0400), ("f16", 0.5, 0x3800), ("f16", 1.0009765625, 0x3C01),
    ("bf16", 1.0, 0x3F80), ("bf16", -2.5, 0xC020), ("bf16", -0.0, 0x8000), ("bf16", 65536.0, 0x4780),
    ("bf16", float("-inf"), 0xFF80), ("bf16", 1.0078125, 0x3F81),
])
def test_float_bits_exact(name, value, bits):
    assert float_bits(scalar(name), value) == bits


@pytest.mark.parametrize("name, value, message", [
    ("f32", 0.1, "constant 0.1 is not exact in f32"),
    ("f16", 0.1, "constant 0.1 is not exact in f16"),
    ("bf16", 0.1, "constant 0.1 is not exact in bf16"),
    ("f32", 1e-40, "constant 1e-40 is not exact in f32"),
    ("f32", float("nan"), "constant nan is not exact in f32"),
    ("f16", 65536.0, "constant 65536.0 is not exact in f16"),
    ("f16", 65520.0, "constant 65520.0 is not exact in f16"),
    ("f16", 1.00048828125, "constant 1.00048828125 is not exact in f16"),
    ("f16", float("inf"), "constant inf is not exact in f16"),
    ("bf16", 65504.0, "constant 65504.0 is not exact in bf16"),
    ("bf16", 1.00390625, "constant 1.00390625 is not exact in bf16"),
    # f16 subnormals are refused too (no family needs them; the C++ engine mirrors the rule).
    ("f16", 2.0 ** -24, "constant 5.960464477539063e-08 is not exact in f16"),
])
def test_float_bits_refused(name, value, message):
    raises(message, float_bits, scalar(name), value)


def test_float_bits_out_of_f32_range_is_refused():
    raises("constant 1e+40 is not exact in f32", float_bits, F32, 1e40)


# ---- special registers ------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["workitem_id", "workgroup_id", "num_workgroups"])
def test_dimension_errors(b, method):
    raises("dimension must be one of x, y, z (got w)", getattr(b, method), "w")
    raises("dimension must be one of x, y, z (got X)", getattr(b, method), "X")
    assert getattr(b, method)("z").type == I32


# ---- arithmetic ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["add", "sub", "mul", "udiv", "urem", "shl", "lshr", "bit_and", "bit_or"])
def test_int_binary_operand_errors(b, name):
    x, y = b.const_int(I32, 1), b.const_int(I64, 1)
    f = b.const_float(F32, 1.0)
    raises(f"{name} operands must be integer values of one type (got i32, i64)", getattr(b, name), x, y)
    raises(f"{name} operands must be integer values of one type (got f32, f32)", getattr(b, name), f, f)
    assert getattr(b, name)(x, x).type == I32


@pytest.mark.parametrize("name, flag", [("add", "disjoint"), ("sub", "exact"), ("mul", "disjoint"),
                                        ("shl", "disjoint"), ("bit_or", "nsw"), ("bit_or", "nuw")])
def test_int_flag_errors(b, name, flag):
    x = b.const_int(I32, 1)
    raises(f"{name} does not take flag '{flag}'", getattr(b, name), x, x, (flag,))


def test_int_flags_recorded(b):
    x = b.const_int(I32, 1)
    b.add(x, x, ("nuw", "nsw"))
    b.bit_or(x, x, ("disjoint",))
    b.shl(x, x, ("nsw",))
    assert [op.attrs for op in b.finish().body.ops[1:]] == [{"nuw": True, "nsw": True}, {"disjoint": True},
                                                             {"nsw": True}]


@pytest.mark.parametrize("name, arity", [("fadd", 2), ("fsub", 2), ("fmul", 2), ("fdiv", 2), ("fmax", 2),
                                         ("fmin", 2), ("fma", 3), ("fneg", 1), ("exp", 1),
                                         ("sqrt", 1)])
def test_float_operand_errors(b, name, arity):
    f, h, i = b.const_float(F32, 1.0), b.const_float(F16, 1.0), b.const_int(I32, 1)
    mixed, got = {1: ([i], "i32"), 2: ([f, h], "f32, f16"), 3: ([f, h, f], "f32, f16, f32")}[arity]
    raises(f"{name} operands must be float values of one type (got {got})", getattr(b, name), *mixed)
    assert getattr(b, name)(*[f] * arity).type == F32


def test_compare_errors(b):
    i, f = b.const_int(I32, 1), b.const_float(F32, 1.0)
    raises("icmp operands must be integer values of one type (got f32, f32)", b.icmp, "eq", f, f)
    raises("fcmp operands must be float values of one type (got i32, i32)", b.fcmp, "oeq", i, i)
    raises("icmp predicate must be one of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge (got olt)",
           b.icmp, "olt", i, i)
    raises("fcmp predicate must be one of oeq, one, olt, ole, ogt, oge (got ult)", b.fcmp, "ult", f, f)
    v = b.const_float(V4F32, 1.0)
    assert b.fcmp("olt", v, v).type == V4I1 and b.icmp("ult", i, i).type == I1


def test_select_checks(b):
    c, v = b.const_int(I1, 1), b.const_int(V4I1, 1)
    i, f = b.const_int(I32, 1), b.const_float(F32, 1.0)
    vf, vh = b.const_float(V4F32, 1.0), b.const_float(V4F16, 1.0)
    raises("select needs an i1 condition per lane and equal arms (got i1, i32, f32)", b.select, c, i, f)
    raises("select needs an i1 condition per lane and equal arms (got i32, i32, i32)", b.select, i, i, i)
    raises("select needs an i1 condition per lane and equal arms (got <4 x i1>, f32, f32)", b.select, v, f, f)
    raises("select needs an i1 condition per lane and equal arms (got <4 x i1>, <4 x f32>, <4 x f16>)",
           b.select, v, vf, vh)
    assert b.select(v, vf, vf).type == V4F32
    assert b.select(c, vf, vf).type == V4F32  # one condition for every lane


# ---- casts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, source, target", [
    ("zext", "i32", "i16"), ("zext", "i32", "i32"), ("zext", "f16", "f32"), ("sext", "i64", "i32"),
    ("trunc", "i16", "i32"), ("trunc", "i32", "i32"), ("fpext", "bf16", "f16"), ("fpext", "f32", "f16"),
    ("fpext", "i16", "f32"), ("fptrunc", "f16", "f32"), ("fptrunc", "f16", "bf16"),
    ("sitofp", "f32", "f32"), ("sitofp", "i32", "i32"), ("fptosi", "i32", "i32"),
    ("fpext", "<4 x f16>", "f32"), ("fpext", "<4 x f16>", "<2 x f32>"), ("zext", "i16", "<2 x i32>"),
])
def test_cast_errors(b, name, source, target):
    t = parse_type(source)
    v = b.const_float(t, 1.0) if t.name.startswith(("f", "bf")) else b.const_int(t, 1)
    raises(f"{name} cannot convert {source} to {target}", getattr(b, name), v, parse_type(target))


@pytest.mark.parametrize("name, source, target", [
    ("zext", "i1", "i32"), ("sext", "i16", "i64"), ("trunc", "i64", "i1"), ("fpext", "bf16", "f32"),
    ("fpext", "<4 x f16>", "<4 x f32>"), ("fptrunc", "f32", "bf16"), ("sitofp", "i64", "f16"),
    ("fptosi", "bf16", "i64")])
def test_cast_accepted(b, name, source, target):
    t = parse_type(source)
    v = b.const_float(t, 1.0) if t.name.startswith(("f", "bf")) else b.const_int(t, 1)
    assert getattr(b, name)(v, parse_type(target)).type == parse_type(target)


def test_zext_nneg_flag(b):
    v = b.const_int(I32, 1)
    b.zext(v, I64, nneg=True)
    b.zext(v, I64)
    assert [op.attrs for op in b.finish().body.ops[1:]] == [{"nneg": True}, {}]


# ---- memory -----------------------------------------------------------------------------------
def test_ptr_add_errors(b):
    p, lds = b.param("p", GLOBAL), b.param("t", pointer("lds"))
    i, h = b.const_int(I32, 1), b.const_int(I64, 1)
    message = "ptr_add needs a pointer, an i32 index (or an i64 one into global or constant memory) and a " \
              "non-pointer element (got {})"
    raises(message.format("i32, i32, f32"), b.ptr_add, i, i, F32)
    raises(message.format("ptr.lds, i64, f32"), b.ptr_add, lds, h, F32)
    raises(message.format("ptr.global, i16, f32"), b.ptr_add, p, b.const_int(I16, 1), F32)
    raises(message.format("ptr.global, i32, ptr.lds"), b.ptr_add, p, i, pointer("lds"))
    q = b.ptr_add(p, i, V4F16)
    assert q.type == GLOBAL and b.finish().body.ops[-1].attrs == {"element": "<4 x f16>"}


def test_ptr_add_wide_index(b):
    """A 64-bit row offset into global memory: the index keeps its i64 type."""
    p = b.param("p", GLOBAL)
    q = b.ptr_add(p, b.const_int(I64, 1 << 33), F32)
    assert q.type == GLOBAL and b.finish().body.ops[-1].operands[1].type == I64


def test_load_store_errors(b):
    p, i = b.param("p", GLOBAL), b.const_int(I32, 1)
    f = b.const_float(F32, 1.0)
    raises("load needs a pointer operand and a non-pointer value type", b.load, F32, i, 4)
    raises("load needs a pointer operand and a non-pointer value type", b.load, GLOBAL, p, 4)
    raises("store needs a pointer operand and a non-pointer value type", b.store, f, i, 4)
    raises("store needs a pointer operand and a non-pointer value type", b.store, p, p, 8)
    raises("load align must be a power of two up to 4 (got 8)", b.load, F32, p, 8)
    raises("load align must be a power of two up to 4 (got 0)", b.load, F32, p, 0)
    raises("load align must be a power of two up to 16 (got 3)", b.load, V4F32, p, 3)
    raises("load align must be a power of two up to 8 (got 16)", b.load, V4F16, p, 16)
    raises("store align must be a power of two up to 2 (got 4)", b.store, b.const_float(BF16, 1.0), p, 4)
    raises("store align must be a power of two up to 4 (got -4)", b.store, f, p, -4)
    assert b.load(V4F32, p, 16).type == V4F32 and b.store(f, p, 4) is None


def test_readfirstlane_needs_i32(b):
    raises("readfirstlane needs an i32 (got f32)", b.readfirstlane, b.const_float(F32, 1.0))
    raises("readfirstlane needs an i32 (got i64)", b.readfirstlane, b.const_int(I64, 1))
    raises("readfirstlane needs an i32 (got <2 x i32>)", b.readfirstlane, b.const_int(V2I32, 1))


# ---- control flow -----------------------------------------------------------------------------
def test_for_loop_bound_errors(b):
    i, h = b.const_int(I32, 0), b.const_int(I64, 0)
    for lo, hi, step in ((h, i, i), (i, h, i), (i, i, h)):
        raises("for_loop bounds and step must be i32", b.for_loop, lo, hi, step, [], lambda iv, it: [])


def test_for_loop_yield_mismatch(b):
    i, f = b.const_int(I32, 0), b.const_float(F32, 0.0)
    raises("for_loop body must yield 1 values of the init types", b.for_loop, i, i, i, [f], lambda iv, it: [iv])
    b2 = Builder("k", "gfx942")
    i, f = b2.const_int(I32, 0), b2.const_float(F32, 0.0)
    raises("for_loop body must yield 2 values of the init types", b2.for_loop, i, i, i, [f, i],
           lambda iv, it: [it[0]])
    b3 = Builder("k", "gfx942")
    i = b3.const_int(I32, 0)
    raises("for_loop body must yield 0 values of the init types", b3.for_loop, i, i, i, [], lambda iv, it: [iv])


def test_if_condition_errors(b):
    i = b.const_int(I32, 1)
    raises("if needs an i1 condition (got i32)", b.if_then, i, lambda: None)
    v = b.const_int(V4I1, 1)
    raises("if needs an i1 condition (got <4 x i1>)", b.if_then_else, v, lambda: None, lambda: None)


# ---- IR that no LLVM parses is refused by the builder --------------------------------------
# Each case was fed to the real LLVM 16, 19 and 22 (tests/support/llvm_c.py): all three refuse it.
def test_param_align_must_be_a_power_of_two(b):
    raises("param 'p': align must be a power of two (got 3)", b.param, "p", GLOBAL, align=3)


@pytest.mark.parametrize("align", [0, 3])
def test_lds_align_must_be_a_power_of_two(b, align):
    raises(f"LDS buffer 'buf': align must be a power of two (got {align})", b.lds, "buf", F32, 4, align)


def test_param_named_entry_is_refused(b):
    with pytest.raises(BuildError):
        b.param("entry", I32)


def test_lds_named_like_the_kernel_is_refused(b):
    with pytest.raises(BuildError):
        b.lds("k", F32, 4, 4)

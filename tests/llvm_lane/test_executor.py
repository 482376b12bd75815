"""The LLVM-IR executor (llvm_lane/executor, the EXEC verb of kemit_llcheckN) on hand-written modules:
divergence and reconvergence, loops with per-lane trip counts, exact f16/bf16 rounding, cross-lane
moves, LDS with a barrier, matrix instructions read through their layout tables (fp8 in each
processor's variant), and the refusals (an unknown intrinsic, an out-of-bounds store, a broken nsw
promise) that must never be skipped.
"""
import csv
import os
import re

import numpy as np
import pytest

from repo_paths import NUMERICS, PY_ENGINE, REPO, add_to_sys_path

add_to_sys_path(NUMERICS, PY_ENGINE)  # the executors' client; the flavor table names each flavor's LLVM major
from executor_client import Checker, checker_path  # noqa: E402
from kemit.llvm.flavors import find_flavor, flavor_names  # noqa: E402

FLAVORS = flavor_names()
HEAD = 'target triple = "amdgcn-amd-amdhsa"\n'
TAIL = '\nattributes #0 = {{ "target-cpu"="{arch}" }}\n'


def started(flavor):
    build = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
    c = Checker(checker_path(build, find_flavor(flavor).major))
    yield c
    c.close()


@pytest.fixture(scope="module", params=FLAVORS)
def checker(request):
    yield from started(request.param)


@pytest.fixture(scope="module")
def checker22():
    """gfx1250 is an llvm22 processor: the older LLVMs do not know its intrinsics."""
    yield from started("llvm22")


def run(checker, body, buffers, scalars=None, grid=(1,), block=64, arch="gfx90a"):
    text = HEAD + body + TAIL.format(arch=arch)
    return checker.execute(text, "t.ll", grid, block, buffers, scalars or {})


DIVERGENT = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %r = urem i32 %t, 3
  %c = icmp eq i32 %r, 0
  br i1 %c, label %then, label %else
then:
  %a = mul i32 %t, 10
  br label %join
else:
  %c2 = icmp eq i32 %r, 1
  br i1 %c2, label %one, label %two
one:
  %b1 = add i32 %t, 1000
  br label %inner
two:
  %b2 = sub i32 0, %t
  br label %inner
inner:
  %b = phi i32 [ %b1, %one ], [ %b2, %two ]
  br label %join
join:
  %v = phi i32 [ %a, %then ], [ %b, %inner ]
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


def test_divergent_if_else_reconverges_with_each_lanes_phi(checker):
    out = np.zeros(64, dtype=np.int32)
    ok, error, lanes, _ = run(checker, DIVERGENT, {"out": out})
    assert ok, error
    t = np.arange(64)
    want = np.where(t % 3 == 0, t * 10, np.where(t % 3 == 1, t + 1000, -t))
    assert np.array_equal(out, want)
    assert 0 < lanes < 64 * 30  # the inactive lanes of each side were not counted


LOOP = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = icmp slt i32 0, %t
  br i1 %g, label %body, label %exit
body:
  %i = phi i32 [ 0, %entry ], [ %i.next, %body ]
  %s = phi i32 [ 0, %entry ], [ %s.next, %body ]
  %s.next = add nsw i32 %s, %i
  %i.next = add nsw i32 %i, 1
  %again = icmp slt i32 %i.next, %t
  br i1 %again, label %body, label %exit
exit:
  %sum = phi i32 [ 0, %entry ], [ %s.next, %body ]
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %sum, ptr addrspace(1) %p, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


def test_loop_with_a_trip_count_per_lane(checker):
    out = np.full(48, -1, dtype=np.int32)
    ok, error, _, _ = run(checker, LOOP, {"out": out}, block=48, arch="gfx1100")  # wave32: 2 waves, the last partial
    assert ok, error
    t = np.arange(48)
    assert np.array_equal(out, t * (t - 1) // 2)


ROUNDING = """
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %h, ptr addrspace(1) %b) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %px = getelementptr float, ptr addrspace(1) %x, i32 %t
  %v = load float, ptr addrspace(1) %px, align 4
  %vh = fptrunc float %v to half
  %vb = fptrunc float %v to bfloat
  %ph = getelementptr half, ptr addrspace(1) %h, i32 %t
  store half %vh, ptr addrspace(1) %ph, align 2
  %pb = getelementptr bfloat, ptr addrspace(1) %b, i32 %t
  store bfloat %vb, ptr addrspace(1) %pb, align 2
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


def bf16_rne(values):
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return np.where(np.isnan(values), 0x7FC0 | ((bits >> 16) & 0x8000), rounded).astype(np.uint16)


def test_fptrunc_rounds_to_nearest_even_in_f16_and_bf16(checker):
    rng = np.random.default_rng(7)
    special = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 65520.0, 1e-8, 6e-8, -0.0, np.inf,
                        3.4e38, 2 ** -130], dtype=np.float32)
    x = np.concatenate([special, rng.normal(size=64 - special.size).astype(np.float32) * 100])
    with np.errstate(over="ignore"):
        want_half = x.astype(np.float16)
    h, b = np.zeros(64, dtype=np.float16), np.zeros(64, dtype=np.uint16)
    ok, error, _, _ = run(checker, ROUNDING, {"x": x, "h": h, "b": b})
    assert ok, error
    assert np.array_equal(h.view(np.uint16), want_half.view(np.uint16))
    assert np.array_equal(b, bf16_rne(x))


SQRT = """
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %i = shl i32 %t, 1
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %v = load <2 x float>, ptr addrspace(1) %px, align 8
  %pair = call <2 x float> @llvm.sqrt.v2f32(<2 x float> %v)
  %first = extractelement <2 x float> %v, i64 0
  %single = call float @llvm.sqrt.f32(float %first)
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  store <2 x float> %pair, ptr addrspace(1) %py, align 8
  %pz = getelementptr float, ptr addrspace(1) %y, i32 %t
  %pzz = getelementptr float, ptr addrspace(1) %pz, i32 128
  store float %single, ptr addrspace(1) %pzz, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare <2 x float> @llvm.sqrt.v2f32(<2 x float>)
declare float @llvm.sqrt.f32(float)
"""


def test_sqrt_is_correctly_rounded_per_element_and_nan_below_zero(checker):
    """llvm.sqrt (norm_rows' 1 / sqrt(var + eps)): the f32 square root of every element, NaN for -1."""
    x = np.random.default_rng(11).uniform(0.0, 100.0, 128).astype(np.float32)
    x[:4] = [0.0, 1e-30, 2.0, -1.0]
    y = np.full(192, -7.0, dtype=np.float32)
    ok, error, _, _ = run(checker, SQRT, {"x": x, "y": y})
    assert ok, error
    with np.errstate(invalid="ignore"):
        want = np.sqrt(x)
    assert np.array_equal(y[:128], want, equal_nan=True)
    assert np.array_equal(y[128:], want[0::2], equal_nan=True)


MAX_MIN = """
define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %out) #0 {{
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %px = getelementptr {t}, ptr addrspace(1) %x, i32 %t
  %a = load {t}, ptr addrspace(1) %px, align 2
  %py = getelementptr {t}, ptr addrspace(1) %y, i32 %t
  %b = load {t}, ptr addrspace(1) %py, align 2
  %max = call {t} @llvm.maxnum.{s}({t} %a, {t} %b)
  %min = call {t} @llvm.minnum.{s}({t} %a, {t} %b)
  %i = shl i32 %t, 1
  %p0 = getelementptr {t}, ptr addrspace(1) %out, i32 %i
  store {t} %max, ptr addrspace(1) %p0, align 2
  %p1 = getelementptr {t}, ptr addrspace(1) %p0, i32 1
  store {t} %min, ptr addrspace(1) %p1, align 2
  ret void
}}
declare i32 @llvm.amdgcn.workitem.id.x()
declare {t} @llvm.maxnum.{s}({t}, {t})
declare {t} @llvm.minnum.{s}({t}, {t})
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_maxnum_and_minnum_of_equal_zeros_give_the_second_as_the_interpreter_does(checker, dtype):
    """maxnum / minnum: a NaN gives the other operand; of +0 and -0 (equal) the second, as the
    interpreter's fmax / fmin: LLVM leaves that choice open, a fixed one keeps each output's bytes
    the same from one build of the executor to the next."""
    zeros = [(0.0, -0.0), (-0.0, 0.0), (0.0, 0.0), (-0.0, -0.0), (np.nan, -0.0), (-0.0, np.nan), (1.0, -2.0)]
    x = np.array([a for a, _ in zeros] * 9 + [0.0], dtype=dtype)
    y = np.array([b for _, b in zeros] * 9 + [0.0], dtype=dtype)
    out = np.full(128, 7.0, dtype=dtype)
    name = {np.float32: ("float", "f32"), np.float16: ("half", "f16")}[dtype]
    ok, error, _, _ = run(checker, MAX_MIN.format(t=name[0], s=name[1]), {"x": x, "y": y, "out": out})
    assert ok, error
    pick = lambda a, b, wins: b if a != a else a if b != b else (a if wins(a, b) else b)  # noqa: E731
    want = np.array([[pick(a, b, lambda u, v: u > v), pick(a, b, lambda u, v: u < v)] for a, b in zip(x, y)],
                    dtype=dtype).ravel()
    bits = np.uint32 if dtype == np.float32 else np.uint16
    assert np.array_equal(out.view(bits), want.view(bits))


CROSS_LANE = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %next = add i32 %t, 1
  %addr = shl i32 %next, 2
  %perm = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %t)
  %quad = call i32 @llvm.amdgcn.update.dpp.i32(i32 -1, i32 %t, i32 177, i32 15, i32 15, i1 false)
  %ror = call i32 @llvm.amdgcn.update.dpp.i32(i32 -1, i32 %t, i32 292, i32 5, i32 15, i1 false)
  %base = mul i32 %t, 3
  %p0 = getelementptr i32, ptr addrspace(1) %out, i32 %base
  store i32 %perm, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr i32, ptr addrspace(1) %p0, i32 1
  store i32 %quad, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr i32, ptr addrspace(1) %p0, i32 2
  store i32 %ror, ptr addrspace(1) %p2, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
"""


def test_bpermute_and_dpp_quad_perm_row_ror_and_row_mask(checker):
    out = np.zeros(64 * 3, dtype=np.int32)
    ok, error, _, _ = run(checker, CROSS_LANE, {"out": out})
    assert ok, error
    t = np.arange(64)
    out = out.reshape(64, 3)
    assert np.array_equal(out[:, 0], (t + 1) % 64)
    assert np.array_equal(out[:, 1], t ^ 1)                        # quad_perm [1,0,3,2]
    rows_on = np.isin(t // 16, [0, 2])                             # row_mask 0b0101
    assert np.array_equal(out[:, 2], np.where(rows_on, (t & ~15) | ((t - 4) & 15), -1))  # row_ror 4 (p - 4), else old


def test_bpermute_from_a_lane_that_is_not_active_is_refused_naming_the_lane(checker):
    out = np.zeros(64 * 3, dtype=np.int32)
    ok, error, _, _ = run(checker, CROSS_LANE, {"out": out}, block=40)  # lanes 40-63 of the wave do not exist
    assert not ok
    assert "reads lane 40, which is inactive (lane 39 of wave 0," in error, error


LDS = """
@tile = internal addrspace(3) global [128 x i32] poison, align 4
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr [128 x i32], ptr addrspace(3) @tile, i32 0, i32 %t
  %v = mul i32 %t, 7
  store i32 %v, ptr addrspace(3) %p, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %r = sub i32 127, %t
  %q = getelementptr [128 x i32], ptr addrspace(3) @tile, i32 0, i32 %r
  %w = load i32, ptr addrspace(3) %q, align 4
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %gi = mul i32 %g, 128
  %i = add i32 %gi, %t
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %w, ptr addrspace(1) %o, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
"""


def test_lds_shared_by_the_waves_of_a_workgroup_across_a_barrier(checker):
    out = np.zeros(256, dtype=np.int32)
    ok, error, _, _ = run(checker, LDS, {"out": out}, grid=(2,), block=128)  # two waves, two workgroups
    assert ok, error
    assert np.array_equal(out, np.tile((127 - np.arange(128)) * 7, 2))


TWO_TILES = """
@a_tile = internal addrspace(3) global [64 x i32] poison, align 16
@b_tile = internal addrspace(3) global [64 x i32] poison, align 16
define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %shift) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pb = getelementptr i32, ptr addrspace(3) @b_tile, i32 %t
  store i32 1, ptr addrspace(3) %pb, align 4
  %i = add i32 %t, %shift
  %pa = getelementptr i32, ptr addrspace(3) @a_tile, i32 %i
  %flat = addrspacecast ptr addrspace(3) %pa to ptr
  %back = addrspacecast ptr %flat to ptr addrspace(3)
  store i32 2, ptr addrspace(3) %back, align 4
  %pr = getelementptr i32, ptr addrspace(3) @b_tile, i32 %t
  %v = load i32, ptr addrspace(3) %pr, align 4
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %v, ptr addrspace(1) %o, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


@pytest.mark.parametrize("shift", [0, 1, -1])
def test_each_lds_array_is_bounded_by_itself_not_by_the_next_one(checker, shift):
    """@b_tile's bytes follow @a_tile's: a store one element past @a_tile (through a round trip
    to flat and back, which keeps the array) lands in them on hardware, but it is out of bounds of
    @a_tile in LLVM's terms, and the run fails naming it (as the interpreter does for the canonical
    text); one before it likewise."""
    out = np.zeros(64, dtype=np.int32)
    ok, error, _, _ = run(checker, TWO_TILES, {"out": out}, {"shift": shift})
    if shift == 0:
        assert ok, error
        assert np.array_equal(out, np.ones(64, dtype=np.int32))
        return
    assert not ok
    edge = "256 to 260" if shift == 1 else "-4 to 0"
    assert f"bytes {edge} are out of bounds of LDS array @a_tile (256 bytes)" in error, error
    assert "store i32 2" in error, error


WMMA_1250 = """
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %d) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %i = mul i32 %t, 16
  %pa = getelementptr half, ptr addrspace(1) %a, i32 %i
  %va = load <16 x half>, ptr addrspace(1) %pa, align 32
  %pb = getelementptr half, ptr addrspace(1) %b, i32 %i
  %vb = load <16 x half>, ptr addrspace(1) %pb, align 32
  %r = call <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1 NEG, <16 x half> %va, i1 false, <16 x half> %vb, i16 0, <8 x float> zeroinitializer, i1 false, i1 false)
  %j = mul i32 %t, 8
  %pd = getelementptr float, ptr addrspace(1) %d, i32 %j
  store <8 x float> %r, ptr addrspace(1) %pd, align 32
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x32.f16.v8f32.v16f16(i1, <16 x half>, i1, <16 x half>, i16, <8 x float>, i1, i1)
"""


def layout(name, matrix):
    path = os.path.join(REPO, "llvm_lane", "mma_layouts", f"{name}_{matrix}.csv")
    with open(path, encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[3:]
    return [[tuple(int(x) for x in re.findall(r"\d+", cell)) for cell in row[1:]] for row in rows]


@pytest.mark.parametrize("neg_a", [False, True])
def test_gfx1250_wmma_follows_the_layout_table_and_its_neg_a_flag(checker22, neg_a):
    checker = checker22
    rng = np.random.default_rng(3)
    A, B = rng.integers(-4, 5, (16, 32)).astype(np.float16), rng.integers(-4, 5, (32, 16)).astype(np.float16)
    table = "gfx1250_v_wmma_f32_16x16x32_f16"
    a_regs = np.array([[A[m, k] for m, k in lane] for lane in layout(table, "A")], dtype=np.float16)
    b_regs = np.array([[B[k, n] for k, n in lane] for lane in layout(table, "B")], dtype=np.float16)
    d = np.zeros((32, 8), dtype=np.float32)
    body = WMMA_1250.replace("NEG", "true" if neg_a else "false")
    ok, error, _, _ = run(checker, body, {"a": a_regs, "b": b_regs, "d": d}, block=32, arch="gfx1250")
    assert ok, error
    want = (A.astype(np.float64) @ B.astype(np.float64)) * (-1 if neg_a else 1)
    got = np.zeros((16, 16))
    for lane, cells in enumerate(layout(table, "D")):
        for e, (m, n) in enumerate(cells):
            got[m, n] = d[lane, e]
    assert np.array_equal(got, want)




MMA_TEXT = """
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr OPERAND, ptr addrspace(1) %a, i32 %t
  %va = load OPERAND, ptr addrspace(1) %pa, align 4
  %pb = getelementptr OPERAND, ptr addrspace(1) %b, i32 %t
  %vb = load OPERAND, ptr addrspace(1) %pb, align 4
  %pc = getelementptr ACC, ptr addrspace(1) %c, i32 %t
  %vc = load ACC, ptr addrspace(1) %pc, align 4
  %r = call ACC @NAME(ARGS)
  %pd = getelementptr ACC, ptr addrspace(1) %d, i32 %t
  store ACC %r, ptr addrspace(1) %pd, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare ACC @NAME(TYPES)
"""
def mma_text(name, operand, acc, signed=("true", "true"), clamp="false"):
    """One matrix intrinsic on per-lane operands: d[t] = NAME(a[t], b[t], c[t]) (modifiers off)."""
    if ".wmma." in name:
        args = f"i1 {signed[0]}, {operand} %va, i1 {signed[1]}, {operand} %vb, {acc} %vc, i1 {clamp}"
        types = f"i1, {operand}, i1, {operand}, {acc}, i1"
    else:
        args, types = f"{operand} %va, {operand} %vb, {acc} %vc, i32 0, i32 0, i32 0", f"{operand}, {operand}, {acc}, i32, i32, i32"
    return (MMA_TEXT.replace("OPERAND", operand).replace("ACC", acc).replace("NAME", name)
            .replace("ARGS", args).replace("TYPES", types))


@pytest.mark.parametrize("kind,fmt,arch", [("fp8.fp8", "e4m3_fnuz", "gfx942"), ("bf8.bf8", "e5m2_fnuz", "gfx942"),
                                           ("fp8.fp8", "e4m3_ocp", "gfx950"), ("bf8.bf8", "e5m2_ocp", "gfx950")])
def test_fp8_mfma_reads_every_finite_code_in_the_processors_variant(checker22, kind, fmt, arch):
    """A holds each of the 256 codes once (0 for the non-finite ones) in its first 16 columns and B is the
    identity there, so D = A[:, :16]: the executor's value of every code, 8 bytes to each i64 operand."""
    from references.gemm_epilogue import decode_fp8
    values = decode_fp8(np.arange(256), fmt)
    one = int(np.flatnonzero(values == 1.0)[0])
    codes = np.where(np.isfinite(values), np.arange(256), 0).reshape(16, 16)
    A = np.zeros((16, 32), dtype=np.uint8)
    A[:, :16] = codes
    B = np.zeros((32, 16), dtype=np.uint8)
    B[np.arange(16), np.arange(16)] = one
    table = "cdna3_v_mfma_f32_16x16x32_" + kind.replace(".", "_")
    a_regs = np.array([[A[m, k] for m, k in lane] for lane in layout(table, "A")], dtype=np.uint8)
    b_regs = np.array([[B[k, n] for k, n in lane] for lane in layout(table, "B")], dtype=np.uint8)
    c, d = np.zeros((64, 4), dtype=np.float32), np.zeros((64, 4), dtype=np.float32)
    ok, error, _, _ = run(checker22, mma_text(f"llvm.amdgcn.mfma.f32.16x16x32.{kind}", "i64", "<4 x float>"), {"a": a_regs, "b": b_regs, "c": c, "d": d},
                          arch=arch)
    assert ok, error
    got = np.zeros((16, 16))
    for lane, cells in enumerate(layout(table, "D")):
        for e, (m, n) in enumerate(cells):
            got[m, n] = d[lane, e]
    assert np.array_equal(got, values[codes].astype(np.float32))


# (intrinsic as llvm22 spells it, processor, its layout table, A / B operand type, accumulator type)
INT8_MMA = [("llvm.amdgcn.mfma.i32.32x32x8i8", "gfx90a", "cdna2_v_mfma_i32_32x32x8i8", "i32", "<16 x i32>"),
            ("llvm.amdgcn.mfma.i32.16x16x16i8", "gfx90a", "cdna2_v_mfma_i32_16x16x16i8", "i32", "<4 x i32>"),
            ("llvm.amdgcn.mfma.i32.32x32x16.i8", "gfx942", "cdna3_v_mfma_i32_32x32x16_i8", "i64", "<16 x i32>"),
            ("llvm.amdgcn.mfma.i32.16x16x32.i8", "gfx950", "cdna3_v_mfma_i32_16x16x32_i8", "i64", "<4 x i32>"),
            ("llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32", "gfx1100", "rdna3_v_wmma_i32_16x16x16_iu8", "<4 x i32>",
             "<8 x i32>"),
            ("llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32", "gfx1201", "rdna4_v_wmma_i32_16x16x16_iu8", "<2 x i32>",
             "<8 x i32>")]


def run_int8_mma(checker, name, arch, table, operand, acc, A, B, C, **text_options):
    """D = C + A x B by one integer matrix intrinsic: the registers laid out by AMD's table (bytes of A
    and B packed into the operand words), D read back through the table."""
    wave = 64 if arch.startswith("gfx9") else 32
    a_regs = np.array([[A[m, k] for m, k in lane] for lane in layout(table, "A")]).astype(np.uint8)
    b_regs = np.array([[B[k, n] for k, n in lane] for lane in layout(table, "B")]).astype(np.uint8)
    c_regs = np.array([[C[m, n] for m, n in lane] for lane in layout(table, "C")], dtype=np.int64).astype(np.int32)
    d = np.zeros(c_regs.shape, dtype=np.int32)
    ok, error, _, _ = run(checker, mma_text(name, operand, acc, **text_options),
                          {"a": a_regs, "b": b_regs, "c": c_regs, "d": d}, block=wave, arch=arch)
    got = np.zeros(C.shape, dtype=np.int64)
    for lane, cells in enumerate(layout(table, "D")):
        for e, (m, n) in enumerate(cells):
            got[m, n] = d[lane, e]
    return ok, error, got


def wrap_i32(values):
    return (np.asarray(values, dtype=np.int64) + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("name,arch,table,operand,acc", INT8_MMA, ids=[case[2] for case in INT8_MMA])
def test_int8_mma_is_exact_and_wraps_like_the_hardware(checker22, name, arch, table, operand, acc):
    """Random signed bytes and i32 C, then all -128 (all 127) with C near the top (bottom) of i32: D is
    C + A x B exactly, wrapped to 32 bits, in AMD's layout."""
    m = max(mm for lane in layout(table, "A") for mm, _ in lane) + 1
    k = max(kk for lane in layout(table, "A") for _, kk in lane) + 1
    n = max(nn for lane in layout(table, "B") for _, nn in lane) + 1
    rng = np.random.default_rng(13)
    cases = [(rng.integers(-128, 128, (m, k)), rng.integers(-128, 128, (k, n)), rng.integers(-2**31, 2**31, (m, n))),
             (np.full((m, k), -128), np.full((k, n), -128), np.full((m, n), 2**31 - 1000)),
             (np.full((m, k), 127), np.full((k, n), -128), np.full((m, n), -2**31 + 5))]
    for index, (A, B, C) in enumerate(cases):
        ok, error, got = run_int8_mma(checker22, name, arch, table, operand, acc, A, B, C)
        assert ok, error
        exact = C + A @ B
        assert index == 0 or not np.array_equal(exact, wrap_i32(exact))  # the extreme cases do wrap
        assert np.array_equal(got, wrap_i32(exact)), (table, index)


def test_int8_wmma_reads_bytes_unsigned_where_its_flag_says_so(checker22):
    """The iu8 wmma's a_signed / b_signed flags: 0xff is -1 signed, 255 unsigned."""
    name, arch, table, operand, acc = INT8_MMA[4]
    A, B, C = np.full((16, 16), -1), np.full((16, 16), 1), np.zeros((16, 16), dtype=np.int64)
    ok, error, signed = run_int8_mma(checker22, name, arch, table, operand, acc, A, B, C)
    assert ok, error
    ok, error, unsigned = run_int8_mma(checker22, name, arch, table, operand, acc, A, B, C, signed=("false", "true"))
    assert ok, error
    assert np.all(signed == -16) and np.all(unsigned == 16 * 255)


def test_int8_mma_refusals(checker22):
    """clamp is not modelled; an instruction the processor lacks (CDNA2's i8 mfma on gfx942) has no table."""
    name, arch, table, operand, acc = INT8_MMA[4]
    zeros = np.zeros((16, 16), dtype=np.int64)
    ok, error, _ = run_int8_mma(checker22, name, arch, table, operand, acc, zeros, zeros, zeros, clamp="true")
    assert not ok and "clamp (saturating D) is not modelled" in error, error
    name, _, table, operand, acc = INT8_MMA[1]
    ok, error, _ = run_int8_mma(checker22, name, "gfx942", table, operand, acc, zeros, zeros, zeros)
    assert not ok and "no layout table for llvm.amdgcn.mfma.i32.16x16x16i8 on gfx942" in error, error


# (C, B, D's sign bit) with A all +0: the products 0 x B are -0 for B = -1; summed from -0 they
# stay -0, and D = C + that sum keeps a C of -0 only when every product is -0 (IEEE: -0 + +0 = +0).
SIGNED_ZEROS = [(-0.0, -1.0, 1), (-0.0, 1.0, 0), (0.0, -1.0, 0), (0.0, 1.0, 0)]


@pytest.mark.parametrize("c,b,sign", SIGNED_ZEROS)
def test_mma_keeps_a_negative_zero_as_the_interpreter_does(checker22, c, b, sign):
    """D = C + the products summed in k order from -0 (interp/src/mma.cpp sums the same way): an
    accumulator rescaled to -0 stays -0 under products of -0 (attention's masked keys)."""
    text = mma_text("llvm.amdgcn.mfma.f32.16x16x16f16", "<4 x half>", "<4 x float>")
    d = np.full((64, 4), np.nan, dtype=np.float32)
    ok, error, _, _ = run(checker22, text, {"a": np.zeros((64, 4), dtype=np.float16), "b": np.full((64, 4), b, dtype=np.float16),
                                            "c": np.full((64, 4), c, dtype=np.float32), "d": d})
    assert ok, error
    assert (d == 0).all() and (np.signbit(d) == bool(sign)).all(), d.view(np.uint32)[:2]


def one_op(line):
    """A kernel whose `line` computes %d from the workitem id %t, stored to out."""
    return f"""
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {{
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  {line}
  store i32 %d, ptr addrspace(1) %out, align 4
  ret void
}}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


REFUSED = {
    "an intrinsic it does not implement": ("""
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
  call void @llvm.amdgcn.s.sleep(i32 1)
  ret void
}
declare void @llvm.amdgcn.s.sleep(i32)
""", "unsupported intrinsic llvm.amdgcn.s.sleep"),
    "an out-of-bounds store": ("""
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 1, ptr addrspace(1) %p, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
""", "bytes 160 to 164 are out of bounds of out (160 bytes) (lane 40 of wave 0"),
    "an i64 row offset past 2^32, not cut to 32 bits": ("""
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %w = zext i32 %t to i64
  %o = add nuw nsw i64 %w, 4294967296
  %p = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %o
  store i32 1, ptr addrspace(1) %p, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
""", "bytes 17179869184 to 17179869188 are out of bounds of out (160 bytes) (lane 0 of wave 0"),
    "a broken nsw promise": ("""
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %big = add nsw i32 %t, 2147483600
  store i32 %big, ptr addrspace(1) %out, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
""", "poison: add nsw overflows (operands 48, 2147483600) (lane 48 of wave 0"),
    # The i32 sub and the shifts have lane loops of their own: a broken promise still names its lane.
    "a broken sub nuw promise": (one_op("%d = sub nuw i32 30, %t"),
                                 "poison: sub nuw goes below zero (operands 30, 31) (lane 31 of wave 0"),
    "a broken sub nsw promise": (one_op("%d = sub nsw i32 -2147483600, %t"),
                                 "poison: sub nsw overflows (operands -2147483600, 49) (lane 49 of wave 0"),
    "a shift by the width": (one_op("%d = lshr i32 1, %t"),
                             "poison: shift by the width or more (operands 1, 32) (lane 32 of wave 0"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_it_cannot_run_is_refused_with_the_instruction_named(checker, case):
    body, message = REFUSED[case]
    out = np.zeros(40, dtype=np.int32)
    ok, error, _, _ = run(checker, body, {"out": out})
    assert not ok
    assert message in error, error


# ---- races and schedules (docs/numerics.md, "Races and schedules") ----------------------------

SCHEDULES = ("in-order", "reverse", "random:1", "random:2")
NO_BARRIER = (LDS.replace('  fence syncscope("workgroup") release\n  call void @llvm.amdgcn.s.barrier()\n'
                          '  fence syncscope("workgroup") acquire\n', "")
              .replace("%r = sub i32 127, %t", "%r = and i32 %t, 63"))  # wave 1 reads what wave 0 wrote

STORES = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %i = INDEX
  %o = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %g, ptr addrspace(1) %o, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
"""


def execute(checker, body, out, grid, block, schedule="in-order", races=True):
    text = HEAD + body + TAIL.format(arch="gfx90a")
    return checker.execute(text, "t.ll", grid, block, {"out": out}, {}, "", schedule, races)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_module_with_its_barrier_is_silent_and_the_same_under_every_schedule(checker, schedule):
    out = np.zeros(256, dtype=np.int32)
    ok, error, _, _ = execute(checker, LDS, out, (2,), 128, schedule)
    assert ok, error
    assert np.array_equal(out, np.tile((127 - np.arange(128)) * 7, 2))


def test_a_removed_barrier_is_a_race_on_lds_naming_both_instructions_and_waves(checker):
    ok, error, _, _ = execute(checker, NO_BARRIER, np.zeros(256, dtype=np.int32), (2,), 128)
    assert not ok
    assert error.startswith("race: LDS byte 0: store i32 %v, ptr addrspace(3) %p, align 4 (lane 0 of wave 0, "
                            "workgroup (0,0,0)) writes it and %w = load i32, ptr addrspace(3) %q, align 4 "
                            "(lane 0 of wave 1, workgroup (0,0,0)) reads it in one barrier interval"), error


def test_two_waves_of_one_workgroup_race_on_global_memory_without_the_barrier(checker):
    """NO_BARRIER through a global buffer (addrspace 1 for the tile): the barrier orders global
    memory for the waves of a workgroup as well."""
    body = NO_BARRIER.replace("@tile = internal addrspace(3) global [128 x i32] poison, align 4\n", "").replace(
        "define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {",
        "define amdgpu_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %scratch) #0 {").replace(
        "ptr addrspace(3) @tile", "ptr addrspace(1) %scratch").replace("ptr addrspace(3) %", "ptr addrspace(1) %")
    text = HEAD + body + TAIL.format(arch="gfx90a")
    buffers = {"out": np.zeros(128, dtype=np.int32), "scratch": np.zeros(128, dtype=np.int32)}
    ok, error, _, _ = checker.execute(text, "t.ll", (1,), 128, buffers, {}, "")
    assert not ok
    assert error.startswith("race: scratch byte 0: store i32 %v"), error
    assert "(lane 0 of wave 1, workgroup (0,0,0)) reads it in one barrier interval" in error


def test_two_workgroups_writing_one_global_address_race(checker):
    ok, error, _, _ = execute(checker, STORES.replace("INDEX", "add i32 %t, 0"), np.zeros(64, dtype=np.int32), (2,), 64)
    assert not ok
    assert error.startswith("race: out byte 0: store i32 %g"), error
    assert "(lane 0 of wave 0, workgroup (0,0,0)) writes it and " in error
    assert "(lane 0 of wave 0, workgroup (1,0,0)) writes it in one launch (nothing orders two workgroups)" in error


@pytest.mark.parametrize("races", [True, False])
def test_a_store_through_a_readonly_param_breaks_its_promise_before_any_race(checker, races):
    """The racing stores of two workgroups to a buffer whose parameter promises readonly: the first
    store fails with the promise, with the watch or without. A readonly buffer is not watched for
    races: only because nothing can store there unnoticed."""
    body = STORES.replace("INDEX", "add i32 %t, 0").replace("ptr addrspace(1) %out)", "ptr addrspace(1) noalias readonly %out)")
    out = np.zeros(64, dtype=np.int32)
    ok, error, _, _ = execute(checker, body, out, (2,), 64, "in-order", races)
    assert not ok
    assert "stores to out, whose parameter promises readonly" in error and not error.startswith("race"), error
    assert not out.any()


def test_two_lanes_of_one_store_writing_one_address_race(checker):
    ok, error, _, _ = execute(checker, STORES.replace("INDEX", "and i32 %t, 1"), np.zeros(2, dtype=np.int32), (1,), 64)
    assert not ok
    assert error.startswith("race: out byte 0: lanes 0 and 2 of one store both write it: "), error


BYTE_STORES = """
define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %w = mul i32 %t, 4
  %i = INDEX
  %o = getelementptr i8, ptr addrspace(1) %out, i32 %i
  %v = trunc i32 %g to TYPE
  store TYPE %v, ptr addrspace(1) %o, align ALIGN
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
"""


@pytest.mark.parametrize("index, store, byte", [("add i32 %w, 1", "i8 1", 1), ("add i32 %w, 1", "i16 1", 1),
                                                ("add i32 %w, 2", "i16 2", 2), ("add i32 %w, 3", "i8 1", 3)])
def test_two_workgroups_storing_parts_of_one_word_race_at_its_first_shared_byte(checker, index, store, byte):
    """The watch keeps a mark per two-byte word until an access takes part of one: a race is named at
    the byte byte by byte would name, a misaligned access's too."""
    kind, align = store.split()
    body = BYTE_STORES.replace("INDEX", index).replace("TYPE", kind).replace("ALIGN", align)
    ok, error, _, _ = execute(checker, body, np.zeros(64, dtype=np.int32), (2,), 64)
    assert not ok
    assert error.startswith(f"race: out byte {byte}: store {kind} %v, ptr addrspace(1) %o, align {align} (lane 0 of "
                            "wave 0, workgroup (0,0,0)) writes it and "), error
    assert "(lane 0 of wave 0, workgroup (1,0,0)) writes it in one launch" in error


def test_a_word_split_by_a_byte_store_keeps_what_the_word_store_before_it_wrote(checker):
    """Each workgroup's lanes store an i32, then one byte of it: the second workgroup's i32 races at
    byte 0 with the first's i32, which the word's mark held when the byte store split it."""
    body = STORES.replace("%i = INDEX\n", "").replace("i32 %i", "i32 %t").replace("  ret void", (
        "  %b = getelementptr i8, ptr addrspace(1) %o, i32 1\n  %v = trunc i32 %g to i8\n"
        "  store i8 %v, ptr addrspace(1) %b, align 1\n  ret void"))
    ok, error, _, _ = execute(checker, body, np.zeros(64, dtype=np.int32), (2,), 64)
    assert not ok
    assert error.startswith("race: out byte 0: store i32 %g, ptr addrspace(1) %o, align 4 (lane 0 of wave 0, "
                            "workgroup (0,0,0)) writes it and store i32 %g"), error


def test_two_workgroups_storing_the_two_bytes_of_one_word_do_not_race(checker):
    out = np.zeros(64, dtype=np.int32)
    body = BYTE_STORES.replace("INDEX", "add i32 %w, %g").replace("TYPE", "i8").replace("ALIGN", "1")
    ok, error, _, _ = execute(checker, body, out, (2,), 64)
    assert ok, error
    assert np.array_equal(out.view(np.uint8), np.tile(np.array([0, 1, 0, 0], dtype=np.uint8), 64))


def test_without_the_watch_the_in_order_run_passes_what_the_schedules_expose(checker):
    """Races off: in order, the last workgroup's store lands last and wave 1 reads wave 0's LDS after
    wave 0 wrote it; reverse and some random order change the first and fail the second."""
    def last_store(schedule):
        out = np.zeros(64, dtype=np.int32)
        ok, error, _, _ = execute(checker, STORES.replace("INDEX", "add i32 %t, 0"), out, (3,), 64, schedule, False)
        assert ok, error
        return int(out[0])

    def exchange(schedule):
        out = np.zeros(256, dtype=np.int32)
        ok, error, _, _ = execute(checker, NO_BARRIER, out, (2,), 128, schedule, False)
        assert ok or "that no lane wrote" in error, error
        return list(out) if ok else None

    assert last_store("in-order") == 2 and last_store("reverse") == 0
    assert {last_store(f"random:{seed}") for seed in range(8)} - {2}
    assert exchange("in-order") == list(np.tile((np.arange(128) % 64) * 7, 2))
    assert exchange("reverse") is None
    assert None in [exchange(f"random:{seed}") for seed in range(8)]


STORE_CONSTANT = """
define amdgpu_kernel void @first(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 VALUE, ptr addrspace(1) %p, align 4
  ret void
}
define amdgpu_kernel void @second(ptr addrspace(1) %out) #0 {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  %v = add i32 %t, VALUE
  store i32 %v, ptr addrspace(1) %p, align 4
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""


def test_a_kept_module_is_reused_only_for_the_same_text_and_each_kernel_runs_its_own(checker):
    """EXEC keeps its last modules parsed and decoded: one name with texts that differ in one
    constant, in turn, and both kernels of one text, must each run what was sent."""
    for value in (7, 9, 7, 9, 11, 13, 15, 17, 7):  # the last 7 after more modules than are kept
        text = HEAD + STORE_CONSTANT.replace("VALUE", str(value)) + TAIL.format(arch="gfx90a")
        for kernel, want in (("first", np.full(64, value)), ("second", np.arange(64) + value)):
            out = np.zeros(64, dtype=np.int32)
            ok, error, _, _ = checker.execute(text, "t.ll", (1,), 64, {"out": out}, {}, kernel)
            assert ok, error
            assert (out == want).all(), (value, kernel, out[:4])


# ---- atomics (docs/ir.md, "Atomics") ------------------------------------------------------------

def atomic_module(flavor, **kernel):
    from atomic_kernels import histogram  # noqa: E402  (tests/support: the interpreter's tests run the same kernels)
    from kemit.ir.parser import parse_kernel  # noqa: E402
    from kemit.llvm.lower import lower_kernel  # noqa: E402
    return lower_kernel(parse_kernel(histogram(**kernel)), find_flavor(flavor))


@pytest.fixture(scope="module", params=FLAVORS)
def flavored(request):
    for c in started(request.param):
        yield request.param, c


def histogram_buffers(keys):
    return {"keys": np.array(keys, dtype=np.int32), "counts": np.zeros(8, dtype=np.int32),
            "totals": np.zeros(8, dtype=np.int32), "olds": np.full(len(keys), -1, dtype=np.int32)}


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_atomicrmw_adds_of_every_lane_wave_and_workgroup_count_exactly(flavored, schedule):
    flavor, c = flavored
    rng = np.random.default_rng(5)
    for keys in ([0] * 256, [int(k) for k in rng.integers(0, 6, 256)]):  # one address; keys 6 and 7 empty
        buffers = histogram_buffers(keys)
        ok, error, _, _ = c.execute(atomic_module(flavor), "h.ll", (4,), 64, buffers, {}, "", schedule, True)
        assert ok, error
        expected = np.bincount(np.array(keys), minlength=8)
        assert list(buffers["counts"]) == list(expected) and list(buffers["totals"]) == list(expected)
        for key in range(8):  # each lane got one old value of a serial order
            assert sorted(int(v) for v, k in zip(buffers["olds"], keys) if k == key) == list(range(expected[key]))


def test_a_plain_access_racing_an_atomic_is_a_race_and_atomics_of_one_workgroup_are_not(flavored):
    flavor, c = flavored
    # wave 0 reads (writes) counts[0] after its own atomics; wave 1's atomic then races with it
    for race, start in (("load", "race: counts byte 0: %v22 = load i32, ptr addrspace(1) %counts, align 4 (lane 0 of "
                                 "wave 0, workgroup (0,0,0)) reads it and %v18 = atomicrmw add ptr addrspace(1) %v17, "
                                 "i32 1 syncscope(\"agent\") monotonic, align 4 (lane 0 of wave 1, workgroup (0,0,0)) "
                                 "writes it in one barrier interval"),
                        ("store", "race: counts byte 0: store i32 0, ptr addrspace(1) %counts, align 4 (lane 0 of wave 0, "
                                  "workgroup (0,0,0)) writes it and %v18 = atomicrmw add")):
        ok, error, _, _ = c.execute(atomic_module(flavor, race=race), "h.ll", (1,), 128, histogram_buffers([0] * 128),
                                    {}, "", "in-order", True)
        assert not ok and error.startswith(start), error
    buffers = histogram_buffers([0] * 128)
    ok, error, _, _ = c.execute(atomic_module(flavor, race="load_after_barrier"), "h.ll", (1,), 128, buffers, {}, "",
                                "reverse", True)
    assert ok, error  # the barrier orders the workgroup's atomics before the load
    assert list(buffers["olds"]) == [128] * 128
    ok, error, _, _ = c.execute(atomic_module(flavor, race="load_after_barrier"), "h.ll", (2,), 64,
                                histogram_buffers([0] * 128), {}, "", "in-order", True)
    assert not ok and "in one launch (nothing orders two workgroups)" in error, error


def test_two_workgroups_workgroup_scope_atomics_race_and_agent_scope_ones_do_not(flavored):
    flavor, c = flavored
    ok, error, _, _ = c.execute(atomic_module(flavor, scope="workgroup"), "h.ll", (2,), 64, histogram_buffers([0] * 128),
                                {}, "", "in-order", True)
    assert not ok and error.startswith("race: counts byte 0: ") and error.endswith(
        "in one launch (nothing orders two workgroups), and a syncscope(\"workgroup\") atomic is atomic within its "
        "workgroup only (kernel @histogram)"), error
    ok, error, _, _ = c.execute(atomic_module(flavor, scope="workgroup"), "h.ll", (1,), 128, histogram_buffers([0] * 128),
                                {}, "", "in-order", True)
    assert ok, error


def test_an_atomic_the_executor_does_not_model_is_refused_by_name(flavored):
    flavor, c = flavored
    text = atomic_module(flavor).replace('syncscope("agent") monotonic', 'syncscope("agent") seq_cst', 1)
    ok, error, _, _ = c.execute(text, "h.ll", (1,), 64, histogram_buffers([0] * 64), {}, "", "in-order", True)
    assert not ok and "only a monotonic atomicrmw is supported: %v18 = atomicrmw add" in error, error
    text = atomic_module(flavor).replace("atomicrmw add", "atomicrmw sub", 1)
    ok, error, _, _ = c.execute(text, "h.ll", (1,), 64, histogram_buffers([0] * 64), {}, "", "in-order", True)
    assert not ok and "only an i32 atomicrmw add is supported" in error, error

"""The reference interpreter (interp/, through kemit_cpp.run): lane semantics of docs/ir.md on small
hand-built kernels, and its refusals: every error names the op (its canonical text) and the index."""
import csv
import os
import re

import numpy as np
import pytest

from kemit.ir.builder import Builder
from kemit.ir.printer import print_kernel
from kemit.ir.types import parse_type, pointer, scalar

from repo_paths import REPO
from references import gemm_mma as gemm_reference
from references import reduce_rows as reduce_reference

I32, I64, F32, F16, BF16 = scalar("i32"), scalar("i64"), scalar("f32"), scalar("f16"), scalar("bf16")
GLOBAL = pointer("global")


def lane_kernel(arch, body, params=("out",)):
    """out[tid] = body(b, tid, pointers...) for every lane."""
    b = Builder("t", arch)
    pointers = [b.param(name, GLOBAL) for name in params]
    tid = b.workitem_id("x")
    value = body(b, tid, *pointers[1:])
    b.store(value, b.ptr_add(pointers[0], tid, value.type), 4)
    return print_kernel(b.finish())


def test_lanes_and_grid_stride(kemit_cpp):
    text = lane_kernel("gfx90a", lambda b, tid: b.add(b.mul(b.workgroup_id("x"), b.const_int(I32, 1000)), tid))
    out = np.zeros(96, dtype=np.int32)
    stats = kemit_cpp.run(text, 1, 96, {"out": out})
    assert list(out) == list(range(96))
    assert stats["workgroups"] == 1 and stats["lane_instructions"] > 0


def test_f16_and_bf16_round_to_nearest_even(kemit_cpp):
    b = Builder("t", "gfx90a")
    src, dst16, dstb = b.param("src", GLOBAL), b.param("h", GLOBAL), b.param("bf", GLOBAL)
    tid = b.workitem_id("x")
    x = b.load(F32, b.ptr_add(src, tid, F32), 4)
    b.store(b.fptrunc(x, F16), b.ptr_add(dst16, tid, F16), 2)
    b.store(b.fptrunc(x, BF16), b.ptr_add(dstb, tid, BF16), 2)
    values = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520.0, 1e-8, -0.0, np.inf, 1 + 2 ** -8, 1 + 3 * 2 ** -8,
                       3.4e38, 6e-5] + [0.0] * 54, dtype=np.float32)
    h, bf = np.zeros(64, dtype=np.float16), np.zeros(64, dtype=np.uint16)
    kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"src": values, "h": h, "bf": bf})
    assert np.array_equal(h.view(np.uint16), values.astype(np.float16).view(np.uint16))
    assert list(bf[:10]) == list(reduce_reference.round_to(values, "bf16").view(np.uint32)[:10] >> 16)


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_every_half_pattern_widens_exactly(kemit_cpp, kind):
    """fpext of each of the 65,536 f16 / bf16 patterns to f32: numpy's exact widening (a NaN stays a
    NaN of its sign), so the interpreter's decoding of every pattern is checked."""
    b = Builder("t", "gfx90a")
    src, dst = b.param("src", GLOBAL), b.param("dst", GLOBAL)
    at = b.add(b.mul(b.workgroup_id("x"), b.const_int(I32, 64)), b.workitem_id("x"))
    half = F16 if kind == "f16" else BF16
    b.store(b.fpext(b.load(half, b.ptr_add(src, at, half), 2), F32), b.ptr_add(dst, at, F32), 4)
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    out = np.zeros(1 << 16, dtype=np.float32)
    kemit_cpp.run(print_kernel(b.finish()), 1024, 64, {"src": patterns, "dst": out})
    want = patterns.view(np.float16).astype(np.float32) if kind == "f16" else (patterns.astype(np.uint32) << 16).view(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(out.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.isnan(out[nan]).all() and np.array_equal(np.signbit(out[nan]), np.signbit(want[nan]))


def same_floats(got, want):
    """Bit for bit, except that a NaN need only be a NaN of the same sign."""
    nan = np.isnan(want)
    bits = {2: np.uint16, 4: np.uint32}[want.itemsize]
    return (np.array_equal(got.view(bits)[~nan], want.view(bits)[~nan]) and np.isnan(got[nan]).all()
            and np.array_equal(np.signbit(got[nan]), np.signbit(want[nan])))


def test_rounding_to_halves_over_every_exponent(kemit_cpp):
    """fptrunc of 2^20 f32 patterns drawn over all 2^32 (every exponent, subnormals, infinities,
    NaNs, ties) to f16 and bf16, and f16 sums rounded from their exact double: numpy's rounding."""
    b = Builder("t", "gfx90a")
    src, h, bf = b.param("src", GLOBAL), b.param("h", GLOBAL), b.param("bf", GLOBAL)
    x16, y16, s16 = b.param("x16", GLOBAL), b.param("y16", GLOBAL), b.param("s16", GLOBAL)
    at = b.add(b.mul(b.workgroup_id("x"), b.const_int(I32, 64)), b.workitem_id("x"))
    x = b.load(F32, b.ptr_add(src, at, F32), 4)
    b.store(b.fptrunc(x, F16), b.ptr_add(h, at, F16), 2)
    b.store(b.fptrunc(x, BF16), b.ptr_add(bf, at, BF16), 2)
    total = b.fadd(b.load(F16, b.ptr_add(x16, at, F16), 2), b.load(F16, b.ptr_add(y16, at, F16), 2))
    b.store(total, b.ptr_add(s16, at, F16), 2)
    count = 1 << 20
    rng = np.random.default_rng(7)
    values = rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32)
    values[: 1 << 16] = (values[: 1 << 16] & 0xFFFF0000) | 0x8000  # bf16 ties
    values[1 << 16: 1 << 17] = (values[1 << 16: 1 << 17] & 0xFFFFE000) | 0x1000  # f16 ties
    values = values.view(np.float32)
    halves = rng.integers(0, 1 << 16, (2, count), dtype=np.uint32).astype(np.uint16).view(np.float16)
    out = {"h": np.zeros(count, np.float16), "bf": np.zeros(count, np.uint16), "s16": np.zeros(count, np.float16)}
    with np.errstate(over="ignore", invalid="ignore"):
        kemit_cpp.run(print_kernel(b.finish()), count // 64, 64, dict(out, src=values, x16=halves[0], y16=halves[1]))
        want_sums = (halves[0].astype(np.float64) + halves[1].astype(np.float64)).astype(np.float16)
        assert same_floats(out["h"], values.astype(np.float16))
    finite = ~np.isnan(values)
    want_bf = (reduce_reference.round_to(values[finite], "bf16").view(np.uint32) >> 16).astype(np.uint16)
    assert np.array_equal(out["bf"][finite], want_bf)
    assert (out["bf"][~finite] & 0x7FFF > 0x7F80).all()  # NaN stays NaN
    one_nan = ~(np.isnan(halves[0]) & np.isnan(halves[1]))  # of two NaNs, which one the sum keeps is unspecified
    assert same_floats(out["s16"][one_nan], want_sums[one_nan])


def test_sqrt_is_correctly_rounded_and_nan_below_zero(kemit_cpp):
    """sqrt (docs/ir.md; norm_rows' 1 / sqrt(var + eps)) in f32 and f16, one rounding each."""
    b = Builder("t", "gfx90a")
    src, out32, out16 = b.param("src", GLOBAL), b.param("s", GLOBAL), b.param("h", GLOBAL)
    tid = b.workitem_id("x")
    x = b.load(F32, b.ptr_add(src, tid, F32), 4)
    b.store(b.sqrt(x), b.ptr_add(out32, tid, F32), 4)
    b.store(b.sqrt(b.fptrunc(x, F16)), b.ptr_add(out16, tid, F16), 2)
    values = np.random.default_rng(5).uniform(0.0, 1000.0, 64).astype(np.float32)
    values[:3] = [0.0, 2.0, -1.0]
    s, h = np.zeros(64, dtype=np.float32), np.zeros(64, dtype=np.float16)
    kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"src": values, "s": s, "h": h})
    with np.errstate(invalid="ignore"):
        assert np.array_equal(s, np.sqrt(values), equal_nan=True)
        assert np.array_equal(h, np.sqrt(values.astype(np.float16)), equal_nan=True)


def test_divergent_loop_runs_while_any_lane_is_active(kemit_cpp):
    """Lane i sums 0 .. i - 1: lanes leave the loop one by one."""
    def body(b, tid):
        zero, one = b.const_int(I32, 0), b.const_int(I32, 1)
        (total,) = b.for_loop(zero, tid, one, [zero], lambda i, it: [b.add(it[0], i)])
        return total

    out = np.zeros(64, dtype=np.int32)
    kemit_cpp.run(lane_kernel("gfx942", body), 1, 64, {"out": out})
    assert list(out) == [i * (i - 1) // 2 for i in range(64)]


def test_barrier_orders_lds_between_waves(kemit_cpp):
    """Wave 1 reads what wave 0 wrote to LDS before the barrier."""
    b = Builder("t", "gfx1100")
    out = b.param("out", GLOBAL)
    tile = b.lds("tile", I32, 64, 16)
    tid = b.workitem_id("x")
    b.store(b.mul(tid, tid), b.ptr_add(tile, tid, I32), 4)
    b.barrier()
    other = b.bit_and(b.add(tid, b.const_int(I32, 32)), b.const_int(I32, 63))
    b.store(b.load(I32, b.ptr_add(tile, other, I32), 4), b.ptr_add(out, tid, I32), 4)
    result = np.zeros(64, dtype=np.int32)
    kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"out": result})
    assert list(result) == [((i + 32) % 64) ** 2 for i in range(64)]


def test_update_dpp_and_bpermute_match_the_reference(kemit_cpp):
    for ctrl in (0xB1, 0x4E, 0x1B, 0x111, 0x114, 0x11F, 0x124, 0x128, 0x12F):
        b = Builder("t", "gfx90a")
        out, src = b.param("out", GLOBAL), b.param("src", GLOBAL)
        tid = b.workitem_id("x")
        v = b.load(F32, b.ptr_add(src, tid, F32), 4)
        moved = b.update_dpp(b.const_float(F32, -1.0), v, ctrl)
        back = b.bpermute(moved, b.add(tid, b.const_int(I32, 5)))
        b.store(back, b.ptr_add(out, tid, F32), 4)
        values = np.arange(64, dtype=np.float32)
        result = np.zeros(64, dtype=np.float32)
        kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"out": result, "src": values})
        want = reduce_reference.bpermute(reduce_reference.update_dpp(np.float32(-1.0), values, ctrl), np.arange(64) + 5)
        assert np.array_equal(result, want), hex(ctrl)


@pytest.mark.parametrize("instr,kind,arch", [("mfma_f32_32x32x8_f16", "mfma_32x32x8", "gfx90a"),
                                             ("mfma_f32_16x16x16_bf16", "mfma_16x16x16", "gfx942"),
                                             ("mfma_f32_16x16x32_bf16", "mfma_16x16x32", "gfx950"),
                                             ("wmma_gfx11_f32_16x16x16_f16", "wmma_gfx11", "gfx1100"),
                                             ("wmma_gfx12_f32_16x16x16_bf16", "wmma_gfx12", "gfx1201"),
                                             ("wmma_gfx1250_f32_16x16x32_f16", "wmma_gfx1250", "gfx1250")])
def test_mma_follows_the_documented_fragment_layouts(kemit_cpp, instr, kind, arch):
    m, n, k, wave, length, acc, _, _ = gemm_reference.LAYOUTS[kind]
    dtype = "bf16" if instr.endswith("bf16") else "f16"
    rng = np.random.default_rng(7)
    a = reduce_reference.round_to(rng.uniform(-2, 2, (m, k)), dtype)
    bm = reduce_reference.round_to(rng.uniform(-2, 2, (k, n)), dtype)
    c = rng.uniform(-2, 2, (m, n)).astype(np.float32)
    fa, fb, fc = gemm_reference.fragments(kind, a, bm, c)
    want = gemm_reference.mma_by_fragments(kind, fa, fb, fc)
    b = Builder("t", arch)
    pa, pb, pc, pd = (b.param(name, GLOBAL) for name in ("fa", "fb", "fc", "fd"))
    tid = b.workitem_id("x")
    operand, accumulator = parse_type(f"<{length} x {dtype}>"), parse_type(f"<{acc} x f32>")
    load = lambda p, t, count: b.load(t, b.ptr_add(p, b.mul(tid, b.const_int(I32, count)), scalar(t.name)), 2)
    d = b.mma(instr, load(pa, operand, length), load(pb, operand, length), load(pc, accumulator, acc))
    b.store(d, b.ptr_add(pd, b.mul(tid, b.const_int(I32, acc)), F32), 4)
    memory = lambda x: (x.astype(np.float16) if dtype == "f16" else
                        (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16))
    out = np.zeros((wave, acc), dtype=np.float32)
    kemit_cpp.run(print_kernel(b.finish()), 1, wave,
                  {"fa": memory(fa), "fb": memory(fb), "fc": fc.astype(np.float32), "fd": out})
    assert np.allclose(out, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("c,bv,sign", [(-0.0, -1.0, 1), (-0.0, 1.0, 0), (0.0, -1.0, 0), (0.0, 1.0, 0)])
def test_mma_keeps_a_negative_zero_accumulator(kemit_cpp, c, bv, sign):
    """A all +0: D = C + the products 0 x B summed in k order from -0, so a C of -0 stays -0 only
    when every product is -0 (the executor sums the same way: tests/llvm_lane/test_executor.py)."""
    b = Builder("t", "gfx90a")
    pa, pb, pc, pd = (b.param(name, GLOBAL) for name in ("a", "b", "c", "d"))
    tid = b.workitem_id("x")
    operand, accumulator = parse_type("<4 x f16>"), parse_type("<4 x f32>")
    load = lambda p, t: b.load(t, b.ptr_add(p, b.mul(tid, b.const_int(I32, 4)), scalar(t.name)), 2)
    d = b.mma("mfma_f32_16x16x16_f16", load(pa, operand), load(pb, operand), load(pc, accumulator))
    b.store(d, b.ptr_add(pd, b.mul(tid, b.const_int(I32, 4)), F32), 4)
    out = np.full((64, 4), np.nan, dtype=np.float32)
    kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"a": np.zeros((64, 4), dtype=np.float16),
                                                    "b": np.full((64, 4), bv, dtype=np.float16),
                                                    "c": np.full((64, 4), c, dtype=np.float32), "d": out})
    assert (out == 0).all() and (np.signbit(out) == bool(sign)).all(), out.view(np.uint32)[:2]


# ---- refusals: the op and the index in the text -----------------------------------------
def run_error(kemit_cpp, text, buffers, block=64, scalars=None):
    with pytest.raises(kemit_cpp.InterpError) as error:
        kemit_cpp.run(text, 1, block, buffers, scalars or {})
    return str(error.value)


def test_out_of_bounds_names_the_op_and_the_index(kemit_cpp):
    text = lane_kernel("gfx90a", lambda b, tid: tid)
    message = run_error(kemit_cpp, text, {"out": np.zeros(10, dtype=np.int32)})
    assert message.startswith("store %1, %2 {align=4}: index 10 (bytes 40 to 44) is out of bounds of buffer 'out' "
                              "(10 elements, 40 bytes) (lane 10 of wave 0, workgroup (0,0,0), kernel @t)")


def wide_index_kernel(offset):
    """out[zext(tid) + offset] = tid, the index an i64 (a row offset past 2^31)."""
    b = Builder("t", "gfx90a")
    out = b.param("out", GLOBAL)
    tid = b.workitem_id("x")
    index = b.add(b.zext(tid, I64), b.const_int(I64, offset))
    b.store(tid, b.ptr_add(out, index, I32), 4)
    return print_kernel(b.finish())


def test_wide_index_keeps_its_64_bits(kemit_cpp):
    """An i64 index is not cut to 32 bits: 2^32 + tid is past the buffer, not tid."""
    out = np.zeros(64, dtype=np.int32)
    kemit_cpp.run(wide_index_kernel(0), 1, 64, {"out": out})
    assert list(out) == list(range(64))
    message = run_error(kemit_cpp, wide_index_kernel(1 << 32), {"out": out})
    assert "index 4294967296 (bytes 17179869184 to 17179869188) is out of bounds of buffer 'out'" in message


def test_negative_wide_index_is_an_error(kemit_cpp):
    message = run_error(kemit_cpp, wide_index_kernel(-(1 << 40)), {"out": np.zeros(64, dtype=np.int32)})
    assert "index -1099511627776 is negative (ptr_add promises [0, 2^63))" in message


def test_broken_nsw_promise_is_an_error(kemit_cpp):
    text = lane_kernel("gfx90a", lambda b, tid: b.add(tid, b.const_int(I32, (1 << 31) - 1), ("nsw",)))
    assert "nsw promise broken" in run_error(kemit_cpp, text, {"out": np.zeros(64, dtype=np.int32)})


# (op, flag, type, operands whose result is just inside the type, operands one step past it).
EDGES = [("add", "nuw", I32, (2 ** 32 - 2, 1), (2 ** 32 - 1, 1)), ("add", "nsw", I32, (2 ** 31 - 2, 1), (2 ** 31 - 1, 1)),
         ("add", "nsw", I32, (-(2 ** 31) + 1, -1), (-(2 ** 31) + 1, -2)),
         ("sub", "nsw", I32, (-(2 ** 31) + 2, 2), (-(2 ** 31) + 2, 3)),
         ("mul", "nuw", I32, (65535, 65537), (65536, 65536)), ("mul", "nsw", I32, (-46341, 46340), (-46341, 46341)),
         ("add", "nuw", I64, (2 ** 64 - 2, 1), (2 ** 64 - 1, 1)), ("add", "nsw", I64, (2 ** 63 - 2, 1), (2 ** 63 - 1, 1)),
         ("sub", "nsw", I64, (-(2 ** 63) + 2, 2), (-(2 ** 63) + 2, 3)),
         ("mul", "nuw", I64, (2 ** 32 - 1, 2 ** 32 + 1), (2 ** 32, 2 ** 32)),
         ("mul", "nsw", I64, (-(2 ** 32), 2 ** 31), (-(2 ** 32), 2 ** 31 + 1))]


@pytest.mark.parametrize("op, flag, kind, inside, past", EDGES,
                         ids=[f"{e[0]}-{e[1]}-{e[2].name}-{i}" for i, e in enumerate(EDGES)])
def test_wrap_promises_hold_to_the_edge_and_break_past_it(kemit_cpp, op, flag, kind, inside, past):
    """add, sub and mul with nuw / nsw on i32 and i64: the last result inside the type runs, one step
    past it is an error naming the promise and the lane."""
    dtype = np.int32 if kind == I32 else np.int64
    b = Builder("t", "gfx90a")
    out, xs, ys = b.param("out", GLOBAL), b.param("x", GLOBAL), b.param("y", GLOBAL)
    tid = b.workitem_id("x")
    x, y = b.load(kind, b.ptr_add(xs, tid, kind), 4), b.load(kind, b.ptr_add(ys, tid, kind), 4)
    b.store(getattr(b, op)(x, y, (flag,)), b.ptr_add(out, tid, kind), 4)
    text = print_kernel(b.finish())

    def buffers(operands):  # lane 5 takes the operands, every other lane zeros
        xs, ys = np.zeros(64, dtype=np.uint64), np.zeros(64, dtype=np.uint64)
        xs[5], ys[5] = [v % 2 ** 64 for v in operands]
        return {"out": np.zeros(64, dtype=dtype), "x": xs.astype(dtype), "y": ys.astype(dtype)}

    kemit_cpp.run(text, 1, 64, buffers(inside))
    message = run_error(kemit_cpp, text, buffers(past))
    assert f"{flag} promise broken" in message and "(lane 5 of wave 0" in message


def test_reading_unwritten_lds_is_an_error(kemit_cpp):
    b = Builder("t", "gfx90a")
    out = b.param("out", GLOBAL)
    tile = b.lds("tile", I32, 64, 16)
    tid = b.workitem_id("x")
    b.store(b.load(I32, b.ptr_add(tile, tid, I32), 4), b.ptr_add(out, tid, I32), 4)
    message = run_error(kemit_cpp, print_kernel(b.finish()), {"out": np.zeros(64, dtype=np.int32)})
    assert "reads LDS 'tile' byte 0 that no lane of this workgroup wrote" in message


def test_a_barrier_some_waves_never_reach_is_an_error(kemit_cpp):
    b = Builder("t", "gfx1100")
    b.param("out", GLOBAL)
    tid = b.workitem_id("x")
    b.if_then(b.icmp("ult", tid, b.const_int(I32, 32)), b.barrier)
    message = run_error(kemit_cpp, print_kernel(b.finish()), {"out": np.zeros(1, dtype=np.int32)})
    assert "wait at a barrier that 1 finished wave(s) never reached" in message


def test_bpermute_from_an_inactive_lane_is_an_error(kemit_cpp):
    def body(b, tid):
        return b.bpermute(tid, b.const_int(I32, 63))

    text = lane_kernel("gfx90a", body)
    assert "reads lane 63, which is inactive" in run_error(kemit_cpp, text, {"out": np.zeros(64, dtype=np.int32)}, block=40)


def test_params_must_match_the_kernel(kemit_cpp):
    text = lane_kernel("gfx90a", lambda b, tid: tid)
    assert "no buffer for pointer param 'out'" in run_error(kemit_cpp, text, {})
    assert "buffer 'extra' is no pointer param" in run_error(
        kemit_cpp, text, {"out": np.zeros(64, dtype=np.int32), "extra": np.zeros(1)})


@pytest.mark.parametrize("instr,fmt,arch", [("mfma_f32_16x16x32_fp8_fnuz", "e4m3_fnuz", "gfx942"),
                                            ("mfma_f32_16x16x32_bf8_fnuz", "e5m2_fnuz", "gfx942"),
                                            ("mfma_f32_16x16x32_fp8_ocp", "e4m3_ocp", "gfx950"),
                                            ("mfma_f32_16x16x32_bf8_ocp", "e5m2_ocp", "gfx950")])
def test_fp8_mma_reads_every_finite_code_in_its_variant(kemit_cpp, instr, fmt, arch):
    """A holds each of the 256 codes once (0 for the non-finite ones) in its first 16 columns, B is the
    identity there, so D = A[:, :16] shows the interpreter's value of every code (bytes 8 to an i64)."""
    from references.gemm_epilogue import decode_fp8
    values = decode_fp8(np.arange(256), fmt)
    one, zero = int(np.flatnonzero(values == 1.0)[0]), 0
    codes = np.where(np.isfinite(values), np.arange(256), zero).astype(np.uint8).reshape(16, 16)
    a = np.full((16, 32), zero, dtype=np.uint8)
    a[:, :16] = codes
    bm = np.full((32, 16), zero, dtype=np.uint8)
    bm[np.arange(16), np.arange(16)] = one
    fa, fb, _ = gemm_reference.fragments("mfma_16x16x32", a, bm, np.zeros((16, 16)))
    b = Builder("t", arch)
    pa, pb, pd = (b.param(name, GLOBAL) for name in ("fa", "fb", "fd"))
    tid = b.workitem_id("x")
    i64 = scalar("i64")
    load = lambda p: b.load(i64, b.ptr_add(p, tid, i64), 8)
    d = b.mma(instr, load(pa), load(pb), b.const_float(parse_type("<4 x f32>"), 0.0))
    b.store(d, b.ptr_add(pd, b.mul(tid, b.const_int(I32, 4)), F32), 4)
    out = np.zeros((64, 4), dtype=np.float32)
    kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"fa": fa.astype(np.uint8), "fb": fb.astype(np.uint8), "fd": out})
    got = np.zeros((16, 16))
    for lane in range(64):
        for e in range(4):
            got[4 * (lane // 16) + e, lane % 16] = out[lane, e]
    assert np.array_equal(got, values[codes.astype(int)].astype(np.float32))


# (instruction, processor, A / B operand type, AMD's layout table): the integer mma instructions
INT8_MMA = [("mfma_i32_32x32x8_i8", "gfx90a", "i32", "cdna2_v_mfma_i32_32x32x8i8"),
            ("mfma_i32_16x16x16_i8", "gfx90a", "i32", "cdna2_v_mfma_i32_16x16x16i8"),
            ("mfma_i32_32x32x16_i8", "gfx942", "i64", "cdna3_v_mfma_i32_32x32x16_i8"),
            ("mfma_i32_16x16x32_i8", "gfx950", "i64", "cdna3_v_mfma_i32_16x16x32_i8"),
            ("wmma_gfx11_i32_16x16x16_iu8", "gfx1100", "<4 x i32>", "rdna3_v_wmma_i32_16x16x16_iu8"),
            ("wmma_gfx12_i32_16x16x16_iu8", "gfx1201", "<2 x i32>", "rdna4_v_wmma_i32_16x16x16_iu8")]


def amd_table(name, matrix):
    """Per lane, the (row, column) of each vector element in AMD's layout table (llvm_lane/mma_layouts/)."""
    with open(os.path.join(REPO, "llvm_lane", "mma_layouts", f"{name}_{matrix}.csv"), encoding="utf-8") as handle:
        return [[tuple(map(int, re.findall(r"\d+", cell))) for cell in row[1:]] for row in list(csv.reader(handle))[3:]]


def wrap_i32(values):
    """Exact integers wrapped to i32, two's complement (the hardware's accumulator)."""
    return ((np.asarray(values, dtype=np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def run_int8_mma(kemit_cpp, instr, arch, operand, table, a, bm, c):
    """D = C + A x B by one integer mma through the interpreter: every element of A, B and C placed in
    the lane and vector element (A, B: byte) AMD's table gives it, D read back through the table (the
    order of k within the fragments, which D cannot show, is compared in test_mma_fragments.py)."""
    fa, fb, fc = ([[matrix[at] for at in lane] for lane in amd_table(table, name)] for matrix, name in
                  ((a, "A"), (bm, "B"), (c, "C")))
    wave, length, acc = len(fa), len(fa[0]), len(fc[0])
    b = Builder("t", arch)
    pa, pb, pc, pd = (b.param(name, GLOBAL) for name in ("fa", "fb", "fc", "fd"))
    tid = b.workitem_id("x")
    operand_type, accumulator = parse_type(operand), parse_type(f"<{acc} x i32>")
    word = I64 if operand == "i64" else I32
    words = length // (8 if operand == "i64" else 4)
    load = lambda p, t, count, element: b.load(t, b.ptr_add(p, b.mul(tid, b.const_int(I32, count)), element), 4)
    d = b.mma(instr, load(pa, operand_type, words, word), load(pb, operand_type, words, word),
              load(pc, accumulator, acc, I32))
    b.store(d, b.ptr_add(pd, b.mul(tid, b.const_int(I32, acc)), I32), 4)
    out = np.zeros((wave, acc), dtype=np.int32)
    kemit_cpp.run(print_kernel(b.finish()), 1, wave, {"fa": np.array(fa, dtype=np.int8), "fb": np.array(fb, dtype=np.int8),
                                                      "fc": np.array(fc, dtype=np.int32), "fd": out})
    got = np.zeros(c.shape, dtype=np.int64)
    for lane, cells in enumerate(amd_table(table, "D")):
        for e, at in enumerate(cells):
            got[at] = out[lane, e]
    return got


@pytest.mark.parametrize("instr,arch,operand,table", INT8_MMA, ids=[case[0] for case in INT8_MMA])
def test_int8_mma_is_exact_and_wraps_its_i32_accumulators(kemit_cpp, instr, arch, operand, table):
    """Signed bytes over the whole range, C near both ends of i32: D is C + A x B exactly, wrapped to
    32 bits (all -128 times all -128 plus a C near the top passes it, all 127 times all -128 plus a C
    near the bottom passes that), in AMD's layout."""
    m = 1 + max(row for lane in amd_table(table, "A") for row, _ in lane)
    k = 1 + max(col for lane in amd_table(table, "A") for _, col in lane)
    n = 1 + max(col for lane in amd_table(table, "B") for _, col in lane)
    rng = np.random.default_rng(11)
    cases = [(rng.integers(-128, 128, (m, k)), rng.integers(-128, 128, (k, n)), rng.integers(-2**31, 2**31, (m, n))),
             (np.full((m, k), -128), np.full((k, n), -128), np.full((m, n), 2**31 - 1000)),
             (np.full((m, k), 127), np.full((k, n), -128), np.full((m, n), -2**31 + 5))]
    for index, (a, bm, c) in enumerate(cases):
        exact = c.astype(np.int64) + a.astype(np.int64) @ bm.astype(np.int64)
        assert index == 0 or not np.array_equal(exact, wrap_i32(exact))  # the extreme cases do wrap
        got = run_int8_mma(kemit_cpp, instr, arch, operand, table, a, bm, c)
        assert np.array_equal(got, wrap_i32(exact)), (instr, index)


def test_texts_run_again_are_never_confused(kemit_cpp):
    # the binding keeps the last texts parsed: each run must still run the text it was given
    texts = {k: lane_kernel("gfx90a", lambda b, tid, k=k: b.add(tid, b.const_int(I32, k))) for k in range(6)}
    for k in [0, 1, 0, 5, 2, 3, 4, 0, 5, 1]:
        out = np.zeros(64, dtype=np.int32)
        kemit_cpp.run(texts[k], 1, 64, {"out": out})
        assert list(out) == [lane + k for lane in range(64)]
    broken = texts[0].replace("store", "stor", 1)
    for _ in range(2):  # a text that does not parse is refused each time
        with pytest.raises(kemit_cpp.ParseError):
            kemit_cpp.run(broken, 1, 64, {"out": np.zeros(64, dtype=np.int32)})

"""The canonical printer: a hand-built kernel printed to the exact expected text (docs/ir.md)."""
from kemit.ir.builder import Builder
from kemit.ir.printer import print_kernel
from kemit.ir.types import scalar

from kernels import build_demo

I32, F32 = scalar("i32"), scalar("f32")


DEMO = """\
; kemit canonical IR 1
kernel @demo {
  arch gfx942
  attr flat_work_group_size 1,64
  attr waves_per_eu 2
  param %0 x : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 n : i32
  lds %2 tile : f32[64] {align=16}
  lds %3 halves : <4 x f16>[8] {align=8}
  %4 = workitem_id {dim=x} : i32
  %5 = const {value=0} : i32
  %6 = const {value=1} : i32
  %7 = const {value=0x00000000} : f32
  %13 = for %8 = %5 to %1 step %6 iter(%9 = %7 : f32) {
    %10 = ptr_add %0, %8 {element=f32} : ptr.global
    %11 = load %10 {align=4} : f32
    %12 = fadd %9, %11 : f32
    yield %12
  }
  %14 = add %4, %6 {nsw, nuw} : i32
  %15 = ptr_add %2, %14 {element=f32} : ptr.lds
  store %13, %15 {align=4}
  barrier
  %16 = icmp %4, %5 {pred=eq} : i1
  if %16 {
    %17 = ptr_add %2, %6 {element=f32} : ptr.lds
    %18 = load %17 {align=4} : f32
    store %18, %0 {align=4}
  } else {
    %19 = const {value=0xC0200000} : f32
    store %19, %0 {align=4}
  }
}
"""


def test_demo_kernel_exact_text():
    assert print_kernel(build_demo()) == DEMO


def test_printing_is_deterministic_and_pure():
    kernel = build_demo()
    assert print_kernel(kernel) == print_kernel(kernel) == print_kernel(build_demo())


LOOPS = """\
; kemit canonical IR 1
kernel @loops {
  arch gfx1100
  param %0 n : i32
  %1 = const {value=0} : i32
  %2 = const {value=0x3C00} : f16
  for %3 = %1 to %0 step %0 {
    %4 = readfirstlane %3 : i32
    %5 = icmp %4, %3 {pred=eq} : i1
    if %5 {
    }
    yield
  }
  %12, %13 = for %6 = %1 to %0 step %0 iter(%7 = %1 : i32, %8 = %2 : f16) {
    %9 = add %7, %6 : i32
    %10 = fneg %8 : f16
    %11 = fpext %10 : f32
    yield %9, %10
  }
}
"""


def test_loop_forms_and_empty_if():
    """A loop with no iter values, one with two (results listed), and an empty `then`."""
    b = Builder("loops", "gfx1100")
    n = b.param("n", I32)
    zero = b.const_int(I32, 0)
    half = b.const_float(scalar("f16"), 1.0)

    def plain(i, iters):
        b.if_then(b.icmp("eq", b.readfirstlane(i), i), lambda: None)
        return []

    def pair(i, iters):
        nxt, neg = b.add(iters[0], i), b.fneg(iters[1])
        b.fpext(neg, F32)
        return [nxt, neg]

    assert b.for_loop(zero, n, n, [], plain) == []
    results = b.for_loop(zero, n, n, [zero, half], pair)
    assert [r.id for r in results] == [12, 13]
    assert print_kernel(b.finish()) == LOOPS


def test_kernel_without_attrs_params_or_ops():
    assert print_kernel(Builder("empty", "gfx90a").finish()) == (
        "; kemit canonical IR 1\nkernel @empty {\n  arch gfx90a\n}\n")

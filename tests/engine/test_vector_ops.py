"""The vector element ops (extract_element, insert_element, shuffle): operand checks with their exact
texts, the canonical text, and the LLVM text at every flavor (accepted by each flavor's real LLVM)."""
import pytest

from kemit.ir.builder import BuildError, Builder
from kemit.ir.printer import print_kernel
from kemit.ir.types import parse_type, pointer, scalar
from kemit.llvm.flavors import FLAVORS
from kemit.llvm.lower import lower_kernel

F16, F32, I32 = scalar("f16"), scalar("f32"), scalar("i32")
V2F32, V4F32, V8F16 = (parse_type(t) for t in ("<2 x f32>", "<4 x f32>", "<8 x f16>"))


def raises(message, action, *args):
    with pytest.raises(BuildError) as error:
        action(*args)
    assert str(error.value) == message


def build_pairs():
    """Split a <4 x f32> into pairs, repack one from lanes, join them back."""
    b = Builder("pairs", "gfx942")
    src = b.param("src", pointer("global"), align=16)
    dst = b.param("dst", pointer("global"), align=16)
    v = b.load(V4F32, src, 16)
    low = b.shuffle(v, v, (0, 1))
    high = b.shuffle(v, v, (2, 3))
    lane = b.extract_element(high, 1)
    packed = b.insert_element(b.const_float(V2F32, 0.0), lane, 0)
    b.store(b.shuffle(low, packed, range(4)), dst, 16)
    return b.finish()


def test_canonical_text():
    text = print_kernel(build_pairs())
    assert "  %3 = shuffle %2, %2 {mask=[0,1]} : <2 x f32>\n" in text
    assert "  %5 = extract_element %4 {index=1} : f32\n" in text
    assert "  %7 = insert_element %6, %5 {index=0} : <2 x f32>\n" in text
    assert "  %8 = shuffle %3, %7 {mask=[0,1,2,3]} : <4 x f32>\n" in text


@pytest.mark.parametrize("flavor", FLAVORS, ids=lambda f: f.name)
def test_lowering(flavor):
    text = lower_kernel(build_pairs(), flavor)
    assert "  %v3 = shufflevector <4 x float> %v2, <4 x float> %v2, <2 x i32> <i32 0, i32 1>\n" in text
    assert "  %v5 = extractelement <2 x float> %v4, i64 1\n" in text
    zero = "splat (float 0x0000000000000000)" if flavor.splat_constants else \
        "<float 0x0000000000000000, float 0x0000000000000000>"
    assert f"  %v7 = insertelement <2 x float> {zero}, float %v5, i64 0\n" in text
    assert "  %v8 = shufflevector <2 x float> %v3, <2 x float> %v7, <4 x i32> <i32 0, i32 1, i32 2, i32 3>\n" in text


def test_llvm_accepts_every_flavor():
    from llvm_c import Checker, MissingLLVM
    for flavor in FLAVORS:
        try:
            checker = Checker(flavor.name)
        except MissingLLVM as missing:
            pytest.fail(str(missing), pytrace=False)  # the set-up installs every LLVM: never a silent skip
        assert checker.check(lower_kernel(build_pairs(), flavor)) == ""


def test_operand_checks():
    b = Builder("k", "gfx942")
    s, v, h = b.const_float(F32, 1.0), b.const_float(V2F32, 0.0), b.const_float(V8F16, 0.0)
    raises("extract_element needs a vector and a lane index in range (got f32, 0)", b.extract_element, s, 0)
    raises("extract_element needs a vector and a lane index in range (got <2 x f32>, 2)", b.extract_element, v, 2)
    raises("insert_element needs a vector and a lane index in range (got <2 x f32>, -1)", b.insert_element, v, s, -1)
    raises("insert_element needs a f32 lane value (got f16)", b.insert_element, v, b.const_float(F16, 1.0), 0)
    raises("shuffle needs two vectors of one type (got <2 x f32>, <8 x f16>)", b.shuffle, v, h, (0, 1))
    raises("shuffle needs two vectors of one type (got f32, f32)", b.shuffle, s, s, (0, 1))
    raises("shuffle mask must have 2 to 16 lanes, each in [0, 4) (got [0,4])", b.shuffle, v, v, (0, 4))
    raises("shuffle mask must have 2 to 16 lanes, each in [0, 4) (got [1])", b.shuffle, v, v, (1,))
    assert b.shuffle(h, h, range(16)).type == parse_type("<16 x f16>")

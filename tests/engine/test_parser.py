"""The canonical parser (ir/parser.py, and its C++ mirror through kemit_cpp.reprint): print(parse(text))
== text byte for byte over every emitting parity config, the shared hand-built kernels and random
kernels built with the builder (hypothesis); malformed text is refused with the same `line N: ...`
text by both engines."""
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kemit.engine import emit
from kemit.families.registry import family_names
from kemit.ir.builder import Builder
from kemit.ir.parser import ParseError, parse_kernel, parse_module
from kemit.ir.printer import HEADER, print_kernel
from kemit.ir.types import parse_type, pointer, scalar

import kernels

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def module_text(kernels_):
    return HEADER + "".join(print_kernel(k)[len(HEADER):] for k in kernels_)


def parity_texts():
    texts = []
    for family in family_names():
        path = os.path.join(REPO, "parity", "configs", f"{family}.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as handle:
            for config in json.load(handle)["configs"]:
                result = emit(family, config["arch"], config["spec"], [])
                if not result.rejected:
                    texts.append((f"{family}:{config['id']}", result.canonical))
    return texts


PARITY = parity_texts()
HAND = [print_kernel(build()) for build in (kernels.build_rules, kernels.build_loop_shapes, kernels.build_demo)]


def test_every_family_has_emitting_configs():
    assert {name.split(":")[0] for name, _ in PARITY} == set(family_names())


@pytest.mark.parametrize("name,text", PARITY, ids=[name for name, _ in PARITY])
def test_round_trip_parity_config(name, text):
    assert module_text(parse_module(text)) == text


@pytest.mark.parametrize("text", HAND)
def test_round_trip_hand_kernels(text):
    assert print_kernel(parse_kernel(text)) == text


def test_cpp_parser_round_trips_every_parity_config(kemit_cpp):
    for name, text in PARITY:
        assert kemit_cpp.reprint(text) == text, name


# ---- errors -----------------------------------------------------------------------------
DEMO = HAND[2]


def replace_line(text, number, line):
    lines = text.split("\n")
    lines[number - 1] = line
    return "\n".join(lines)


def line_of(text, start):
    return next(i for i, line in enumerate(text.split("\n"), 1) if line.strip().startswith(start))


BAD = [
    ("no header", DEMO[len(HEADER):], "line 1: expected the header '; kemit canonical IR 1'"),
    ("no newline at the end", DEMO[:-1], f"line {DEMO.count(chr(10))}: the text must end with a newline"),
    ("unknown op", replace_line(DEMO, line_of(DEMO, "barrier"), "  frobnicate"), None),
    ("undefined value", DEMO.replace("fadd %9, %11", "fadd %9, %99"), "line 17: %99 is not defined here"),
    ("unsorted attributes", DEMO.replace("  attr flat_work_group_size 1,64\n  attr waves_per_eu 2",
                                         "  attr waves_per_eu 2\n  attr flat_work_group_size 1,64"), None),
    ("lower-case hex", DEMO.replace("0xC0200000", "0xc0200000"), None),
    ("id out of order", DEMO.replace("param %1 n", "param %2 n"), "line 7: value %2 is out of order (the next id is %1)"),
    ("wrong type", DEMO.replace("param %1 n : i32", "param %1 n : i33"), "line 7: unknown scalar type 'i33' (known: i1, i16, i32, i64, f16, bf16, f32)"),
    ("text after the kernel", DEMO + "}\n", None),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_malformed_text_is_refused_with_a_line_number(name, text, message):
    with pytest.raises(ParseError) as error:
        parse_module(text)
    assert str(error.value).startswith("line ")
    if message:
        assert str(error.value) == message


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_cpp_parser_refuses_with_the_same_text(kemit_cpp, name, text, message):
    with pytest.raises(ParseError) as py_error:
        parse_module(text)
    with pytest.raises(kemit_cpp.ParseError) as cpp_error:
        kemit_cpp.reprint(text)
    assert str(cpp_error.value) == str(py_error.value)


# ---- random kernels ---------------------------------------------------------------------
I1, I32, F32, F16 = scalar("i1"), scalar("i32"), scalar("f32"), scalar("f16")
V4F32 = parse_type("<4 x f32>")


def build_random(draw):
    """A small kernel of random ops over a pool of values, with nested for / if regions."""
    b = Builder("random", draw(st.sampled_from(("gfx90a", "gfx942", "gfx1100", "gfx1201"))))
    if draw(st.booleans()):
        b.attr("flat_work_group_size", f"1,{draw(st.sampled_from((64, 128, 256)))}")
    buffer = b.param("buf", pointer("global"), align=16, noalias=draw(st.booleans()), nocapture=True)
    n = b.param("n", I32)
    if draw(st.booleans()):
        b.lds("tile", F32, draw(st.integers(1, 64)), 16)
    pool = {"i32": [n, b.workitem_id(draw(st.sampled_from("xyz")))], "f32": [], "i1": []}

    def pick(kind):
        return draw(st.sampled_from(pool[kind]))

    def step(depth):
        choice = draw(st.integers(0, 9 if depth < 2 else 7))
        if choice == 0:
            pool["i32"].append(b.const_int(I32, draw(st.integers(-(1 << 31), (1 << 31) - 1))))
        elif choice == 1:
            pool["f32"].append(b.const_float(F32, draw(st.sampled_from((0.0, -1.5, 2.0, 1e-3 * 0 + 0.25, float("inf"))))))
        elif choice == 2:
            flags = tuple(f for f in ("nsw", "nuw") if draw(st.booleans()))
            op = draw(st.sampled_from(("add", "sub", "mul", "shl")))
            pool["i32"].append(getattr(b, op)(pick("i32"), pick("i32"), flags))
        elif choice == 3 and pool["f32"]:
            op = draw(st.sampled_from(("fadd", "fmul", "fmax", "fdiv")))
            pool["f32"].append(getattr(b, op)(pick("f32"), pick("f32")))
        elif choice == 4:
            pool["i1"].append(b.icmp(draw(st.sampled_from(("eq", "slt", "uge"))), pick("i32"), pick("i32")))
        elif choice == 5:
            pool["f32"].append(b.sitofp(pick("i32"), F32))
        elif choice == 6:
            address = b.ptr_add(buffer, pick("i32"), F32)
            if pool["f32"] and draw(st.booleans()):
                b.store(pick("f32"), address, 4)
            else:
                pool["f32"].append(b.load(F32, address, 4))
        elif choice == 7 and pool["f32"]:
            vector = b.const_float(V4F32, 1.0)
            pool["f32"].append(b.extract_element(b.insert_element(vector, pick("f32"), 1), 2))
        elif choice == 8:
            inits = [pick("i32")] if draw(st.booleans()) else []

            def body(iv, iters):
                saved = {k: list(v) for k, v in pool.items()}
                pool["i32"].extend([iv] + list(iters))
                for _ in range(draw(st.integers(0, 3))):
                    step(depth + 1)
                yields = [pick("i32") for _ in iters]
                pool.update(saved)
                return yields

            pool["i32"].extend(b.for_loop(pick("i32"), pick("i32"), b.const_int(I32, 1), inits, body))
        elif choice == 9 and pool["i1"]:
            def region():
                saved = {k: list(v) for k, v in pool.items()}
                for _ in range(draw(st.integers(0, 2))):
                    step(depth + 1)
                pool.update(saved)

            if draw(st.booleans()):
                b.if_then_else(pick("i1"), region, region)
            else:
                b.if_then(pick("i1"), region)

    for _ in range(draw(st.integers(0, 12))):
        step(0)
    if draw(st.booleans()):
        b.barrier()
    return b.finish()


@st.composite
def random_kernels(draw):
    return build_random(draw)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels())
def test_round_trip_random_kernels(kernel):
    text = print_kernel(kernel)
    assert print_kernel(parse_kernel(text)) == text


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(random_kernels())
def test_cpp_round_trip_random_kernels(kemit_cpp, kernel):
    text = print_kernel(kernel)
    assert kemit_cpp.reprint(text) == text


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(HAND), st.data())
def test_both_parsers_agree_on_damaged_text(kemit_cpp, text, data):
    """Damage one character: both parsers accept it with the same reprint, or refuse with the same text."""
    at = data.draw(st.integers(0, len(text) - 1))
    damaged = text[:at] + data.draw(st.sampled_from(list(" %{}=,:x0129a<>[]\n"))) + text[at + 1:]
    try:
        expected = module_text(parse_module(damaged))
    except ParseError as error:
        with pytest.raises(kemit_cpp.ParseError) as cpp_error:
            kemit_cpp.reprint(damaged)
        assert str(cpp_error.value) == str(error)
    else:
        assert expected == damaged
        assert kemit_cpp.reprint(damaged) == damaged

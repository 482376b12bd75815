"""IR types: the canonical spelling, its inverse parse_type, and the exact error texts."""
import pytest

from kemit.ir.types import (TypeError_, Type, byte_size, parse_type, pointer, scalar, type_text,
                            vector, with_lanes)

SPELLINGS = ["i1", "i16", "i32", "i64", "f16", "bf16", "f32",
             "<2 x f16>", "<4 x bf16>", "<8 x f32>", "<16 x i1>", "<3 x i64>",
             "ptr.global", "ptr.lds", "ptr.constant", "ptr.private"]


@pytest.mark.parametrize("text", SPELLINGS)
def test_round_trip(text):
    t = parse_type(text)
    assert type_text(t) == text
    assert parse_type(type_text(t)) == t


def test_parsed_structure():
    assert parse_type("i32") == Type("scalar", "i32")
    assert parse_type("<4 x f16>") == Type("vector", "f16", 4)
    assert parse_type("ptr.lds") == Type("pointer", space="lds")
    assert vector(scalar("bf16"), 8) == parse_type("<8 x bf16>")
    assert with_lanes(scalar("f32"), 1) == scalar("f32")
    assert with_lanes(scalar("f32"), 4) == parse_type("<4 x f32>")


def test_byte_sizes():
    assert [byte_size(parse_type(t)) for t in ("i1", "i16", "bf16", "f32", "i64", "<8 x f16>", "<4 x i1>",
                                                "ptr.global", "ptr.constant", "ptr.lds", "ptr.private")] == \
        [1, 2, 2, 4, 8, 16, 4, 8, 8, 4, 4]


@pytest.mark.parametrize("text, message", [
    ("f64", "unknown scalar type 'f64' (known: i1, i16, i32, i64, f16, bf16, f32)"),
    ("", "unknown scalar type '' (known: i1, i16, i32, i64, f16, bf16, f32)"),
    ("float", "unknown scalar type 'float' (known: i1, i16, i32, i64, f16, bf16, f32)"),
    ("ptr.shared", "unknown address space 'shared' (known: global, lds, constant, private)"),
    ("ptr.", "unknown address space '' (known: global, lds, constant, private)"),
    ("<x x f32>", "malformed vector type '<x x f32>'"),
    ("<-2 x f32>", "malformed vector type '<-2 x f32>'"),
    ("<1 x f32>", "vector length must be between 2 and 16 (got 1)"),
    ("<17 x f32>", "vector length must be between 2 and 16 (got 17)"),
    ("<4 x f64>", "unknown scalar type 'f64' (known: i1, i16, i32, i64, f16, bf16, f32)"),
    ("<4 x <2 x f32>>", "unknown scalar type '<2 x f32>' (known: i1, i16, i32, i64, f16, bf16, f32)"),
])
def test_parse_errors(text, message):
    with pytest.raises(TypeError_) as error:
        parse_type(text)
    assert str(error.value) == message


def test_constructor_errors():
    with pytest.raises(TypeError_) as error:
        vector(pointer("global"), 4)
    assert str(error.value) == "vector elements must be scalars (got ptr.global)"
    with pytest.raises(TypeError_) as error:
        vector(vector(scalar("f32"), 2), 2)
    assert str(error.value) == "vector elements must be scalars (got <2 x f32>)"
    with pytest.raises(TypeError_) as error:
        pointer("flat")
    assert str(error.value) == "unknown address space 'flat' (known: global, lds, constant, private)"
    with pytest.raises(TypeError_) as error:
        with_lanes(scalar("i32"), 0)
    assert str(error.value) == "vector length must be between 2 and 16 (got 0)"


def test_type_error_is_a_value_error():
    # Callers (the families, the engine) catch ValueError; the builder's checks must be one.
    assert issubclass(TypeError_, ValueError)

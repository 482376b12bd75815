"""The canonical parser: canonical IR text (docs/ir.md) back into a Kernel.

The parser drives the builder, so a parsed kernel passes every operand check a built one does and
its value ids are the builder's own (an id out of creation order is an error). The text must then
be exactly what the printer writes for the kernel, so print_kernel(parse_kernel(text)) == text
byte for byte (and print_module(parse_module(text)) == text for a module of several kernels); anything else is an error naming the line (`line 7: ...`, the header is line 1).
The C++ parser (cpp_engine/src/ir/parser.cpp) mirrors this file function for function, with the
same error texts.
"""
import re
import struct

from .. import tables
from ..tables import OP
from .builder import Builder, BuildError
from .printer import HEADER, print_kernel
from .types import TypeError_, element_type, is_int, parse_type, type_text

KERNEL_LINE = re.compile(r"kernel @([a-z_][a-z0-9_]*) \{\Z")
PARAM_LINE = re.compile(r"  param %([0-9]+) ([a-z_][a-z0-9_]*) : ([^{]+?)(?: \{(.*)\})?\Z")
LDS_LINE = re.compile(r"  lds %([0-9]+) ([a-z_][a-z0-9_]*) : ([^\[]+)\[([0-9]+)\] \{align=([0-9]+)\}\Z")
OP_LINE = re.compile(r"(?:%([0-9]+) = )?([a-z_0-9]+)((?: %[0-9]+(?:, %[0-9]+)*)?)(?: \{([^}]*)\})?(?: : (.+))?\Z")
FOR_LINE = re.compile(r"(?:(%[0-9]+(?:, %[0-9]+)*) = )?for %([0-9]+) = %([0-9]+) to %([0-9]+) step %([0-9]+)"
                      r"(?: iter\((.*)\))? \{\Z")
ITER_PAIR = re.compile(r"%([0-9]+) = %([0-9]+) : (.+)\Z")
IF_LINE = re.compile(r"if %([0-9]+) \{\Z")
YIELD_LINE = re.compile(r"yield((?: %[0-9]+(?:, %[0-9]+)*)?)\Z")
ATTR_KEY = re.compile(r"[a-z_][a-z0-9_]*\Z")
DECIMAL = re.compile(r"-?[0-9]+\Z")
HEX_BITS = re.compile(r"0x[0-9A-F]+\Z")
SHUFFLE_MASK = re.compile(r"\[[0-9]+(?:,[0-9]+)*\]\Z")
# The op groups, from tables/ops.json.
INT_BINARY = tuple(row["name"] for row in tables.ops_in("int_binary"))
INT_BINARY_FLAGS = tuple(sorted({flag for row in tables.ops_in("int_binary") for flag in row.get("flags", ())}))
FLOAT_OPS = {row["name"]: row["operands"] for row in tables.ops_in("float_math")}
COMPARES = tuple(row["name"] for row in tables.ops_in("compare"))
CASTS = tuple(row["name"] for row in tables.ops_in("cast"))
SPECIAL_REGISTERS = tuple(row["name"] for row in tables.ops_in("special_register"))
MAX_DIGITS = 18     # an integer attribute fits an int64
MAX_ID_DIGITS = 9   # an id, count or alignment fits an int32


class ParseError(ValueError):
    """Text that is not canonical IR: the message starts with `line N: `."""


def parse_kernel(text):
    """The kernel whose canonical text is `text`; ParseError (`line N: ...`) otherwise."""
    kernels = parse_module(text)
    if len(kernels) != 1:
        raise ParseError(f"line {text.count(chr(10))}: expected one kernel, the text has {len(kernels)}")
    return kernels[0]


def parse_module(text):
    """The kernels of a module's canonical text (printer.print_module: the header once, then each
    kernel's block); ParseError (`line N: ...`) otherwise."""
    lines = text.split("\n")
    if lines[0] + "\n" != HEADER:
        raise ParseError(f"line 1: expected the header '{HEADER.strip()}'")
    if lines[-1] != "":
        raise ParseError(f"line {len(lines)}: the text must end with a newline")
    parser = Parser(lines[:-1])
    kernels = []
    try:
        while parser.peek() is not None or not kernels:
            kernels.append(parser.kernel())
    except (BuildError, TypeError_) as error:
        raise ParseError(f"line {parser.line_number}: {error}") from None
    check_canonical(kernels, text)
    return kernels


def check_canonical(kernels, text):
    """The text must be the printer's own: the first line that differs is an error."""
    printed = HEADER + "".join(print_kernel(kernel)[len(HEADER):] for kernel in kernels)
    if printed == text:
        return
    mine, theirs = printed.split("\n"), text.split("\n")
    for number, (a, b) in enumerate(zip(mine, theirs), 1):
        if a != b:
            raise ParseError(f"line {number}: not canonical: the printer writes '{a}'")
    raise ParseError(f"line {min(len(mine), len(theirs))}: not canonical: the printer writes "
                     f"{len(mine) - 1} line(s), the text has {len(theirs) - 1}")


class Parser:
    """Recursive descent over the lines, building as it goes; line_number is the current line."""

    def __init__(self, lines):
        self.lines = lines
        self.line_number = 1  # the header
        self.b = None
        self.scopes = [{}]  # id -> Value per open region, innermost last

    def take(self):
        if self.line_number >= len(self.lines):
            self.line_number = len(self.lines) + 1
            self.fail("unexpected end of text")
        self.line_number += 1
        return self.lines[self.line_number - 1]

    def peek(self):
        return self.lines[self.line_number] if self.line_number < len(self.lines) else None

    def fail(self, message):
        raise ParseError(f"line {self.line_number}: {message}")

    # ---- kernel --------------------------------------------------------------------------
    def kernel(self):
        head = self.take()
        match = KERNEL_LINE.match(head)
        if not match:
            self.fail(f"expected 'kernel @<name> {{' (got '{head}')")
        arch = self.take()
        if not re.match(r"  arch [a-z0-9]+\Z", arch):
            self.fail(f"expected '  arch <processor>' (got '{arch}')")
        self.b = Builder(match.group(1), arch[7:])
        self.scopes = [{}]
        self.interface()
        end = self.region(1)
        if end != "}":
            self.fail(f"expected '}}' to close the kernel (got '{end}')")
        return self.b.finish()

    def interface(self):
        """attr, param and lds lines (their order is checked against the printer at the end)."""
        while self.peek() is not None:
            line = self.peek()
            if line.startswith("  attr "):
                self.take()
                key, _, value = line[7:].partition(" ")
                self.b.attr(key, value)
            elif line.startswith("  param "):
                self.take()
                self.param(line)
            elif line.startswith("  lds "):
                self.take()
                self.lds(line)
            else:
                return

    def param(self, line):
        match = PARAM_LINE.match(line)
        if not match:
            self.fail(f"expected '  param %<id> <name> : <type>[ {{attrs}}]' (got '{line}')")
        attrs = parse_attrs(self, match.group(4)) if match.group(4) is not None else {}
        flags = {}
        for key in ("noalias", "nocapture", "readonly", "writeonly"):
            if key in attrs:
                flags[key] = attrs.pop(key) is True
        align = attrs.pop("align", 0)
        if attrs or not all(flags.values()) or not isinstance(align, int):
            self.fail(f"param attributes are align=N, noalias, nocapture, readonly, writeonly (got '{match.group(4)}')")
        value = self.b.param(match.group(2), parse_type(match.group(3)), align, **flags)
        self.define(value, match.group(1))

    def lds(self, line):
        match = LDS_LINE.match(line)
        if not match:
            self.fail(f"expected '  lds %<id> <name> : <type>[<count>] {{align=N}}' (got '{line}')")
        value = self.b.lds(match.group(2), parse_type(match.group(3)), number(self, match.group(4)),
                          number(self, match.group(5)))
        self.define(value, match.group(1))

    # ---- regions -------------------------------------------------------------------------
    def region(self, depth):
        """Ops indented by `depth` levels up to the line that ends the region, which it returns:
        the closing brace, `} else {`, or a yield (with its indentation stripped)."""
        pad, closing = "  " * depth, "  " * (depth - 1) + "}"
        while True:
            line = self.take()
            if line in (closing, closing + " else {"):
                return line[2 * (depth - 1):]
            if not line.startswith(pad) or line[len(pad):].startswith(" "):
                self.fail(f"expected an op indented by {len(pad)} spaces or '{closing}' (got '{line}')")
            text = line[len(pad):]
            if YIELD_LINE.match(text):
                return text
            if FOR_LINE.match(text):
                self.for_op(text, depth)
            elif IF_LINE.match(text):
                self.if_op(text, depth)
            else:
                self.op(text)

    def open_scope(self):
        self.scopes.append({})

    def close_scope(self):
        self.scopes.pop()

    def for_op(self, head, depth):
        match = FOR_LINE.match(head)
        head_line = self.line_number
        lo, hi, step = (self.use(match.group(k)) for k in (3, 4, 5))
        pairs = []
        if match.group(6) is not None:
            pairs = [ITER_PAIR.match(pair) for pair in match.group(6).split(", ")]
            if not all(pairs):
                self.fail(f"expected 'iter(%<arg> = %<init> : <type>, ...)' (got 'iter({match.group(6)})')")
        inits = [self.use(pair.group(2)) for pair in pairs]

        def body(iv, iters):
            self.open_scope()
            self.define(iv, match.group(2))
            for arg, pair in zip(iters, pairs):
                self.define(arg, pair.group(1))
            end = self.region(depth + 1)
            if not YIELD_LINE.match(end):
                self.fail("a for body must end with 'yield[ %v, ...]'")
            yields = [self.use(token) for token in end[6:].split(", ")] if end != OP.yield_values else []
            self.close_scope()
            closing = self.take()
            if closing != "  " * depth + "}":
                self.fail(f"expected '{'  ' * depth}}}' after the yield (got '{closing}')")
            return yields

        results = self.b.for_loop(lo, hi, step, inits, body)
        names = match.group(1).split(", ") if match.group(1) else []
        if len(names) != len(results):
            raise ParseError(f"line {head_line}: the for has {len(results)} result(s), the text names {len(names)}")
        for value, name in zip(results, names):
            self.define(value, name, head_line)

    def if_op(self, head, depth):
        cond = self.use(IF_LINE.match(head).group(1))
        ends = []

        def then_body():
            self.open_scope()
            ends.append(self.region(depth + 1))
            self.close_scope()

        def else_body():
            self.open_scope()
            ends.append(self.region(depth + 1))
            self.close_scope()

        if self.has_else(depth):
            self.b.if_then_else(cond, then_body, else_body)
        else:
            self.b.if_then(cond, then_body)
        if any(end != "}" and end != "} else {" for end in ends):
            self.fail("yield outside a for body's last line")

    def has_else(self, depth):
        """Whether the if opened on the current line (indented `depth` levels) has an else: its
        region ends at the first later line indented `depth` levels or less."""
        pad = "  " * depth
        for line in self.lines[self.line_number:]:
            if not line.startswith(pad + "  "):
                return line == pad + "} else {"
        return False

    # ---- plain ops -----------------------------------------------------------------------
    def op(self, text):
        match = OP_LINE.match(text)
        if not match:
            self.fail(f"expected '[%<id> = ]<op>[ %<id>, ...][ {{attrs}}][ : <type>]' (got '{text}')")
        result, name, operand_text, attr_text, result_text = match.groups()
        operands = [self.use(token) for token in operand_text[1:].split(", ")] if operand_text else []
        attrs = parse_attrs(self, attr_text) if attr_text is not None else {}
        if (result is None) != (result_text is None):
            self.fail(f"an op with a result needs both '%<id> = ' and ' : <type>' (got '{text}')")
        result_type = parse_type(result_text) if result_text is not None else None
        value = build_op(self, name, operands, attrs, result_type)
        if (value is None) != (result is None):
            self.fail(f"{name} {'has no' if value is None else 'has a'} result")
        if value is not None:
            self.define(value, result)

    def use(self, token):
        wanted = number(self, token)
        for scope in reversed(self.scopes):
            if wanted in scope:
                return scope[wanted]
        self.fail(f"%{wanted} is not defined here")

    def define(self, value, token, line_number=None):
        given = number(self, token)
        if value.id != given:
            raise ParseError(f"line {line_number or self.line_number}: value %{given} is out of order "
                             f"(the next id is %{value.id})")
        self.scopes[-1][given] = value


def parse_attrs(parser, text):
    """`a, b=1, c=x` -> {"a": True, "b": 1, "c": "x"}; a decimal value is an integer."""
    attrs = {}
    for item in text.split(", "):
        key, equals, value = item.partition("=")
        if not ATTR_KEY.match(key) or key in attrs or (equals and not value):
            parser.fail(f"malformed attribute '{item}'")
        if equals and DECIMAL.match(value) and len(value.lstrip("-")) > MAX_DIGITS:
            parser.fail(f"attribute value {value} has more than {MAX_DIGITS} digits")
        attrs[key] = (int(value) if DECIMAL.match(value) else value) if equals else True
    return attrs


def number(parser, token):
    """A value id, count or alignment of the text (at most MAX_ID_DIGITS digits)."""
    digits = token.lstrip("%")
    if len(digits) > MAX_ID_DIGITS:
        parser.fail(f"number {digits} has more than {MAX_ID_DIGITS} digits")
    return int(digits)


def expect_shape(parser, name, operands, count, attrs, required, flags=()):
    """The op's operand count and attribute keys; a flag takes no value, a required key does."""
    if len(operands) != count:
        parser.fail(f"{name} takes {count} operand(s) (got {len(operands)})")
    for key in required:
        if key not in attrs or attrs[key] is True:
            parser.fail(f"{name} needs attribute {key}=<value>")
    for key in attrs:
        if key not in required and (key not in flags or attrs[key] is not True):
            parser.fail(f"{name} does not take attribute '{key}'")


def int_attr(parser, name, attrs, key):
    value = attrs[key]
    if not isinstance(value, int) or not -(1 << 31) <= value < (1 << 31):
        parser.fail(f"{name} attribute {key} must be a 32-bit integer (got {value})")
    return value


def need_type(parser, name, result_type):
    if result_type is None:
        parser.fail(f"{name} needs a result type")
    return result_type


def bits_to_float(t, bits):
    """The float whose bit pattern in scalar float type t is `bits`."""
    if t.name == "f32":
        return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]
    if t.name == "bf16":
        return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]
    return struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0]


def build_op(parser, name, operands, attrs, result_type):
    """Call the builder method of op `name`; its result value, or None (store, barrier)."""
    b = parser.b
    if name == OP.constant:
        expect_shape(parser, name, operands, 0, attrs, ("value",))
        t, value = need_type(parser, name, result_type), attrs["value"]
        if is_int(t) and isinstance(value, int):
            return b.const_int(t, value)
        if not is_int(t) and isinstance(value, str) and HEX_BITS.match(value) and len(value) <= 10:
            return b.const_float(t, bits_to_float(element_type(t), int(value, 16)))
        parser.fail(f"const value {value} does not suit {type_text(t)}")
    if name in SPECIAL_REGISTERS:
        expect_shape(parser, name, operands, 0, attrs, ("dim",))
        return getattr(b, name)(str(attrs["dim"]))
    if name in INT_BINARY:
        expect_shape(parser, name, operands, 2, attrs, (), INT_BINARY_FLAGS)
        flags = tuple(sorted(attrs))
        if not tables.OP_ROWS[name].get("flags"):
            if flags:
                parser.fail(f"{name} does not take attribute '{flags[0]}'")
            return getattr(b, name)(operands[0], operands[1])
        return getattr(b, name)(operands[0], operands[1], flags)
    if name in FLOAT_OPS:
        expect_shape(parser, name, operands, FLOAT_OPS[name], attrs, ())
        return getattr(b, name)(*operands)
    if name in COMPARES:
        expect_shape(parser, name, operands, 2, attrs, ("pred",))
        return getattr(b, name)(str(attrs["pred"]), operands[0], operands[1])
    if name == OP.select:
        expect_shape(parser, name, operands, 3, attrs, ())
        return b.select(operands[0], operands[1], operands[2])
    if name in CASTS:
        expect_shape(parser, name, operands, 1, attrs, (), tuple(tables.OP_ROWS[name].get("flags", ())))
        t = need_type(parser, name, result_type)
        if name == OP.zext:
            return b.zext(operands[0], t, "nneg" in attrs)
        return getattr(b, name)(operands[0], t)
    return build_other_op(parser, name, operands, attrs, result_type)


def build_other_op(parser, name, operands, attrs, result_type):
    """Memory, vector element, cross-lane and matrix ops."""
    b = parser.b
    if name == OP.ptr_add:
        expect_shape(parser, name, operands, 2, attrs, ("element",))
        return b.ptr_add(operands[0], operands[1], parse_type(str(attrs["element"])))
    if name == OP.load:
        expect_shape(parser, name, operands, 1, attrs, ("align",))
        return b.load(need_type(parser, name, result_type), operands[0], int_attr(parser, name, attrs, "align"))
    if name == OP.store:
        expect_shape(parser, name, operands, 2, attrs, ("align",))
        return b.store(operands[0], operands[1], int_attr(parser, name, attrs, "align"))
    if name == OP.atomic_add:
        expect_shape(parser, name, operands, 2, attrs, ("align", "order", "scope"))
        return b.atomic_add(operands[0], operands[1], str(attrs["order"]), str(attrs["scope"]),
                            int_attr(parser, name, attrs, "align"))
    if name == OP.barrier:
        expect_shape(parser, name, operands, 0, attrs, ())
        return b.barrier()
    if name == OP.readfirstlane:
        expect_shape(parser, name, operands, 1, attrs, ())
        return b.readfirstlane(operands[0])
    if name == OP.extract_element:
        expect_shape(parser, name, operands, 1, attrs, ("index",))
        return b.extract_element(operands[0], int_attr(parser, name, attrs, "index"))
    if name == OP.insert_element:
        expect_shape(parser, name, operands, 2, attrs, ("index",))
        return b.insert_element(operands[0], operands[1], int_attr(parser, name, attrs, "index"))
    if name == OP.shuffle:
        expect_shape(parser, name, operands, 2, attrs, ("mask",))
        mask = str(attrs["mask"])
        if not SHUFFLE_MASK.match(mask):
            parser.fail(f"shuffle mask must be [m0,m1,...] (got {mask})")
        return b.shuffle(operands[0], operands[1], [int(m) for m in mask[1:-1].split(",")])
    if name == OP.bpermute:
        expect_shape(parser, name, operands, 2, attrs, ())
        return b.bpermute(operands[0], operands[1])
    if name == OP.update_dpp:
        expect_shape(parser, name, operands, 2, attrs, ("ctrl",))
        return b.update_dpp(operands[0], operands[1], int_attr(parser, name, attrs, "ctrl"))
    if name == OP.mma:
        expect_shape(parser, name, operands, 3, attrs, ("instr",))
        return b.mma(str(attrs["instr"]), operands[0], operands[1], operands[2])
    parser.fail(f"unknown op '{name}'")

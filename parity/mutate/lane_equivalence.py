"""A changed cross-lane step that no lane can see (docs/mutation.md, "Verdicts").

A wave reduction's DPP or ds_bpermute step moved to another source lane, or a row left out of a
DPP's row mask, changes a value only in the lanes that read a different source. It changes a
result only when a lane that is later read holds a value built from different inputs. Whether it
does is decided here, exactly, by evaluating the changed block once per lane of every wave of a
workgroup, in the original module and in the mutant:

- every value is a node of a hash-consed expression DAG, so two values are equal exactly when
  their nodes are the same. The leaves are a kernel argument, a load, a phi or a value built from
  them, each per wave and lane; a loop header's phi is its entry value in a lane whose first trip
  leaves the loop. Integers built from the work-item id fold to constants (a lane's id, a
  bpermute address). Constants fold only where the result is exact: integer ops that keep their
  nsw/nuw/exact/disjoint promises, a bitcast and its inverse (never of a NaN). maxnum and minnum
  are the set of their leaves, fadd and fmul take their operands in either order: LLVM lets either
  of two equal operands be a maximum (+0 or -0) and leaves a NaN's payload open.
- the DPP and ds_bpermute steps follow the executor's semantics (llvm_lane/executor/
  cross_lane.cpp): row and bank masks, bound_ctrl, rows of 16 lanes, addresses modulo the wave.
- the block must run with every lane of its wave active: the plan's workgroups are whole waves,
  and the flavor's uniformity analysis puts the block under no divergent branch
  (launch_equivalence.full_wave_at).

The mutant is equivalent when the block's effects (its stores, calls, load addresses and divisors,
whose change could be undefined behaviour even where no lane reads the result, for every lane of
every wave, and its terminator's condition) are the same nodes, and every value the block
defines is the same node in each lane where a later line can turn it into an effect (Demand): a
line runs in lane l only if every branch on the single-predecessor chain from the block to it is
taken in lane l, which is decided where the branch's condition folds to a constant (`icmp eq
%lane, 0` before a store); a phi reads along the edges its lanes take; a cross-lane read reads
every lane. Then nothing the kernel does downstream can differ.
"""
import re
import struct

import launch_equivalence

ASSIGN = re.compile(r"^\s*(%[\w.$-]+) = (.*)$")
NAME = re.compile(r"%[\w.$-]+")
PHI = re.compile(r"^phi ")
CALL = re.compile(r"^(?:tail )?call (.+?) @([\w.$]+)\((.*)\)(?: #\d+)?$")
BINARY = re.compile(r"^(add|sub|mul|and|or|xor|shl|lshr|ashr|udiv|sdiv|urem|srem)((?: \w+)*) (i\d+) (\S+), (\S+)$")
COMMUTATIVE = re.compile(r"^(fadd|fmul)((?: \w+)*) (float|half|bfloat|double) (\S+), (\S+)$")
ICMP = re.compile(r"^icmp (\w+) (i\d+) (\S+), (\S+)$")
SELECT = re.compile(r"^select i1 (\S+), (\S+) (\S+), (\S+) (\S+)$")
CAST = re.compile(r"^(zext|sext|trunc|bitcast)( nneg)? (\S+) (\S+) to (\S+)$")
BRANCH = re.compile(r"^\s*br i1 (\S+), label %([\w.$-]+), label %([\w.$-]+)$")
# The flags each integer op may carry; a fold checks every one (a broken promise is poison).
FLAGS = {"add": {"nsw", "nuw"}, "sub": {"nsw", "nuw"}, "mul": {"nsw", "nuw"}, "shl": {"nsw", "nuw"},
         "lshr": {"exact"}, "ashr": {"exact"}, "udiv": {"exact"}, "sdiv": {"exact"}, "or": {"disjoint"}}
DIVISIONS = ("udiv", "sdiv", "urem", "srem")
EFFECTS = ("store ", "fence ", "atomicrmw ", "cmpxchg ")
CROSS_LANE = ("llvm.amdgcn.update.dpp.", "llvm.amdgcn.ds.bpermute", "llvm.amdgcn.readfirstlane",
              "llvm.amdgcn.mfma.", "llvm.amdgcn.wmma.")
LANE_LOCAL = ("llvm.maxnum.", "llvm.minnum.", "llvm.fma.", "llvm.exp2.", "llvm.sqrt.", "llvm.fabs.",
              "llvm.amdgcn.workitem.id.", "llvm.amdgcn.workgroup.id.", "llvm.amdgcn.dispatch.ptr")
MAX_WAVES = 32


class Unknown(Exception):
    """A line the evaluator cannot judge exactly: the mutant stays a survivor."""


class Graph:
    """Hash-consed nodes: a node is an int, equal values are the same int."""

    def __init__(self):
        self.ids, self.parts = {}, []

    def node(self, *parts):
        found = self.ids.get(parts)
        if found is None:
            found = self.ids[parts] = len(self.parts)
            self.parts.append(parts)
        return found

    def const(self, type_, value):
        return self.node("const", type_, value)

    def constant(self, n):
        """(type, value) of a constant node, or None."""
        parts = self.parts[n]
        return parts[1:] if parts[0] == "const" else None


def int_bits(type_):
    return int(type_[1:]) if re.fullmatch(r"i\d+", type_) else None


def literal(graph, type_, token):
    """The constant node of an operand spelt as a literal, or None for a name."""
    if token.startswith("%"):
        return None
    if token.startswith("@"):
        return graph.node("global", token)
    width = int_bits(type_)
    if width is not None:
        if token in ("true", "false"):
            return graph.const(type_, int(token == "true"))
        if re.fullmatch(r"-?\d+", token):
            return graph.const(type_, int(token) % (1 << width))
    if type_ == "float":
        if re.fullmatch(r"0x[0-9A-Fa-f]{16}", token):
            return graph.const(type_, struct.unpack(">d", bytes.fromhex(token[2:]))[0])
        try:
            return graph.const(type_, float(token))
        except ValueError:
            pass
    return graph.node("literal", type_, token)  # poison, undef, a splat, a vector: opaque but fixed


def signed(value, width):
    return value - (1 << width) if value >> (width - 1) else value


def fold_binary(op, flags, width, a, b):
    """The exact result of an integer op on two constants; Unknown where a promise breaks (poison)."""
    mask, sa, sb = (1 << width) - 1, signed(a, width), signed(b, width)
    if set(flags) - FLAGS.get(op, set()):
        raise Unknown(f"{op} with flags {flags}")
    if "disjoint" in flags and a & b:
        raise Unknown("or disjoint of overlapping bits")
    if "exact" in flags and op in ("udiv", "sdiv") and b and (a % b if op == "udiv" else abs(sa) % abs(sb)):
        raise Unknown(f"{op} exact leaves a remainder")
    if op in ("udiv", "urem", "sdiv", "srem") and b == 0 or op in ("shl", "lshr", "ashr") and b >= width:
        raise Unknown(f"{op} by {b}")
    exact = {"add": (a + b, sa + sb), "sub": (a - b, sa - sb), "mul": (a * b, sa * sb)}
    if op in exact:
        unsigned_result, signed_result = exact[op]
        if "nuw" in flags and not 0 <= unsigned_result <= mask or \
                "nsw" in flags and not -(1 << (width - 1)) <= signed_result < (1 << (width - 1)):
            raise Unknown(f"{op} breaks its promise")
        return unsigned_result & mask
    if op == "shl":
        result = (a << b) & mask
        if "nuw" in flags and result >> b != a or "nsw" in flags and signed(result, width) >> b != sa:
            raise Unknown("shl breaks its promise")
        return result
    if op in ("lshr", "ashr") and "exact" in flags and a & ((1 << b) - 1):
        raise Unknown(f"{op} exact drops bits")
    simple = {"and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b, "lshr": lambda: a >> b,
              "ashr": lambda: (sa >> b) & mask, "udiv": lambda: a // b, "urem": lambda: a % b}
    if op in simple:
        return simple[op]()
    if sa == -(1 << (width - 1)) and sb == -1:
        raise Unknown(f"{op} overflows")
    quotient = abs(sa) // abs(sb) * (1 if (sa < 0) == (sb < 0) else -1)
    return (quotient if op == "sdiv" else sa - quotient * sb) & mask


def compare(pred, width, a, b):
    sa, sb = signed(a, width), signed(b, width)
    table = {"eq": a == b, "ne": a != b, "ult": a < b, "ule": a <= b, "ugt": a > b, "uge": a >= b,
             "slt": sa < sb, "sle": sa <= sb, "sgt": sa > sb, "sge": sa >= sb}
    if pred not in table:
        raise Unknown(f"icmp {pred}")
    return int(table[pred])


def split_args(text):
    """The comma-separated items of an argument list, commas inside brackets kept."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "(<[{"
        depth -= ch in ")>]}"
        if ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        items.append(text[start:].strip())
    return items


def phi_incoming(text):
    """[(value, predecessor block)] of a phi's text, a vector constant's commas kept."""
    found, depth, start = [], 0, None
    for i, ch in enumerate(text):
        if ch == "[" and depth == 0:
            start = i + 1
        depth += ch in "(<[{"
        depth -= ch in ")>]}"
        if ch == "]" and depth == 0 and start is not None:
            value, _, pred = text[start:i].rpartition(",")
            found.append((value.strip(), pred.strip().lstrip("%")))
            start = None
    return found


def typed(item):
    """(type, operand) of `i32 %x`, `float 0x...` or `ptr addrspace(3) @g`; any other item (a
    vector constant) is one literal of its whole text."""
    words = item.split()
    if len(words) == 2 or words[-1].startswith(("%", "@")):
        return words[0], words[-1]
    return "literal", item


class Function:
    """One function of a module text: its blocks' lines and where each name is defined."""

    def __init__(self, text, line=None, like=None):
        """The function that holds `line` (a 0-based index), or the one named as `like` is, at the
        block `like` changed."""
        self.lines = text.split("\n")
        owner = next(((name, f) for name, f in launch_equivalence.functions(text).items()
                      if line in f[2] or like and name == like.name and like.block in f[1]), None)
        if owner is None:
            raise Unknown("the line is in no function")
        self.name, (self.order, self.successors, block_of) = owner
        line = line if line is not None else next(i for i, b in sorted(block_of.items()) if b == like.block)
        self.blocks = {b: [] for b in self.order}
        for index, block in sorted(block_of.items()):
            if self.lines[index].strip():
                self.blocks[block].append(index)
        self.block = block_of[line]
        self.defined = {}
        for block in self.order:
            for index in self.blocks[block]:
                match = ASSIGN.match(self.lines[index])
                if match:
                    self.defined[match.group(1)] = (block, index)
        self.predecessors = {b: [p for p in self.order if b in self.successors[p]] for b in self.order}
        header = next(i for i in range(line, -1, -1) if self.lines[i].startswith("define "))
        self.arguments = set(NAME.findall(self.lines[header]))

    def body(self, block):
        return [self.lines[i].strip() for i in self.blocks[block]]

    def dominates(self, a, b):
        """True when every path from the entry to `b` passes `a`."""
        if not hasattr(self, "_dominators"):
            dom = {x: ({x} if x == self.order[0] else set(self.order)) for x in self.order}
            changed = True
            while changed:
                changed = False
                for x in self.order[1:]:
                    preds = [dom[p] for p in self.predecessors[x]]
                    new = (set.intersection(*preds) if preds else set()) | {x}
                    if new != dom[x]:
                        dom[x], changed = new, True
            self._dominators = dom
        return a in self._dominators[b]

    def header_phis(self, block):
        """[(name, type, entry value, entry block)] of the phis of a loop header."""
        found = []
        for index in self.blocks[block]:
            match = ASSIGN.match(self.lines[index])
            if not match or not PHI.match(match.group(2)):
                break
            for value, pred in phi_incoming(match.group(2)):
                if not self.dominates(block, pred):
                    found.append((match.group(1), match.group(2).split()[1], value, pred))
        return found


class Wave:
    """The per-lane values of one wave of one version of the module."""

    def __init__(self, graph, function, wave, wave_size, local, lone_axes=frozenset()):
        self.graph, self.f, self.wave, self.size = graph, function, wave, wave_size
        self.lone_axes = lone_axes  # the grid's axes of one workgroup at every launch: id 0 there
        self.local = local  # {name: [node per lane]} of the changed block, as evaluated
        self.outside = {}

    def value(self, type_, token, lane):
        constant = literal(self.graph, type_, token)
        if constant is not None:
            return constant
        if token in self.local:
            return self.local[token][lane]
        return self.resolve(token)[lane]

    def resolve(self, name):
        """The per-lane nodes of a value defined outside the changed block."""
        if name not in self.outside:
            if name in self.f.arguments:
                self.outside[name] = [self.graph.node("argument", name)] * self.size
            elif name not in self.f.defined:
                raise Unknown(f"{name} is defined nowhere")
            else:
                self.outside[name] = None  # a value that depends on itself is not judged
                block, index = self.f.defined[name]
                text = ASSIGN.match(self.f.lines[index]).group(2)
                self.outside[name] = (self.one_trip(name, block) if PHI.match(text)
                                      else self.lanes(name, text, effects=None))
        if self.outside[name] is None:
            raise Unknown(f"{name} depends on itself")
        return self.outside[name]

    def one_trip(self, name, block):
        """A loop header's phi: its entry value in each lane whose first trip leaves the loop (the
        latch's condition folds to the exit with every phi of the header at its entry value), so
        the header is never entered again; else a leaf of its own."""
        leaves = [self.graph.node("leaf", name, self.wave, lane) for lane in range(self.size)]
        latches = [p for p in self.f.predecessors[block] if self.f.dominates(block, p)]
        phis = self.f.header_phis(block)
        entries = {p for _, _, _, p in phis}
        if len(latches) != 1 or len(entries) != 1 or self.f.predecessors[block] != sorted(
                latches + list(entries), key=self.f.order.index):
            return leaves
        branch = BRANCH.match(self.f.lines[self.f.blocks[latches[0]][-1]])
        if not branch or block not in branch.group(2, 3) or branch.group(2) == branch.group(3) or \
                name not in {phi for phi, _, _, _ in phis}:
            return leaves
        first = {phi: [self.value(type_, value, lane) for lane in range(self.size)] for phi, type_, value, _ in phis}
        trial = Wave(self.graph, self.f, self.wave, self.size, first, self.lone_axes)
        stays = branch.group(2) == block
        out = []
        for lane in range(self.size):
            again = self.graph.constant(trial.value("i1", branch.group(1), lane))
            out.append(first[name][lane] if again is not None and bool(again[1]) != stays else leaves[lane])
        return out

    def lanes(self, name, text, effects):
        """Every lane's node of the instruction `name = text` (effects: a list the block's effects
        are appended to, or None outside it, where a load or a phi is a leaf of its own)."""
        if PHI.match(text) or text.startswith("load ") and effects is None:
            return [self.graph.node("leaf", name, self.wave, lane) for lane in range(self.size)]
        call = CALL.match(text)
        if call:
            return self.call(name, call, effects)
        return [self.lane_local(name, text, lane, effects) for lane in range(self.size)]

    def lane_local(self, name, text, lane, effects):
        g = self.graph
        match = BINARY.match(text)
        if match:
            op, flags, type_, a, b = match.groups()
            x, y = self.value(type_, a, lane), self.value(type_, b, lane)
            if op in DIVISIONS and effects is not None:
                effects.append(g.node("divisor", name, lane, y))  # a zero divisor is undefined behaviour
            cx, cy = g.constant(x), g.constant(y)
            if cx and cy:
                return g.const(type_, fold_binary(op, flags.split(), int_bits(type_), cx[1], cy[1]))
            return g.node(op, flags, type_, x, y)
        match = ICMP.match(text)
        if match:
            pred, type_, a, b = match.groups()
            x, y = self.value(type_, a, lane), self.value(type_, b, lane)
            cx, cy = g.constant(x), g.constant(y)
            if cx and cy and int_bits(type_):
                return g.const("i1", compare(pred, int_bits(type_), cx[1], cy[1]))
            return g.node("icmp", pred, type_, x, y)
        match = SELECT.match(text)
        if match:
            c, ta, a, tb, b = match.groups()
            condition = g.constant(self.value("i1", c, lane))
            if condition:
                return self.value(ta, a, lane) if condition[1] else self.value(tb, b, lane)
            return g.node("select", self.value("i1", c, lane), self.value(ta, a, lane), self.value(tb, b, lane))
        match = CAST.match(text)
        if match:
            return self.cast(*match.groups(), lane)
        if text.startswith("load "):  # in the changed block: memory is the same while its stores are
            address = self.value(*typed(split_args(text[5:])[1]), lane)
            effects.append(g.node("address", name, lane, address))  # a load out of bounds is undefined behaviour
            return g.node("load", name, self.wave, lane, address)
        match = COMMUTATIVE.match(text)
        if match:  # a + b is b + a (LLVM leaves a NaN's payload open)
            op, flags, type_, a, b = match.groups()
            pair = sorted((self.value(type_, a, lane), self.value(type_, b, lane)))
            return g.node(op, flags, type_, *pair)
        # any other pure instruction: a node of its text and its operands' nodes
        operands = NAME.findall(text)
        shape = NAME.sub("%", text)
        return g.node("op", shape, tuple(self.value("?", o, lane) for o in operands))

    def cast(self, op, nneg, from_type, token, to_type, lane):
        g = self.graph
        x = self.value(from_type, token, lane)
        if nneg and g.constant(x) and int_bits(from_type) and g.constant(x)[1] >> (int_bits(from_type) - 1):
            raise Unknown("zext nneg of a negative value")  # poison
        if nneg and not g.constant(x):
            return g.node(op + " nneg", from_type, to_type, x)
        c = g.constant(x)
        parts = g.parts[x]
        if op == "bitcast":
            if parts[0] == "bitcast" and parts[1] == to_type:  # the inverse of the bitcast that made x
                return parts[3]
            if c and {from_type, to_type} == {"float", "i32"}:  # a NaN's payload is not folded
                if from_type == "float" and c[1] == c[1]:
                    return g.const("i32", struct.unpack("<I", struct.pack("<f", c[1]))[0])
                number = struct.unpack("<f", struct.pack("<I", c[1]))[0] if from_type == "i32" else None
                if number is not None and number == number:
                    return g.const("float", number)
            return g.node("bitcast", from_type, to_type, x)
        if c and int_bits(from_type) and int_bits(to_type):
            wide, narrow = int_bits(from_type), int_bits(to_type)
            if op == "trunc":
                return g.const(to_type, c[1] & ((1 << narrow) - 1))
            if op == "sext":
                return g.const(to_type, signed(c[1], wide) % (1 << narrow))
            return g.const(to_type, c[1])
        return g.node(op, from_type, to_type, x)

    def call(self, name, match, effects):
        g = self.graph
        _, callee, args = match.groups()
        items = [typed(item) for item in split_args(args)]
        if callee.startswith("llvm.amdgcn.workitem.id."):
            axis = "xyz".index(callee[-1])
            return [g.const("i32", self.wave * self.size + lane if axis == 0 else 0) for lane in range(self.size)]
        if callee.startswith("llvm.amdgcn.workgroup.id.") and "xyz".index(callee[-1]) in self.lone_axes:
            return [g.const("i32", 0)] * self.size
        if callee.startswith(("llvm.amdgcn.workgroup.id.", "llvm.amdgcn.dispatch.ptr")):
            return [g.node("argument", callee)] * self.size
        values = [[self.value(t, o, lane) for t, o in items] for lane in range(self.size)]
        if callee.startswith("llvm.amdgcn.update.dpp."):
            return self.dpp(values)
        if callee == "llvm.amdgcn.ds.bpermute":
            return self.bpermute(values)
        if callee.startswith(("llvm.maxnum.", "llvm.minnum.")):
            return [self.min_max(callee, *v) for v in values]
        if callee.startswith(LANE_LOCAL):
            return [g.node("call", callee, tuple(v)) for v in values]
        # anything else may read every lane and have effects: one node of the whole wave's operands
        whole = g.node("call", callee, tuple(tuple(v) for v in values))
        if effects is not None:
            effects.append(whole)  # a barrier, an atomic: compared like a store
        elif not callee.startswith("llvm.amdgcn."):
            raise Unknown(f"a call of @{callee} outside the block")
        return [g.node("lane", whole, lane) for lane in range(self.size)]

    def min_max(self, callee, x, y):
        """maxnum / minnum as the set of its leaves: LLVM lets either of two equal operands be the
        result (+0 or -0) and leaves a NaN's payload open, so their order and repeats do not
        change what a result may be."""
        g = self.graph
        kind = "max" if callee.startswith("llvm.maxnum.") else "min"
        leaves = set()
        for n in (x, y):
            parts = g.parts[n]
            leaves.update(parts[2] if parts[0] == kind and parts[1] == callee else (n,))
        if len(leaves) == 1:
            return x
        return g.node(kind, callee, tuple(sorted(leaves)))

    def dpp(self, values):
        g = self.graph
        controls = [g.constant(v) for v in values[0][2:6]]
        if None in controls:
            raise Unknown("a DPP control that is not a constant")
        control, row_mask, bank_mask, bound_ctrl = (c[1] for c in controls)
        out = []
        for lane in range(self.size):
            source = dpp_source(control, lane)
            enabled = row_mask >> ((lane >> 4) & 3) & 1 and bank_mask >> ((lane >> 2) & 3) & 1
            if not enabled:
                out.append(values[lane][0])
            elif 0 <= source < self.size:
                out.append(values[source][1])
            else:
                out.append(g.const("i32", 0) if bound_ctrl else values[lane][0])
        return out

    def bpermute(self, values):
        g = self.graph
        out = []
        for lane in range(self.size):
            address = g.constant(values[lane][0])
            if address is None:
                raise Unknown("a bpermute address that depends on data")
            out.append(values[(address[1] >> 2) & (self.size - 1)][1])
        return out


def dpp_source(control, lane):
    """The lane a DPP control reads for `lane` (-1: none, out of the row); the executor's table."""
    row, in_row = lane & ~15, lane & 15
    if control <= 0xFF:
        return (lane & ~3) | ((control >> (2 * (lane & 3))) & 3)
    if 0x101 <= control <= 0x10F:
        return row + in_row + (control & 15) if in_row + (control & 15) < 16 else -1
    if 0x111 <= control <= 0x11F:
        return row + in_row - (control & 15) if in_row >= (control & 15) else -1
    if 0x121 <= control <= 0x12F:
        return row + ((in_row - (control & 15)) & 15)
    if control == 0x140:
        return row + 15 - in_row
    if control == 0x141:
        return row + (in_row & 8) + 7 - (in_row & 7)
    raise Unknown(f"DPP control {control:#x} is not modelled")


def evaluate_block(graph, function, wave, wave_size, lone_axes=frozenset()):
    """(the Wave with the block's values, [the block's effects]) of one wave."""
    state, effects = Wave(graph, function, wave, wave_size, {}, lone_axes), []
    for text in function.body(function.block):
        match = ASSIGN.match(text)
        if match:
            name, rest = match.groups()
            if rest.startswith(("atomicrmw ", "cmpxchg ")):
                raise Unknown(f"an atomic: {text}")
            if PHI.match(rest):
                state.local[name] = state.one_trip(name, function.block)
            else:
                state.local[name] = state.lanes(name, rest, effects)
            continue
        if text.startswith(EFFECTS):
            operands, shape = NAME.findall(text), NAME.sub("%", text)
            for lane in range(wave_size):
                effects.append(graph.node("effect", shape, lane, tuple(state.value("?", o, lane) for o in operands)))
        elif text.startswith(("call ", "tail call ")):
            state.call(None, CALL.match(text), effects)
        elif text.startswith("br i1 "):
            condition = text.split()[2].rstrip(",")
            effects.append(graph.node("branch", tuple(state.value("i1", condition, lane) for lane in range(wave_size))))
        elif not text.startswith(("br label", "ret ")):
            raise Unknown(f"a line the evaluator does not know: {text}")
    return state, effects


class Demand:
    """The lanes where a value can change what the kernel does: where a line that uses it has an
    effect (a store, a load's address, a divisor, a branch, any call but a pure one), and, through
    a pure line's result, where that result can; a cross-lane line's every lane; a phi's, along the
    edges its lanes take. Outside the changed block; a use found again on its own path (a loop's
    carried value) is taken as every lane."""

    def __init__(self, function, states):
        self.f, self.states, self.memo = function, states, {}
        self.everyone = set(range(states[0].size))
        self.uses = {}
        for block in function.order:
            for index in function.blocks[block]:
                for name in set(NAME.findall(function.lines[index].strip().split("=", 1)[-1])):
                    self.uses.setdefault(name, []).append((block, index))

    def of_value(self, name):
        """The lanes where the value `name` (defined outside the changed block) matters."""
        if name in self.memo:
            return self.everyone if self.memo[name] is None else self.memo[name]
        self.memo[name] = None
        lanes = set()
        for block, index in self.uses.get(name, ()):
            text = self.f.lines[index].strip()
            if block == self.f.block and not PHI.match(text.split("= ", 1)[-1]):
                lanes |= self.everyone  # read again by the changed block itself: every lane, to be safe
            else:
                lanes |= self.of_use(name, block, text)
        self.memo[name] = lanes
        return lanes

    def of_use(self, name, block, text):
        """The lanes where `name` matters through the line `text` of `block`."""
        match = ASSIGN.match(text)
        rest = match.group(2) if match else text
        if PHI.match(rest):
            result = self.of_value(match.group(1))
            lanes = set()
            for value, pred in phi_incoming(rest):
                if value == name:
                    lanes |= edge_lanes(self.f, self.states, pred, block, running_lanes(self.f, self.states, pred)) & result
            return lanes
        running = running_lanes(self.f, self.states, block)
        call = CALL.match(rest)
        pure_call = call and call.group(2).startswith(LANE_LOCAL)
        effect = (not match or rest.startswith(("load ", "atomicrmw ", "cmpxchg ")) or rest.split(" ", 1)[0] in DIVISIONS
                  or (call and not pure_call and not call.group(2).startswith(CROSS_LANE)))
        if effect:
            return self.everyone if call else running
        if call and not pure_call:  # a cross-lane read: every lane it reads, if its result matters
            return self.everyone if self.of_value(match.group(1)) else set()
        return self.of_value(match.group(1)) & running


def reads(function):
    """[(name, block, text)] of every value the changed block defines and a line outside it reads
    (a phi of the changed block reads along the edge from its predecessor)."""
    defined = {n for n, (b, _) in function.defined.items() if b == function.block}
    found = []
    for block in function.order:
        for index in function.blocks[block]:
            text = function.lines[index].strip()
            match = ASSIGN.match(text)
            rest = match.group(2) if match else text
            if block != function.block or PHI.match(rest):
                found.extend((name, block, text) for name in sorted(set(NAME.findall(rest)) & defined))
    return found


def edge_lanes(function, states, pred, target, above):
    """The lanes of `above` (lanes that run `pred`) that can take the edge from `pred` to `target`:
    all of them, unless `pred` ends in a branch whose condition folds to a constant, the same in
    both versions, in every one of them."""
    branch = BRANCH.match(function.lines[function.blocks[pred][-1]])
    if not branch or branch.group(2) == branch.group(3):
        return above
    taken, chosen = target == branch.group(2), set()
    for lane in above:
        values = [s.graph.constant(s.value("i1", branch.group(1), lane)) for s in states]
        if None in values or values[0] != values[1]:
            return above
        if bool(values[0][1]) == taken:
            chosen.add(lane)
    return chosen


def running_lanes(function, states, block, depth=0):
    """The lanes that can run `block` (a superset): the branches on its single-predecessor chain
    up to the changed block, where their conditions fold to constants the same in both versions."""
    everyone = set(range(states[0].size))
    if block == function.block or depth > 64:
        return everyone
    preds = function.predecessors[block]
    if len(preds) != 1:
        return everyone
    return edge_lanes(function, states, preds[0], block, running_lanes(function, states, preds[0], depth + 1))


def same_where_read(original, mutated, line, blocks, wave_size, flavor, arch, lone=None):
    """The reason the mutated block cannot change a result at any launch the plan allows, or None.
    `line` is the 0-based index of the changed line in `mutated`; `lone`: {kernel: the grid axes of
    one workgroup at every launch} (launch_equivalence.plan_lone_axes)."""
    try:
        changed = Function(mutated, line)
        functions = Function(original, like=changed), changed
        sizes = blocks.get(changed.name, set())
        lone_axes = frozenset((lone or {}).get(changed.name, ()))
        if not wave_size or len(sizes) != 1:
            return None
        block_size = next(iter(sizes))
        if block_size % wave_size or block_size // wave_size > MAX_WAVES:
            return None
        if not _same_outside(*functions):
            return None
        graph = Graph()
        lanes_read = 0
        for wave in range(block_size // wave_size):
            evaluated = [evaluate_block(graph, f, wave, wave_size, lone_axes) for f in functions]
            if evaluated[0][1] != evaluated[1][1]:
                return None
            states = [e[0] for e in evaluated]
            demand = Demand(functions[0], states)
            for name, block, text in reads(functions[0]):
                for lane in sorted(demand.of_use(name, block, text)):
                    if states[0].value("?", name, lane) != states[1].value("?", name, lane):
                        return None
                    lanes_read += 1
    except (Unknown, RecursionError):
        return None
    if not launch_equivalence.full_wave_at(mutated, line, blocks, wave_size, flavor, arch):
        return None
    return (f"evaluated lane by lane in each of the {block_size // wave_size} wave(s) of a workgroup of "
            f"{block_size}: the changed block's effects are the same, and every value it gives is the same "
            f"expression of the same inputs in each lane that reads it ({lanes_read} lane reads); "
            f"{flavor}'s uniformity analysis puts the block under no divergent branch"
            + (f"; the workgroup id is 0 on {', '.join('xyz'[a] for a in sorted(lone_axes))}, where every launch "
               "has one workgroup" if lone_axes else ""))


def _same_outside(original, mutated):
    """True when the two functions differ only inside the changed block."""
    if original.order != mutated.order or original.block != mutated.block:
        return False
    return all(original.body(b) == mutated.body(b) for b in original.order if b != original.block)


def first_difference(original, mutated):
    """The 0-based index in `mutated` of its first line that differs from `original`, or None
    when the texts are the same."""
    if original == mutated:
        return None
    old, new = original.split("\n"), mutated.split("\n")
    return next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)) - 1)

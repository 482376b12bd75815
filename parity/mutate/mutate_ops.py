"""The mutation operators of kemit_mutate (docs/mutation.md).

Each operator reads one line of a section's text (the canonical IR, or one flavor's LLVM module)
and proposes the lines that replace it: an empty list deletes the line (a dropped store, a removed
barrier), two lines insert a helper value before the mutated one (a moved address, a changed
bpermute lane). Every operator is local to one line, so a mutant is named by its section, its
operator and the index of the site among that operator's sites in the text (`k`), and the same
name applied to the text of a smaller spec lands on the site of the same rank (k mod the number of
sites there).

The two spellings differ (docs/ir.md, docs/flavors.md): the canonical text writes flags as sorted
attributes (`add %1, %2 {nsw, nuw} : i32`) and constants as ops of their own
(`%5 = const {value=63} : i32`); an LLVM module writes flags after the opcode
(`add nuw nsw i32 %a, %b`) and constants inline.
"""
import re

CANONICAL = "canonical"
LLVM = "llvm"

# Non-commutative binary ops, by spelling; icmp/fcmp keep their predicate when swapped.
CANON_NONCOMMUTATIVE = ("sub", "udiv", "urem", "shl", "lshr", "fsub", "fdiv", "icmp", "fcmp")
LLVM_NONCOMMUTATIVE = ("sub", "udiv", "urem", "sdiv", "srem", "shl", "lshr", "ashr", "fsub", "fdiv",
                       "icmp", "fcmp")
# A weaker and a stronger predicate, both ways.
PREDICATE_PAIRS = {"slt": "sle", "sle": "slt", "sgt": "sge", "sge": "sgt", "ult": "ule", "ule": "ult",
                   "ugt": "uge", "uge": "ugt", "olt": "ole", "ole": "olt", "ogt": "oge", "oge": "ogt"}
CANON_FLAG_OPS = ("add", "sub", "mul", "shl")
LLVM_WRAP_OPS = ("add", "sub", "mul", "shl")
LLVM_EXACT_OPS = ("lshr", "ashr", "udiv", "sdiv")

CANON_OP = re.compile(r"^(\s*)(%\d+ = )(\w+)(.*)$")
CANON_ATTRS = re.compile(r" \{([^{}]*)\}")
LLVM_DEF = re.compile(r"^(\s*)(%[\w.]+) = (\w+)((?: (?:nuw|nsw|exact))*) (.*)$")
# An LLVM operand that contains no comma: a value, a literal, or a splat constant.
SIMPLE = r"(?:%[\w.]+|-?\d+|0x[0-9A-Fa-f]+|[-+\w.]+|splat \([^()]*\)|true|false|poison|zeroinitializer)"
LLVM_TYPE = r"(?:i\d+|half|bfloat|float|double|ptr(?: addrspace\(\d+\))?|<\d+ x (?:i\d+|half|bfloat|float|ptr(?: addrspace\(\d+\))?)>)"


def _canon_attrs(rest):
    """(text before the attributes, the attribute items, text after) of a canonical op's tail."""
    match = CANON_ATTRS.search(rest)
    if not match:
        head, _, tail = rest.partition(" : ")
        return head, [], (" : " + tail) if tail else ""
    items = [item.strip() for item in match.group(1).split(",") if item.strip()]
    return rest[:match.start()], items, rest[match.end():]


def _canon_with_attrs(indent, define, name, head, items, tail):
    attrs = " {" + ", ".join(sorted(items)) + "}" if items else ""
    return f"{indent}{define}{name}{head}{attrs}{tail}"


# ---- the operators: each takes (kind, line) and returns a list of replacements (lists of lines) ----

def _flag_variants(kind, line, adding):
    """The line with one wrap or exact flag added (adding) or dropped (not adding), each way once."""
    out = []
    if kind == CANONICAL:
        match = CANON_OP.match(line)
        if not match or match.group(3) not in CANON_FLAG_OPS:
            return out
        indent, define, name, rest = match.groups()
        head, items, tail = _canon_attrs(rest)
        for flag in ("nsw", "nuw"):
            if (flag in items) != adding:
                changed = items + [flag] if adding else [i for i in items if i != flag]
                out.append([_canon_with_attrs(indent, define, name, head, changed, tail)])
        return out
    match = LLVM_DEF.match(line)
    if not match:
        return out
    indent, value, opcode, flags, rest = match.groups()
    present = flags.split()
    wanted = ("nuw", "nsw") if opcode in LLVM_WRAP_OPS else ("exact",) if opcode in LLVM_EXACT_OPS else ()
    for flag in (wanted if adding else present):
        if (flag in present) != adding:
            changed = [f for f in ("exact", "nuw", "nsw") if (f in present or f == flag) and (adding or f != flag)]
            out.append([f"{indent}{value} = {opcode}{''.join(' ' + f for f in changed)} {rest}"])
    return out


def flag_add(kind, line):
    """Add an `nsw` or `nuw` flag (and, in LLVM, `exact` to a shift right or a division)."""
    return _flag_variants(kind, line, adding=True)


def flag_drop(kind, line):
    """Drop an `nsw`, `nuw` or `exact` flag the op carries."""
    return _flag_variants(kind, line, adding=False)


LLVM_INT_LITERAL = re.compile(r"(?<=[ ,\[])(-?\d+)(?=,|\s|\]|$)")


def _llvm_literal_sites(line):
    """The spans of integer literals that are operands of a non-call instruction of an LLVM line."""
    stripped = line.lstrip()
    if not (stripped.startswith("%") or stripped.startswith("store ")) or " call " in line or "@" in line:
        return []
    spans = []
    for match in LLVM_INT_LITERAL.finditer(line):
        before = line[:match.start()]
        if before.endswith("align ") or line[match.end():].startswith(" x "):
            continue
        spans.append(match.span())
    return spans


def const_step(delta):
    def operator(kind, line):
        out = []
        if kind == CANONICAL:
            match = re.match(r"^(.*= const \{value=)(-?\d+)(\}.*)$", line)
            if match:
                out.append([f"{match.group(1)}{int(match.group(2)) + delta}{match.group(3)}"])
            return out
        for start, end in _llvm_literal_sites(line):
            out.append([line[:start] + str(int(line[start:end]) + delta) + line[end:]])
        return out
    operator.__doc__ = f"A constant {'+1' if delta > 0 else '-1'}: an integer constant op, or an integer literal operand."
    return operator


def swap_operands(kind, line):
    """Swap the two operands of a non-commutative op (sub, shifts, divisions, fsub, fdiv, and the
    compares but eq and ne, whose operands commute)."""
    if kind == CANONICAL:
        match = re.match(r"^(\s*%\d+ = (\w+) )(%\d+), (%\d+)((?: \{.*\})? : .*)$", line)
        if match and match.group(2) in CANON_NONCOMMUTATIVE and match.group(3) != match.group(4) \
                and not re.search(r"\{pred=(?:eq|ne|oeq|one)\}", line):
            return [[f"{match.group(1)}{match.group(4)}, {match.group(3)}{match.group(5)}"]]
        return []
    match = re.match(rf"^(\s*%[\w.]+ = (\w+)((?: \w+)*) {LLVM_TYPE} )({SIMPLE}), ({SIMPLE})$", line)
    if match and match.group(2) in LLVM_NONCOMMUTATIVE and match.group(4) != match.group(5) \
            and not set(match.group(3).split()) & {"eq", "ne", "oeq", "one"}:
        return [[f"{match.group(1)}{match.group(5)}, {match.group(4)}"]]
    return []


def swap_select(kind, line):
    """Swap a select's two arms."""
    if kind == CANONICAL:
        match = re.match(r"^(\s*%\d+ = select %\d+, )(%\d+), (%\d+)( : .*)$", line)
        if match and match.group(2) != match.group(3):
            return [[f"{match.group(1)}{match.group(3)}, {match.group(2)}{match.group(4)}"]]
        return []
    match = re.match(rf"^(\s*%[\w.]+ = select (?:i1|<\d+ x i1>) {SIMPLE}, )({LLVM_TYPE} {SIMPLE}), ({LLVM_TYPE} {SIMPLE})$", line)
    if match and match.group(2) != match.group(3):
        return [[f"{match.group(1)}{match.group(3)}, {match.group(2)}"]]
    return []


def icmp_predicate(kind, line):
    """Weaken or strengthen a compare's predicate: slt <-> sle, ugt <-> uge, olt <-> ole, ..."""
    if kind == CANONICAL:
        match = re.match(r"^(.*= [if]cmp .*\{pred=)(\w+)(\}.*)$", line)
    else:
        match = re.match(r"^(\s*%[\w.]+ = [if]cmp )(\w+)( .*)$", line)
    if match and match.group(2) in PREDICATE_PAIRS:
        return [[f"{match.group(1)}{PREDICATE_PAIRS[match.group(2)]}{match.group(3)}"]]
    return []


def remove_barrier(kind, line):
    """Remove a barrier (canonical `barrier`; LLVM `llvm.amdgcn.s.barrier`, its fences kept)."""
    if kind == CANONICAL:
        return [[]] if line.strip() == "barrier" else []
    return [[]] if line.strip() == "call void @llvm.amdgcn.s.barrier()" else []


def remove_fence(kind, line):
    """Remove a fence (LLVM only: the canonical barrier carries its fences)."""
    return [[]] if kind == LLVM and line.strip().startswith("fence ") else []


def _dpp_ctrl_changed(ctrl):
    """The DPP control of the same class one step away (row_shr/row_ror n -> n+1, or n-1 at 15;
    a quad_perm whose first lane reads itself)."""
    if 0x111 <= ctrl <= 0x11F or 0x121 <= ctrl <= 0x12F:
        return ctrl + 1 if (ctrl & 0xF) < 0xF else ctrl - 1
    if 0 <= ctrl <= 255:
        # Lane 0 of each quad reads itself (or lane 1 when it already did): a neighbouring
        # selector may name a lane that holds the same value after an earlier butterfly step.
        return (ctrl & ~3) | (1 if ctrl & 3 == 0 else 0)
    return None


DPP_CALL = re.compile(r"^(.*@llvm\.amdgcn\.update\.dpp\.i32\(i32 [^,]+, i32 [^,]+, i32 )(\d+)(, i32 )(\d+)(, i32 )(\d+)(, i1 )(true|false)(\).*)$")


def dpp_ctrl(kind, line):
    """Change a DPP control to its neighbour of the same class (row_shr:1 -> row_shr:2, ...)."""
    if kind == CANONICAL:
        match = re.match(r"^(.*= update_dpp .*\{ctrl=)(\d+)(\}.*)$", line)
        if match and _dpp_ctrl_changed(int(match.group(2))) is not None:
            return [[f"{match.group(1)}{_dpp_ctrl_changed(int(match.group(2)))}{match.group(3)}"]]
        return []
    match = DPP_CALL.match(line)
    if match and _dpp_ctrl_changed(int(match.group(2))) is not None:
        groups = list(match.groups())
        groups[1] = str(_dpp_ctrl_changed(int(groups[1])))
        return [["".join(groups)]]
    return []


def dpp_row_mask(kind, line):
    """Clear row 0 of a DPP row mask (LLVM only: the canonical op writes every row): row 0 keeps old."""
    match = DPP_CALL.match(line) if kind == LLVM else None
    if match and int(match.group(4)) & 1:
        groups = list(match.groups())
        groups[3] = str(int(groups[3]) & ~1)
        return [["".join(groups)]]
    return []


def dpp_bound_ctrl(kind, line):
    """Flip a DPP bound_ctrl (LLVM only: the canonical op has it off): no source lane reads 0."""
    match = DPP_CALL.match(line) if kind == LLVM else None
    if match:
        groups = list(match.groups())
        groups[7] = "true" if groups[7] == "false" else "false"
        return [["".join(groups)]]
    return []


BPERMUTE_CALL = re.compile(r"^(\s*)(%[\w.]+)( = call i32 @llvm\.amdgcn\.ds\.bpermute\(i32 )(%[\w.]+)(, .*)$")


def bpermute_lane(kind, line):
    """Read the next lane in a bpermute (LLVM only: the address + 4; the canonical text has no room
    for the new value without renumbering every value after it)."""
    match = BPERMUTE_CALL.match(line) if kind == LLVM else None
    if not match:
        return []
    indent, value, call, address, rest = match.groups()
    moved = f"{value}.mutlane"
    return [[f"{indent}{moved} = add i32 {address}, 4", f"{indent}{value}{call}{moved}{rest}"]]


def _split_args(text):
    """Top-level comma-separated arguments of a call's argument list."""
    args, depth, current = [], 0, ""
    for char in text:
        if char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        if char == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        args.append(current.strip())
    return args


def swap_mma(kind, line):
    """Swap the A and B operands of an MFMA / WMMA."""
    if kind == CANONICAL:
        match = re.match(r"^(\s*%\d+ = mma )(%\d+), (%\d+)(, %\d+ \{.*)$", line)
        if match and match.group(2) != match.group(3):
            return [[f"{match.group(1)}{match.group(3)}, {match.group(2)}{match.group(4)}"]]
        return []
    match = re.match(r"^(.*@llvm\.amdgcn\.(?:mfma|wmma)[\w.]*\()(.*)(\).*)$", line)
    if not match:
        return []
    args = _split_args(match.group(2))
    types = [arg.rsplit(" ", 1)[0] for arg in args]
    first = next((i for i, t in enumerate(types) if t != "i1"), None)
    if first is None:
        return []
    second = next((i for i in range(first + 1, len(args)) if types[i] == types[first]), None)
    if second is None or args[first] == args[second]:
        return []
    args[first], args[second] = args[second], args[first]
    return [[f"{match.group(1)}{', '.join(args)}{match.group(3)}"]]


def drop_store(kind, line):
    """Drop a store."""
    stripped = line.strip()
    if kind == CANONICAL:
        return [[]] if stripped.startswith("store ") else []
    return [[]] if stripped.startswith("store ") else []


CANON_ATOMIC = re.compile(r"^(\s*)(%\d+) = atomic_\w+ (%\d+), %\d+ \{align=(\d+)[^{}]*\} : (\S+)$")
LLVM_ATOMIC = re.compile(r"^(\s*)(%[\w.]+) = atomicrmw \w+ (ptr(?: addrspace\(\d+\))? [%@][\w.]+), (\S+) \S+ .*, align (\d+)$")


def drop_atomic(kind, line):
    """A lost atomic: the read-modify-write becomes a plain load of the same address, so the value
    it returns is still defined but the update never happens."""
    if kind == CANONICAL:
        match = CANON_ATOMIC.match(line)
        if not match:
            return []
        indent, result, pointer, align, value_type = match.groups()
        return [[f"{indent}{result} = load {pointer} {{align={align}}} : {value_type}"]]
    match = LLVM_ATOMIC.match(line)
    if not match:
        return []
    indent, result, pointer, value_type, align = match.groups()
    return [[f"{indent}{result} = load {value_type}, {pointer}, align {align}"]]


LLVM_ACCESS = re.compile(rf"^(\s*)((?:%[\w.]+ = )?(?:load|store) )(.*?)(ptr addrspace\(([13])\)) (%[\w.]+)(, align \d+.*)$")


def move_address(kind, line):
    """Move a global or LDS access by one element of the accessed type (LLVM only, as bpermute_lane:
    the new address is a value of its own)."""
    match = LLVM_ACCESS.match(line) if kind == LLVM else None
    if not match:
        return []
    indent, opening, middle, pointer, _space, address, rest = match.groups()
    if opening.strip().startswith("store"):
        accessed = re.match(rf"^({LLVM_TYPE}) ", middle)
    else:
        accessed = re.match(rf"^({LLVM_TYPE}), $", middle)
    if not accessed:
        return []
    moved = f"{address}.mutaddr" if not address[1:].isdigit() else f"%mutaddr{address[1:]}"
    return [[f"{indent}{moved} = getelementptr {accessed.group(1)}, {pointer} {address}, i64 1",
             f"{indent}{opening}{middle}{pointer} {moved}{rest}"]]


def drop_factor(kind, line):
    """Leave a factor out: a scalar fmul's second operand becomes 1.0, so the product is its first
    operand (a scale, a weight, a reciprocal forgotten; LLVM only, as move_address: the canonical
    text has no literal operands)."""
    match = re.match(rf"^(\s*%[\w.]+ = fmul(?: \w+)* (?:half|bfloat|float|double) {SIMPLE}, )({SIMPLE})$", line) \
        if kind == LLVM else None
    if not match or match.group(2) in ("1.0", "0x3FF0000000000000"):
        return []
    return [[f"{match.group(1)}1.0"]]


OPERATORS = {
    "flag_add": flag_add,
    "flag_drop": flag_drop,
    "const_inc": const_step(+1),
    "const_dec": const_step(-1),
    "swap_operands": swap_operands,
    "swap_select": swap_select,
    "icmp_predicate": icmp_predicate,
    "remove_barrier": remove_barrier,
    "remove_fence": remove_fence,
    "dpp_ctrl": dpp_ctrl,
    "dpp_row_mask": dpp_row_mask,
    "dpp_bound_ctrl": dpp_bound_ctrl,
    "bpermute_lane": bpermute_lane,
    "swap_mma": swap_mma,
    "drop_store": drop_store,
    "drop_atomic": drop_atomic,
    "move_address": move_address,
    "drop_factor": drop_factor,
}


# A cheap test a line must pass before an operator reads it (most lines of a kernel are none of
# these ops): counting every config's sites reads about a hundred million lines otherwise.
PREFILTER = {
    "flag_add": re.compile(r"\b(?:add|sub|mul|shl|lshr|ashr|udiv|sdiv)\b"),
    "flag_drop": re.compile(r"\b(?:add|sub|mul|shl|lshr|ashr|udiv|sdiv)\b"),
    "const_inc": re.compile(r"\d"),
    "const_dec": re.compile(r"\d"),
    "swap_operands": re.compile(r"\b(?:sub|udiv|urem|sdiv|srem|shl|lshr|ashr|fsub|fdiv|icmp|fcmp)\b"),
    "swap_select": re.compile(r"\bselect\b"),
    "icmp_predicate": re.compile(r"cmp\b"),
    "remove_barrier": re.compile(r"barrier"),
    "remove_fence": re.compile(r"^\s*fence "),
    "dpp_ctrl": re.compile(r"update"),
    "dpp_row_mask": re.compile(r"update\.dpp"),
    "dpp_bound_ctrl": re.compile(r"update\.dpp"),
    "bpermute_lane": re.compile(r"ds\.bpermute"),
    "swap_mma": re.compile(r"mma|mfma"),
    "drop_store": re.compile(r"^\s*store "),
    "drop_atomic": re.compile(r"= atomic"),
    "move_address": re.compile(r"\b(?:load|store)\b"),
    "drop_factor": re.compile(r"= fmul "),
}


def section_kind(section):
    return CANONICAL if section == CANONICAL else LLVM


def sites(section, text, operator):
    """Every site of `operator` in `text`, in order: (line index, replacement lines)."""
    kind, found, test = section_kind(section), [], PREFILTER[operator].search
    for index, line in enumerate(text.split("\n")):
        if not test(line):
            continue
        for replacement in OPERATORS[operator](kind, line):
            found.append((index, replacement))
    return found


def count_sites(section, text):
    """{operator: number of sites} for every operator of `text`."""
    return {name: len(sites(section, text, name)) for name in OPERATORS}


WORKGROUP_SIZE = re.compile(r'(?:attr flat_work_group_size |"amdgpu-flat-work-group-size"=")\d+,(\d+)')


def largest_workgroup(text):
    """The largest workgroup any kernel of a text (canonical or LLVM) admits, by its flat workgroup
    size attribute, or None when a kernel states none."""
    sizes = [int(size) for size in WORKGROUP_SIZE.findall(text)]
    return max(sizes) if sizes else None


def apply(section, text, operator, k):
    """The text with the site of rank k (mod the number of sites) mutated, and what changed:
    {"line": 1-based line, "before": the line, "after": the lines that replace it, "sites": count},
    or (text, None) when the operator has no site in the text."""
    found = sites(section, text, operator)
    if not found:
        return text, None
    return _applied(text, found, k % len(found))


def _applied(text, found, rank):
    index, replacement = found[rank]
    lines = text.split("\n")
    change = {"line": index + 1, "before": lines[index], "after": replacement, "sites": len(found),
              "site": rank, "neighbours": [lines[index - 1] if index else "",
                                                     lines[index + 1] if index + 1 < len(lines) else ""]}
    lines[index:index + 1] = replacement
    return "\n".join(lines), change


def _shape(line):
    """A line with its value and block names and integer literals blanked: the same op of a kernel
    built for another size has the same shape."""
    named = re.sub(r"^[\w.]+:", "%:", re.sub(r"%[\w.]+", "%", line.strip()))
    return re.sub(r"-?\b\d+\b", "N", named)


CONTEXT_LINES = 2


def _site_key(lines, index, after, reach):
    """A site's shape with `reach` lines of context each side: the op that feeds a compare and the
    branch that reads it tell apart compares of one shape."""
    around = tuple(_shape(lines[i]) if 0 <= i < len(lines) else "" for i in range(index - reach, index + reach + 1))
    return around, tuple(_shape(a) for a in after)


def apply_like(section, text, operator, k, reference):
    """The text mutated at the site that corresponds to site k of the reference text (the same
    section of the original config's spec): the site of the same shape (the line, its lines after
    the change, and as many lines of context each side as still find one, up to CONTEXT_LINES;
    names and literals blanked) and the same rank among the sites of that shape; without one, the
    site of rank k mod the sites. The change says which (`mapped`: "shape" or "rank", and
    `context`: the lines of context that matched)."""
    found = sites(section, text, operator)
    wanted = sites(section, reference, operator)
    if not found:
        return text, None
    if wanted:
        reference_lines, lines = reference.split("\n"), text.split("\n")
        target = k % len(wanted)
        for reach in range(CONTEXT_LINES, -1, -1):
            key = _site_key(reference_lines, *wanted[target], reach)
            same = [i for i, site in enumerate(found) if _site_key(lines, *site, reach) == key]
            if same:
                rank = sum(1 for site in wanted[:target] if _site_key(reference_lines, *site, reach) == key)
                mutated, change = _applied(text, found, same[rank % len(same)])
                change["mapped"], change["context"] = "shape", reach
                return mutated, change
    mutated, change = _applied(text, found, k % len(found))
    change["mapped"] = "rank"
    return mutated, change

"""Equivalences of kemit_mutate that hold at every launch the plan allows (docs/mutation.md,
"Verdicts"), decided by real analyses (the flavor's LLVM, the contract prover), never by a run:

- *a full wave at a DPP*: a DPP whose sources all lie in the lane's own row (quad_perm, row_ror,
  row_mirror, row_half_mirror) never reads out of bounds, and reads an inactive lane only where the
  wave runs with part of its lanes; `bound_ctrl` decides only what such a read gives. The plan
  fixes each kernel's workgroup size (`launch NAME ... block B`), which the module states only
  loosely (`"amdgpu-flat-work-group-size"="1,B"`): told it as `!reqd_work_group_size`, the
  flavor's uniformity analysis knows which branches are wave-uniform. When B is a multiple of the
  wave size and no divergent branch's region (the blocks it reaches before its immediate
  post-dominator) holds the DPP, every lane is active there.
- *a compare whose sides never meet*: a strict compare made weak (or the reverse) disagrees with
  the original only where its two sides are equal; a literal moved by one, only at the one value
  it crossed. The contract prover (kemit_prove's compare questions, docs/contracts.md) proves the
  sides never differ by that amount wherever the compare runs, at every launch.
"""
import json
import os
import re
import subprocess

KERNEL = re.compile(r"^define amdgpu_kernel void @([\w.$]+)\(.*\) (#\d+) \{$")
LAUNCH = re.compile(r"^launch ([\w.$]+) .*\bblock (\d+)\b")
LABEL = re.compile(r"^([\w.$-]+):")
SUCCESSOR = re.compile(r"label %([\w.$-]+)")
UNIFORMITY_FUNCTION = re.compile(r"^UniformityInfo for function '([^']+)'")
DPP = re.compile(r"@llvm\.amdgcn\.update\.dpp\.i32\(i32 [^,]+, i32 [^,]+, i32 (\d+),")
METADATA_BASE = 900000  # far above the engines' own metadata numbers
TIMEOUT = 120


def llvm_tool(flavor, name):
    """The flavor's LLVM tool (llvm19 -> /usr/lib/llvm-19/bin/llc), or None when it is missing."""
    path = f"/usr/lib/llvm-{flavor[len('llvm'):]}/bin/{name}"
    return path if os.access(path, os.X_OK) else None


def plan_blocks(plan):
    """{kernel: its workgroup sizes} of a launch plan's text."""
    blocks = {}
    for line in (plan or "").splitlines():
        match = LAUNCH.match(line)
        if match:
            blocks.setdefault(match.group(1), set()).add(int(match.group(2)))
    return blocks


GRID = re.compile(r"^launch ([\w.$]+) grid (.+?) block \d+\b")


def top_level(expression):
    """A grid's axes: its expression split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(expression):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(expression[start:index])
            start = index + 1
    return parts + [expression[start:]]


def plan_lone_axes(plan):
    """{kernel: the axes (0 x, 1 y, 2 z) on which every launch of it has one workgroup}: there the
    workgroup id is 0 at every launch the plan allows."""
    lone = {}
    for line in (plan or "").splitlines():
        match = GRID.match(line)
        if match:
            axes = {axis for axis, size in enumerate(top_level(match.group(2))) if size.strip() == "1"}
            lone[match.group(1)] = lone.get(match.group(1), axes) & axes
    return lone


def with_plan_blocks(text, blocks):
    """The module text with each kernel that the plan launches at one workgroup size told that
    size (`!reqd_work_group_size`), or None when a kernel of the text has no single size."""
    lines, extra = text.split("\n"), []
    for index, line in enumerate(lines):
        match = KERNEL.match(line)
        if not match:
            continue
        sizes = blocks.get(match.group(1), set())
        if len(sizes) != 1:
            return None
        node = f"!{METADATA_BASE + len(extra)}"
        lines[index] = f"{line[:-2]} !reqd_work_group_size {node} {{"
        extra.append(f"{node} = !{{i32 {next(iter(sizes))}, i32 1, i32 1}}")
    if not extra:
        return None
    return "\n".join(lines).rstrip("\n") + "\n" + "\n".join(extra) + "\n"


def _run(argv, text):
    """(stdout, stderr) of a tool that succeeded, or None."""
    try:
        done = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout, done.stderr) if done.returncode == 0 else None


# --- a full wave at a DPP ---------------------------------------------------------------------

def in_row_control(ctrl):
    """True for a DPP control whose every source lane is in the reading lane's row."""
    return 0 <= ctrl <= 0xFF or 0x121 <= ctrl <= 0x12F or ctrl in (0x140, 0x141)


def functions(text):
    """{function: (blocks in order, {block: successors}, {line index: block})} of a module text."""
    found, current = {}, None
    for index, line in enumerate(text.split("\n")):
        if line.startswith("define "):
            name = re.search(r"@([\w.$]+)\(", line).group(1)
            current = found.setdefault(name, ([], {}, {}))
            block = None
            continue
        if current is None:
            continue
        if line.startswith("}"):
            current = None
            continue
        label = LABEL.match(line)
        if label:
            block = label.group(1)
            current[0].append(block)
            current[1][block] = []
            continue
        if block is None:  # an unnamed entry block
            block = "entry"
            current[0].append(block)
            current[1][block] = []
        current[2][index] = block
        stripped = line.strip()
        if stripped.startswith(("br ", "switch ")) or stripped.startswith("i32 ") and "label %" in stripped:
            current[1][block].extend(SUCCESSOR.findall(stripped))
    return found


def post_dominators(order, successors):
    """{block: the blocks that post-dominate it, itself included}."""
    every = set(order)
    pdom = {b: ({b} if not successors[b] else set(every)) for b in order}
    changed = True
    while changed:
        changed = False
        for block in reversed(order):
            if not successors[block]:
                continue
            meet = set.intersection(*(pdom[s] for s in successors[block]))
            new = meet | {block}
            if new != pdom[block]:
                pdom[block], changed = new, True
    return pdom


def divergent_region(block, successors, pdom):
    """The blocks a divergent branch at `block` reaches before it reconverges: everything reachable
    from its successors without entering a block that strictly post-dominates it."""
    stop = pdom[block] - {block}
    region, todo = set(), list(successors[block])
    while todo:
        b = todo.pop()
        if b in stop or b in region:
            continue
        region.add(b)
        todo.extend(successors[b])
    return region


def divergent_branches(told, flavor, arch):
    """{function: blocks whose terminator LLVM's uniformity analysis finds divergent}, or None."""
    opt = llvm_tool(flavor, "opt")
    if opt is None:
        return None
    done = _run([opt, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-passes=print<uniformity>",
                 "-disable-output", "-"], told)
    if done is None:
        return None
    found, function, block, terminators = {}, None, None, False
    for line in done[1].splitlines():  # the printer writes to stderr
        head = UNIFORMITY_FUNCTION.match(line)
        if head:
            function = head.group(1)
            found[function] = set()
        elif line.startswith("BLOCK "):
            block, terminators = line.split()[1], False
        elif line.startswith("TERMINATORS"):
            terminators = True
        elif line.startswith("END BLOCK"):
            terminators = False
        elif terminators and line.lstrip().startswith("DIVERGENT:") and function is not None:
            found[function].add(block)
    return found if found else None


def full_wave_at(text, line, blocks, wave_size, flavor, arch):
    """The plan's workgroup sizes as text ("kernel 256, ...") when every lane of a wave is active
    at `line` (a 0-based index of `text`) at every launch the plan allows, else None: the
    workgroups are whole waves, and the flavor's uniformity analysis, told the plan's sizes, puts
    the line's block in no divergent branch's region."""
    if not wave_size or any(size % wave_size for sizes in blocks.values() for size in sizes):
        return None
    told = with_plan_blocks(text, blocks)
    divergent = divergent_branches(told, flavor, arch) if told else None
    if divergent is None:
        return None
    owner = next(((name, f) for name, f in functions(text).items() if line in f[2]), None)
    if owner is None:
        return None
    name, (order, successors, block_of) = owner
    pdom = post_dominators(order, successors)
    for branch in divergent.get(name, ()):
        if branch not in successors:
            return None  # a block the analysis names that the text does not: do not guess
        if block_of[line] in divergent_region(branch, successors, pdom):
            return None
    return ", ".join(f"{name} {sorted(s)[0]}" for name, s in sorted(blocks.items()))


def full_wave_at_dpp(text, line, blocks, wave_size, flavor, arch):
    """The reason a flipped `bound_ctrl` at the DPP call on `line` (a 0-based index of `text`)
    cannot change a result at any launch the plan allows, or None."""
    match = DPP.search(text.split("\n")[line])
    if not match or not in_row_control(int(match.group(1))):
        return None
    sizes = full_wave_at(text, line, blocks, wave_size, flavor, arch)
    if sizes is None:
        return None
    return (f"every source lane of the DPP is in the reading lane's row, and every lane is active there: the plan's "
            f"workgroups ({sizes}) are whole waves of {wave_size}, and {flavor}'s uniformity analysis puts the DPP "
            "under no divergent branch; bound_ctrl decides only what a read of an inactive or out-of-row lane gives")


# --- a compare whose sides never meet where the mutant disagrees --------------------------------

LLVM_ICMP = re.compile(r"^\s*(%[\w.]+) = icmp (\w+) i\d+ ([^,]+), (\S+)$")
CANON_ICMP = re.compile(r"^\s*%(\d+) = icmp %(\d+), %(\d+) \{pred=(\w+)\} : i1$")
BELOW = {"slt", "ult", "sge", "uge"}  # true on one side of `left < right`
AT_OR_BELOW = {"sle", "ule", "sgt", "ugt"}  # true on one side of `left <= right`
STRICT_PAIRS = {("slt", "sle"), ("ult", "ule"), ("sgt", "sge"), ("ugt", "uge")}
SMALL = 1 << 30  # a literal this far from the type's ends moves by one without wrapping
LOOP_COMPARE = re.compile(r"^%v(\d+)\.(guard|again)$")


def _literal(text):
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def disagreement(section, before, after):
    """(the compare's LLVM name, [left - right values]): a mutated compare disagrees with the
    original exactly where its sides (the original's) differ by one of these values; None for any
    other change. A strict predicate made weak, or weak made strict, disagrees at 0; a literal
    moved by one, at the one point it crossed (two for eq and ne)."""
    if len(after) != 1:
        return None
    if section == "canonical":
        old, new = CANON_ICMP.match(before), CANON_ICMP.match(after[0])
        if not old or not new or old.group(1, 2, 3) != new.group(1, 2, 3):
            return None
        pair = tuple(sorted((old.group(4), new.group(4)), key=lambda p: p[-1] == "e"))
        return (f"%v{old.group(1)}", [0]) if pair in STRICT_PAIRS else None
    old, new = LLVM_ICMP.match(before), LLVM_ICMP.match(after[0])
    if not old or not new or old.group(1) != new.group(1):
        return None
    name, pred = old.group(1), old.group(2)
    if old.group(3, 4) == new.group(3, 4):
        pair = tuple(sorted((pred, new.group(2)), key=lambda p: p[-1] == "e"))
        return (name, [0]) if pair in STRICT_PAIRS else None
    if pred != new.group(2):
        return None
    for side in (0, 1):  # the literal that moved: the right operand (0) or the left (1)
        c, moved = _literal(old.group(4 - side)), _literal(new.group(4 - side))
        if c is None or moved is None or abs(c - moved) != 1 or old.group(3 + side) != new.group(3 + side):
            continue
        if max(abs(c), abs(moved)) >= SMALL or (pred[0] == "u" and min(c, moved) < 0):
            return None
        sign = 1 if side == 0 else -1  # left - right at the point where the compares disagree
        if pred in BELOW:
            point = min(c, moved) if side == 0 else max(c, moved)
        elif pred in AT_OR_BELOW:
            point = max(c, moved) if side == 0 else min(c, moved)
        elif pred in ("eq", "ne"):
            return name, sorted({0, sign * (moved - c)})
        else:
            return None
        return name, [sign * (point - c)]
    return None


def prover_answers(prove, canonical, plan, limits, questions):
    """{(name, differ): [each launch's answer]} from kemit_prove (docs/contracts.md, "Compare
    questions"), or None when it gives none."""
    request = {"canonical": canonical, "plan": plan, "limits": limits,
               "questions": [{"name": name, "differ": differ} for name, differ in questions]}
    done = _run([prove], json.dumps(request))
    if done is None:
        return None
    try:
        reply = json.loads(done[0])
    except ValueError:
        return None
    found = {}
    for answer in reply.get("answers", []):
        found.setdefault((answer["name"], answer["differ"]), []).append(answer)
    return found


def sides_never_meet(name, differs, answers, before):
    """The reason the compare `name` cannot disagree with its mutant at any launch the plan allows,
    when the prover PROVES its sides never differ by any of `differs` wherever it runs; else None."""
    reached = [answers.get((name, d)) for d in differs]
    if not all(reached) or any(a["verdict"] != "PROVEN" for found in reached for a in found):
        return None
    if not _same_compare(name, before, reached[0][0]["op"]):
        return None
    at = " or ".join(str(d) for d in differs)
    return (f"the contract prover proves the compare's sides never differ by {at} where it runs, at every launch "
            f"the plan allows ({len(reached[0])} launch(es)): the original and the mutant agree there")


def _same_compare(name, before, op):
    """True when the prover's op is the compare the mutated line lowers (same predicate and the
    same named operands in the same places), so its sides are the line's sides."""
    loop = LOOP_COMPARE.match(name)
    llvm = LLVM_ICMP.match(before)
    if loop:
        header = re.match(r"^for %(\d+) = %(\d+) to %(\d+) step %(\d+)$", op)
        if not llvm or not header or header.group(1) != loop.group(1) or llvm.group(2) != "slt":
            return False
        left = f"%v{header.group(2)}" if loop.group(2) == "guard" else f"%v{loop.group(1)}.next"
        return _names(llvm.group(3), left) and _names(llvm.group(4), f"%v{header.group(3)}")
    canon = CANON_ICMP.match(op)
    if not canon or f"%v{canon.group(1)}" != name:
        return False
    if not llvm:  # a canonical line: the op itself
        return CANON_ICMP.match(before) is not None and CANON_ICMP.match(before).group(1, 2, 3) == canon.group(1, 2, 3)
    return (llvm.group(2) == canon.group(4) and _names(llvm.group(3), f"%v{canon.group(2)}")
            and _names(llvm.group(4), f"%v{canon.group(3)}"))


def _names(operand, value):
    """True when an LLVM operand can be the canonical value: that value by name, or a literal or a
    parameter (`%rows`), which the canonical text names by number."""
    return operand == value or _literal(operand) is not None or not operand.startswith("%v")

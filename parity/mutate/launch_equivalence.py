"""Equivalences of kemit_mutate that hold at every launch the plan allows (docs/mutation.md,
"Verdicts"), decided by the flavor's own LLVM tools, never by a hand-written simplifier.

The launch plan fixes each kernel's workgroup size (`launch NAME ... block B`), a fact the module
text states only loosely (`"amdgpu-flat-work-group-size"="1,B"`). Both facts below add it to the
text as `!reqd_work_group_size` and then ask LLVM:

- *the same code at the plan's launch*: the flavor's llc compiles the mutant and the original,
  both told the plan's workgroup size, to the same assembly (the hardware runs the same
  instructions at every launch the plan allows);
- *a full wave at every DPP it changes*: a DPP whose sources all lie in the lane's own row
  (quad_perm, row_ror, row_mirror, row_half_mirror) reads a lane out of bounds never, and an
  inactive lane only where the wave runs with part of its lanes; `bound_ctrl` decides only what
  such a read gives. When the plan's workgroup size is a multiple of the wave size, and LLVM's
  uniformity analysis finds no divergent branch whose region (the blocks it reaches before the
  branch's immediate post-dominator) holds the DPP, every lane is active there.
"""
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


def compiled(text, flavor, arch):
    """The flavor's `llc -O3` assembly of a module text (the LLVM lane's options), or None."""
    llc = llvm_tool(flavor, "llc")
    if llc is None:
        return None
    done = _run([llc, "-O3", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-", "-o", "-"], text)
    return done[0] if done else None


def same_code_at_launch(original, mutant, blocks, flavor, arch):
    """The reason the mutant compiles to the original's code once both know the plan's
    workgroup sizes, or None."""
    told = [with_plan_blocks(text, blocks) for text in (original, mutant)]
    if None in told:
        return None
    codes = [compiled(text, flavor, arch) for text in told]
    if None in codes or codes[0] != codes[1]:
        return None
    sizes = ", ".join(f"{name} {sorted(s)[0]}" for name, s in sorted(blocks.items()))
    return (f"{flavor}'s llc compiles it to the original's code once both are told the plan's workgroup size "
            f"({sizes}): the hardware runs the same instructions at every launch the plan allows")


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


def full_wave_at_dpp(text, changed_lines, blocks, wave_size, flavor, arch):
    """The reason a flipped `bound_ctrl` at the DPP calls on `changed_lines` (0-based indexes of
    `text`) cannot change a result at any launch the plan allows, or None."""
    if not wave_size or not changed_lines:
        return None
    for line in changed_lines:
        match = DPP.search(text.split("\n")[line])
        if not match or not in_row_control(int(match.group(1))):
            return None
    if any(size % wave_size for sizes in blocks.values() for size in sizes):
        return None
    told = with_plan_blocks(text, blocks)
    divergent = divergent_branches(told, flavor, arch) if told else None
    if divergent is None:
        return None
    for name, (order, successors, block_of) in functions(text).items():
        pdom = post_dominators(order, successors)
        controlled = set()
        for branch in divergent.get(name, ()):
            if branch not in successors:
                return None  # a block the analysis names that the text does not: do not guess
            controlled |= divergent_region(branch, successors, pdom)
        if any(block_of.get(line) in controlled for line in changed_lines if line in block_of):
            return None
    if not all(any(line in f[2] for f in functions(text).values()) for line in changed_lines):
        return None
    sizes = ", ".join(f"{name} {sorted(s)[0]}" for name, s in sorted(blocks.items()))
    return (f"every source lane of the DPP is in the reading lane's row, and every lane is active there: the plan's "
            f"workgroups ({sizes}) are whole waves of {wave_size}, and {flavor}'s uniformity analysis puts the DPP "
            "under no divergent branch; bound_ctrl decides only what a read of an inactive or out-of-row lane gives")

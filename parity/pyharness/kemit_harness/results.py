"""One engine's answer to an emit request, and the first difference between two of them."""
from dataclasses import dataclass, field


@dataclass
class FlavorSection:
    """One flavor of an emitted config: its LLVM text, or the flavor gate's refusal."""
    flavor: str
    rejected: bool = False
    text: str = ""
    reason: str = ""


@dataclass
class EmitResult:
    """An engine's emission of one config: a validation refusal, or the canonical IR, its launch
    plan (docs/protocol.md; "" from an engine without plans) and one FlavorSection per requested
    flavor (in the order requested)."""
    rejected: bool = False
    reason: str = ""
    kernel_name: str = ""
    canonical: str = ""
    plan: str = ""
    ll: list = field(default_factory=list)


def from_answer(answer, flavors):
    """The EmitResult of a protocol answer whose status is `ok` or `rejected`."""
    if answer["status"] == "rejected":
        return EmitResult(rejected=True, reason=answer["reason"])
    sections = []
    for flavor in flavors:
        section = answer["ll"][flavor]
        if "rejected" in section:
            sections.append(FlavorSection(flavor, rejected=True, reason=section["rejected"]))
        else:
            sections.append(FlavorSection(flavor, text=section["text"]))
    return EmitResult(kernel_name=answer["kernel_name"], canonical=answer["canonical"], plan=answer.get("plan", ""),
                      ll=sections)


def _first_line_difference(first, second):
    """'line N: <first line> vs <second line>' for the first line where two texts differ."""
    first_lines, second_lines = first.splitlines(keepends=True), second.splitlines(keepends=True)
    for number, (a, b) in enumerate(zip(first_lines, second_lines), start=1):
        if a != b:
            return f"line {number}: {a!r} vs {b!r}"
    number = min(len(first_lines), len(second_lines)) + 1
    shorter = "first" if len(first_lines) < len(second_lines) else "second"
    return f"line {number}: the {shorter} text ends there ({len(first_lines)} vs {len(second_lines)} lines)"


def _describe(field_name, a, b, names):
    if isinstance(a, str) and isinstance(b, str) and ("\n" in a or "\n" in b):
        return f"{field_name} differs at {_first_line_difference(a, b)} ({names[0]} vs {names[1]})"
    return f"{field_name} differs: {names[0]} {a!r} vs {names[1]} {b!r}"


def first_difference(first, second, names=("py", "cpp")):
    """"" when two EmitResults are identical, else the first differing field and, for texts, the
    first differing line of it (not the common start of the texts)."""
    for field_name in ("rejected", "reason", "kernel_name", "canonical", "plan"):
        a, b = getattr(first, field_name), getattr(second, field_name)
        if a != b:
            return _describe(field_name, a, b, names)
    if [s.flavor for s in first.ll] != [s.flavor for s in second.ll]:
        return f"flavor sections differ: {[s.flavor for s in first.ll]} vs {[s.flavor for s in second.ll]}"
    for a, b in zip(first.ll, second.ll):
        for field_name in ("rejected", "reason", "text"):
            if getattr(a, field_name) != getattr(b, field_name):
                return _describe(f"{a.flavor} {field_name}", getattr(a, field_name), getattr(b, field_name), names)
    return ""

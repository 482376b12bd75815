"""What the row families' config tests share (softmax_rows, norm_rows, scan_rows): the floor on a
family's configs, where each config's row falls against its reach, and the refusal reasons its
reject configs pin."""
import json
from kemit.engine import emit
from kemit.target.arch import find_arch

# One prefix per refusal reason of rows_common.row_checks and of spec parsing.
ROW_REASONS = ("dtype must", "scope must", "cross must", "vec must", "block must be a positive", "block must be at most",
               "cols must", "scope block needs", "unknown field", "must be an integer", "must be a string",
               "must fit in 32 bits", "unknown arch")


def load_emitting_checked(path):
    """The configs of a family file, after asserting the floor every family's configs meet (dense ids,
    at least 90 configs, 15 refusals and 12 emitting configs on an llvm16 processor, so that each
    flavor and each refusal reason is pinned); returns the emitting ones."""
    with open(path, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert [c["id"] for c in configs] == list(range(1, len(configs) + 1))
    assert len(configs) >= 90 and len([c for c in configs if c["expect"] == "reject"]) >= 15
    emitting = [c for c in configs if c["expect"] == "emit"]
    assert len([c for c in emitting if c["arch"] in ("gfx90a", "gfx1100")]) >= 12
    return emitting


def reach_relations(configs):
    """{(scope, "below" | "at" | "above")}: each config's cols against one load per lane of its row."""
    relations = set()
    for c in configs:
        spec = c["spec"]
        lanes = spec["block"] if spec["scope"] == "block" else find_arch(c["arch"]).wave_size
        reach = lanes * spec["vec"]
        relations.add((spec["scope"], "below" if spec["cols"] < reach else "at" if spec["cols"] == reach else "above"))
    return relations


def missing_reasons(family, configs, prefixes):
    """The prefixes no reject config's refusal contains."""
    reasons = {emit(family, c["arch"], c["spec"], []).reason for c in configs if c["expect"] == "reject"}
    return [prefix for prefix in prefixes if not any(prefix in reason for reason in reasons)]


def wrong_expectations(family, configs):
    """The ids of configs whose expect the Python engine does not meet."""
    outcome = lambda c: "reject" if emit(family, c["arch"], c["spec"], ["llvm16", "llvm19", "llvm22"]).rejected else "emit"
    return [c["id"] for c in configs if outcome(c) != c["expect"]]

"""The engine protocol worker (`python3 -m kemit.emit --serve`) and the single-shot CLI, as subprocesses."""
import json
import os
import subprocess

import pytest

from repo_paths import PY_ENGINE, REPO
from kemit.engine import emit, family_names
from kemit.llvm.flavors import FLAVORS as FLAVOR_TABLE
from kemit.target.arch import ARCHS, arch_names

PYTHON = "/usr/bin/python3"
FLAVORS = ["llvm16", "llvm19", "llvm22"]
CONFIGS = "parity/configs/elementwise.json"


def run(args, stdin=""):
    env = dict(os.environ, PYTHONPATH=PY_ENGINE)
    return subprocess.run([PYTHON, "-m", "kemit.emit"] + args, input=stdin.encode() if isinstance(stdin, str) else stdin,
                          capture_output=True, cwd=REPO, env=env, timeout=60)


def serve(*lines):
    """Send raw request lines to one worker; return its decoded responses (one per non-blank line)."""
    data = "".join(line + "\n" for line in lines)
    done = run(["--serve"], data)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    out = done.stdout.decode()
    assert out.endswith("\n")
    return [json.loads(line) for line in out.splitlines()]


def request(**fields):
    return json.dumps(fields)


# The family list grows with the engine: it is the registry's, sorted, and includes elementwise.
FAMILIES = family_names()
KNOWN_FAMILIES = ", ".join(FAMILIES)
FLAVOR_FACTS = [{"name": f.name, "major": f.major, "datalayout": f.datalayout, "processors": list(f.processors)}
                for f in FLAVOR_TABLE]
HELLO = {"id": 0, "status": "ok", "engine": "py", "protocol": 1, "families": FAMILIES,
         "flavors": ["llvm16", "llvm19", "llvm22"], "arches": arch_names(), "flavor_facts": FLAVOR_FACTS,
         "arch_facts": [{"name": a.name, "wave_size": a.wave_size, "lds_bytes": a.lds_bytes, "mma": a.mma,
                         "fp8_format": a.fp8_format, "max_block_lanes": a.max_block_lanes,
                         "max_grid_lanes": a.max_grid_lanes, "buffer_range": a.buffer_range} for a in ARCHS]}


def test_family_list():
    assert "elementwise" in FAMILIES and FAMILIES == sorted(FAMILIES)


def test_hello():
    assert serve(request(id=0, op="hello")) == [HELLO]


def test_hello_lists_the_tables_the_harness_needs():
    (hello,) = serve(request(id=0, op="hello"))
    assert "gfx942" in hello["arches"]
    assert [f["name"] for f in hello["flavor_facts"]] == hello["flavors"]
    assert hello["flavor_facts"][0]["major"] == 16 and "gfx942" not in hello["flavor_facts"][0]["processors"]
    assert [a["name"] for a in hello["arch_facts"]] == hello["arches"]
    waves = {a["name"]: a["wave_size"] for a in hello["arch_facts"]}
    assert (waves["gfx942"], waves["gfx1201"]) == (64, 32)
    mma = {a["name"]: (a["mma"], a["lds_bytes"]) for a in hello["arch_facts"]}
    assert (mma["gfx950"], mma["gfx1201"]) == (("mfma", 163840), ("wmma_gfx12", 65536))
    fp8 = {a["name"]: a["fp8_format"] for a in hello["arch_facts"]}
    assert (fp8["gfx942"], fp8["gfx950"], fp8["gfx90a"]) == ("fnuz", "ocp", "")
    limits = {(a["max_block_lanes"], a["max_grid_lanes"], a["buffer_range"]) for a in hello["arch_facts"]}
    assert limits == {(1024, 2 ** 32 - 1, 2 ** 31)}


def test_parse_spec_fills_the_defaults_or_refuses_as_emit_does():
    ok, refused, unknown, lacking = serve(
        request(id=1, op="parse_spec", family="elementwise", spec={"op": "mul"}),
        request(id=2, op="parse_spec", family="elementwise", spec={"vec": "x"}),
        request(id=3, op="parse_spec", family="nope", spec={}),
        request(id=4, op="parse_spec", family="elementwise"))
    assert ok["status"] == "ok" and ok["spec"]["op"] == "mul" and ok["spec"]["dtype"] == "f32" and ok["spec"]["vec"] == 1
    assert refused == {"id": 2, "status": "rejected", "reason": "field 'vec' must be an integer (got string)"}
    assert unknown["status"] == "error" and "unknown family 'nope'" in unknown["error"]
    assert lacking == {"id": 4, "status": "error", "error": "request lacks field 'spec'"}


def test_resolve_flavor_as_the_clis_do():
    responses = serve(request(id=1, op="resolve_flavor", name="llvm19"),
                      request(id=2, op="resolve_flavor", name="llvm23"),
                      request(id=3, op="resolve_flavor", name="llvm17"),
                      request(id=4, op="resolve_flavor", name=["llvm19"]))
    assert responses[0] == {"id": 1, "status": "ok", "flavor": "llvm19", "note": ""}
    assert responses[1] == {"id": 2, "status": "ok", "flavor": "llvm22", "note": (
        "note: flavor llvm23 is not in the table; using llvm22, the newest (add a row when LLVM 23 is measured)")}
    assert responses[2] == {"id": 3, "status": "error", "error": (
        "unknown flavor 'llvm17' (known: llvm16, llvm19, llvm22; a newer llvmN resolves to llvm22)")}
    assert responses[3] == {"id": 4, "status": "error", "error": "request field 'name' must be a string"}


def test_emit_ok_matches_the_engine():
    spec = {"op": "add", "dtype": "bf16", "vec": 8, "block": 512}
    (response,) = serve(request(id=17, op="emit", family="elementwise", config=17, arch="gfx942", spec=spec,
                                flavors=FLAVORS))
    local = emit("elementwise", "gfx942", spec, FLAVORS)
    assert response == {
        "id": 17, "status": "ok", "kernel_name": "ew_add_bf16_v8_b512", "canonical": local.canonical,
        "plan": "; kemit launch plan 2\nsize n 0..549755813888\nbuffer a n*2\nbuffer b n*2\nbuffer y n*2\n"
                "launch ew_add_bf16_v8_b512 chunks n by 536870912 grid 1..ceil(count,4096),1,1 block 512 lds 0 "
                "args a=buffer:a@first*2+count*2 b=buffer:b@first*2+count*2 y=buffer:y@first*2+count*2 "
                "n=scalar:count\n",
        "ll": {"llvm16": {"rejected": "gfx942 needs flavor llvm19 or newer (got llvm16)"},
               "llvm19": {"text": local.ll[1].text}, "llvm22": {"text": local.ll[2].text}}}
    assert local.ll[1].text.startswith("; kemit kernel ew_add_bf16_v8_b512 for gfx942 at llvm19\n")


BAD_RANGE = "request field 'buffer_range' must be a positive integer (bytes; test-only)"


def test_buffer_range_lowers_the_range_of_a_plan_and_must_be_a_positive_integer():
    spec = {"n": 3}
    lines = [request(id=i, family="conv_fwd_lds_halo", arch="gfx942", spec=spec, flavors=[], buffer_range=value)
             for i, value in ((1, 73729), (2, 0), (3, True), (4, 1.5), (5, "8"))]
    responses = serve(*lines)
    assert responses[0]["status"] == "ok"
    # the weights (73728 bytes) must fit too: two images per chunk, the third alone
    launches = [line for line in responses[0]["plan"].splitlines() if line.startswith("launch ")]
    assert [line.split()[1][:23] for line in launches] == [
        "convfwd_f16_n2h14w14c64", "convfwd_f16_n1h14w14c64"]
    assert responses[0]["plan"] == emit("conv_fwd_lds_halo", "gfx942", spec, [], 73729).plan
    assert responses[1:] == [{"id": i, "status": "error", "error": BAD_RANGE} for i in (2, 3, 4, 5)]


def test_emit_is_the_default_op_and_answers_in_order():
    lines = [request(id=i, family="elementwise", arch="gfx90a", spec={"vec": v}, flavors=["llvm16"])
             for i, v in ((5, 1), (3, 3), (9, 2))]
    responses = serve(*lines)
    assert [(r["id"], r["status"]) for r in responses] == [(5, "ok"), (3, "rejected"), (9, "ok")]
    assert [r.get("kernel_name") for r in responses] == ["ew_add_f32_v1_b256", None, "ew_add_f32_v2_b256"]


def test_rejected():
    assert serve(request(id=18, op="emit", family="elementwise", config=55, arch="gfx90a", spec={"vec": 3},
                         flavors=FLAVORS)) == [
        {"id": 18, "status": "rejected", "reason": "vec must be one of 1, 2, 4, 8 (got 3)"}]
    assert serve(request(id=19, family="elementwise", arch="gfx90a", spec={"unroll": 2}, flavors=FLAVORS)) == [
        {"id": 19, "status": "rejected",
         "reason": "unknown field 'unroll' in elementwise spec (known: block, dtype, op, vec, waves_per_eu)"}]


def test_errors():
    responses = serve(
        request(id=1, op="emit", family="nope", arch="gfx90a", spec={}, flavors=FLAVORS),
        request(id=2, family="elementwise", arch="gfx90a", spec={}, flavors=["llvm23"]),
        request(id=3, family="elementwise", arch="gfx90a", spec={}),
        request(id=4, op="bye"),
        "[1, 2]",
    )
    assert responses == [
        {"id": 1, "status": "error", "error": f"ValueError: unknown family 'nope' (known: {KNOWN_FAMILIES})"},
        {"id": 2, "status": "error", "error": "UnknownFlavor: unknown flavor 'llvm23' (known: llvm16, llvm19, llvm22)"},
        {"id": 3, "status": "error", "error": "request lacks field 'flavors'"},
        {"id": 4, "status": "error", "error": "unknown op 'bye'"},
        {"id": None, "status": "error", "error": "request must be a JSON object"},
    ]


def test_malformed_lines_do_not_stop_the_worker():
    responses = serve('{"id": 4, ', "", "   ", "not json", request(id=7, op="hello"))
    assert [r["id"] for r in responses] == [None, None, 7]
    assert responses[0] == {"id": None, "status": "error", "error": "malformed request line: Expecting property "
                            "name enclosed in double quotes: line 2 column 1 (char 11)"}
    assert responses[1]["error"].startswith("malformed request line: Expecting value")
    assert responses[2] == dict(HELLO, id=7)


def test_invalid_utf8_is_a_malformed_line():
    done = run(["--serve"], b"\xff\xfe\n" + request(id=8, op="hello").encode() + b"\n")
    assert done.returncode == 0 and done.stderr == b""
    first, second = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert first["status"] == "error" and first["error"].startswith("malformed request line: ")
    assert second == dict(HELLO, id=8)


def test_empty_stdin_exits_zero_silently():
    done = run(["--serve"], "")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


# ---- single-shot CLI --------------------------------------------------------------------------------
def local_text(config_id, flavor):
    config = next(c for c in json.load(open(os.path.join(REPO, CONFIGS), encoding="utf-8"))["configs"]
                  if c["id"] == config_id)
    return emit("elementwise", config["arch"], config["spec"], [flavor])


def test_cli_config_flavor():
    done = run(["--config", f"{CONFIGS}:1", "--flavor", "llvm19"])
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == local_text(1, "llvm19").ll[0].text
    assert done.stdout.startswith(b"; kemit kernel ew_add_f32_v1_b256 for gfx90a at llvm19\n")


def test_cli_canonical():
    done = run(["--config", f"{CONFIGS}:1", "--canonical"])
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == local_text(1, "llvm22").canonical


def test_cli_plan_prints_the_launch_plan():
    done = run(["--config", "parity/configs/conv_fwd_lds_halo.json:69", "--plan"])
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == emit("conv_fwd_lds_halo", "gfx942", {"n": 256793}, ["llvm22"]).plan
    assert done.stdout.decode().count("\nlaunch ") == 3


def test_cli_family_arch_spec_and_default_flavor():
    spec = {"op": "relu", "dtype": "f16", "vec": 8}
    done = run(["--family", "elementwise", "--arch", "gfx1100", "--spec", json.dumps(spec)])
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.decode() == emit("elementwise", "gfx1100", spec, ["llvm22"]).ll[0].text


def test_cli_refusal_exits_1():
    done = run(["--config", f"{CONFIGS}:55", "--flavor", "llvm19"])
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "rejected: vec must be one of 1, 2, 4, 8 (got 3)\n"


def test_cli_flavor_gate_exits_1():
    done = run(["--config", f"{CONFIGS}:17", "--flavor", "llvm16"])
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "rejected at llvm16: gfx942 needs flavor llvm19 or newer (got llvm16)\n"


def test_cli_unknown_flavor_exits_2():
    done = run(["--config", f"{CONFIGS}:1", "--flavor", "llvm17"])
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == ("error: unknown flavor 'llvm17' (known: llvm16, llvm19, llvm22; "
                                    "a newer llvmN resolves to llvm22)\n")


def test_cli_unknown_family_exits_2():
    done = run(["--family", "nope", "--arch", "gfx90a"])
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == f"error: unknown family 'nope' (known: {KNOWN_FAMILIES})\n"


def test_cli_newer_flavor_alias_prints_a_note():
    done = run(["--config", f"{CONFIGS}:1", "--flavor", "llvm23"])
    assert done.returncode == 0
    assert done.stderr.decode() == ("note: flavor llvm23 is not in the table; using llvm22, the newest "
                                    "(add a row when LLVM 23 is measured)\n")
    assert done.stdout.decode() == local_text(1, "llvm22").ll[0].text


def test_cli_needs_a_config_or_family_and_arch():
    done = run([])
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().endswith(
        "python3 -m kemit.emit: error: give --config FILE:ID, or --family and --arch (with --spec)\n")


def test_cli_missing_config_id():
    done = run(["--config", f"{CONFIGS}:999"])
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == f"error: --config {CONFIGS}:999: {CONFIGS}: no config with id 999\n"


def test_cli_malformed_spec_is_a_usage_error():
    done = run(["--family", "elementwise", "--arch", "gfx90a", "--spec", "{bad"])
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.startswith(b"error: --spec is not valid JSON: ")

"""The engine protocol (docs/protocol.md): one JSON request per line in, one response out."""
import json
import sys

from .engine import emit, family_names, find_family
from .families.spec import SpecError
from .ir.parser import parse_module
from .llvm.flavors import FLAVORS, find_flavor, flavor_names, resolve_flavor
from .llvm.lower import lower_module
from .target.arch import ARCHS, arch_names

PROTOCOL = 1


def respond(request):
    """The response object for one decoded request."""
    request_id = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict):
        return {"id": None, "status": "error", "error": "request must be a JSON object"}
    op = request.get("op", "emit")
    if op == "hello":
        return hello_response(request_id)
    if op == "lower":
        return lower_response(request_id, request)
    if op == "resolve_flavor":
        return resolve_flavor_response(request_id, request)
    if op == "parse_spec":
        return parse_spec_response(request_id, request)
    if op != "emit":
        return {"id": request_id, "status": "error", "error": f"unknown op '{op}'"}
    for name in ("family", "arch", "spec", "flavors"):
        if name not in request:
            return {"id": request_id, "status": "error", "error": f"request lacks field '{name}'"}
    buffer_range = request.get("buffer_range")
    if buffer_range is not None and (isinstance(buffer_range, bool) or not isinstance(buffer_range, int)
                                     or buffer_range < 1):
        return {"id": request_id, "status": "error",
                "error": "request field 'buffer_range' must be a positive integer (bytes; test-only)"}
    try:
        result = emit(request["family"], request["arch"], request["spec"], request["flavors"], buffer_range)
    except Exception as error:  # a bug or a malformed request: reported, never fatal
        return {"id": request_id, "status": "error", "error": f"{type(error).__name__}: {error}"}
    if result.rejected:
        return {"id": request_id, "status": "rejected", "reason": result.reason}
    ll = {s.flavor: ({"rejected": s.reason} if s.rejected else {"text": s.text}) for s in result.ll}
    return {"id": request_id, "status": "ok", "kernel_name": result.kernel_name,
            "canonical": result.canonical, "plan": result.plan, "ll": ll}


def hello_response(request_id):
    """What the engine serves: families, flavors (with the facts the LLVM lane checks a module
    against) and processors (with the facts the numerics lane sizes a launch and encodes fp8 inputs
    by and the fuzzer's domains judge a spec by), so that no harness tool needs the engine's tables."""
    facts = [{"name": f.name, "major": f.major, "datalayout": f.datalayout, "processors": list(f.processors)}
             for f in FLAVORS]
    arch_facts = [{"name": a.name, "wave_size": a.wave_size, "lds_bytes": a.lds_bytes, "mma": a.mma,
                   "fp8_format": a.fp8_format, "max_block_lanes": a.max_block_lanes,
                   "max_grid_lanes": a.max_grid_lanes, "buffer_range": a.buffer_range} for a in ARCHS]
    return {"id": request_id, "status": "ok", "engine": "py", "protocol": PROTOCOL,
            "families": family_names(), "flavors": flavor_names(), "arches": arch_names(), "flavor_facts": facts,
            "arch_facts": arch_facts}


def parse_spec_response(request_id, request):
    """The parse_spec op: a family's spec with every default filled in (what the family builds from),
    or the refusal emit gives for it; an unknown family is an error, as in emit."""
    for name in ("family", "spec"):
        if name not in request:
            return {"id": request_id, "status": "error", "error": f"request lacks field '{name}'"}
    try:
        module = find_family(request["family"])
        return {"id": request_id, "status": "ok", "spec": module.parse_spec(request["spec"])}
    except SpecError as refusal:
        return {"id": request_id, "status": "rejected", "reason": str(refusal)}
    except Exception as error:  # a bug or a malformed request: reported, never fatal
        return {"id": request_id, "status": "error", "error": f"{type(error).__name__}: {error}"}


def resolve_flavor_response(request_id, request):
    """The resolve_flavor op: a flavor name as a user typed it (an alias such as llvm23 included)
    -> the canonical name and the note the CLIs print, or the error they print."""
    name = request.get("name")
    if not isinstance(name, str):
        return {"id": request_id, "status": "error", "error": "request field 'name' must be a string"}
    try:
        flavor, note = resolve_flavor(name)
    except ValueError as error:
        return {"id": request_id, "status": "error", "error": str(error)}
    return {"id": request_id, "status": "ok", "flavor": flavor.name, "note": note}


def lower_response(request_id, request):
    """The lower op: parse a canonical text (one kernel or a module) and lower it at each flavor,
    with no gate (the driver's cross-lowering triage asks only for flavors both engines emitted)."""
    try:
        kernels = parse_module(request["canonical"])
        ll = {}
        for name in request["flavors"]:
            flavor = find_flavor(name)
            ll[flavor.name] = {"text": lower_module(kernels, flavor)}
    except KeyError as missing:
        return {"id": request_id, "status": "error", "error": f"request lacks field {missing}"}
    except Exception as error:  # a ParseError names the line
        return {"id": request_id, "status": "error", "error": f"{type(error).__name__}: {error}"}
    return {"id": request_id, "status": "ok", "ll": ll}


def _refuse_constant(token):
    raise ValueError(f"{token} is not JSON")


def _finite(text):
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is out of range")
    return value


def decode_line(raw):
    """Strict JSON, as the C++ engine reads it: UTF-8 only, no NaN/Infinity, finite numbers."""
    return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite)


def serve(stdin=sys.stdin.buffer, stdout=sys.stdout.buffer):
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = decode_line(line)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deep to decode
            response = {"id": None, "status": "error", "error": f"malformed request line: {error}"}
        else:
            response = respond(request)
        # Compact, as the C++ worker writes: fewer bytes through the pipe, a fifth less encoding.
        # The ASCII text goes out as bytes, in two writes: a text stream's encoding pass and the
        # concatenation cost a third of the serving (the answers of a full gate are some 64 MB).
        stdout.write(json.dumps(response, separators=(",", ":")).encode())
        stdout.write(b"\n")
        stdout.flush()
    return 0

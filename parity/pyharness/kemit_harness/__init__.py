"""kemit_harness: the two engines side by side, from Python, through their protocol workers.

    from kemit_harness import Engines
    with Engines() as engines:                       # this checkout's engines
        result = engines.emit("elementwise", "gfx942", {"op": "add"}, ["llvm19"], engine="both")

`engine="py"` or `"cpp"` asks one engine; `"both"` asks both and raises EngineMismatch, naming the
first differing field and line, unless they agree. Each engine is a `--serve` worker
(docs/protocol.md): `python3 -m kemit.emit --serve` and `kemit_emit --serve` by default, or any
command that speaks the protocol (`Engines(commands={...})`). The harness imports no engine code
(docs/architecture.md), so the same errors come from either engine as the same exception types:
UnknownFamily, UnknownFlavor, EngineError (and TypeError for arguments of the wrong type).
"""
from .engines import Engines, default_commands
from .errors import EngineError, EngineMismatch, HarnessError, UnknownFamily, UnknownFlavor
from .results import EmitResult, FlavorSection, first_difference

__all__ = ["Engines", "default_commands", "EmitResult", "FlavorSection", "first_difference", "HarnessError",
           "EngineError", "EngineMismatch", "UnknownFamily", "UnknownFlavor"]

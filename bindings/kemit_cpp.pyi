"""Type stubs of the kemit_cpp binding (bindings/*.cpp): the C++ engine inside Python."""
from typing import Any, TypedDict


class FlavorSection(TypedDict):
    flavor: str
    rejected: bool
    text: str
    reason: str


class EmitResult(TypedDict):
    rejected: bool
    reason: str
    kernel_name: str
    canonical: str
    ll: list[FlavorSection]


def family_names() -> list[str]: ...
def emit(family: str, arch: str, spec: Any, flavors: list[str]) -> EmitResult: ...
def parse_spec(family: str, spec: Any) -> dict[str, Any]: ...
def validate(family: str, spec: Any, arch: str) -> str: ...
def kernel_name(family: str, spec: Any) -> str: ...
def flavors() -> list[dict[str, Any]]: ...
def resolve_flavor(name: str) -> tuple[str, str]: ...
def archs() -> list[dict[str, Any]]: ...


class ParseError(ValueError): ...
class InterpError(RuntimeError): ...
class RaceError(InterpError): ...


class RunStats(TypedDict):
    lane_instructions: int
    wave_instructions: int
    workgroups: int
    seconds: float


def reprint(text: str) -> str: ...
def run(canonical: str, grid: int | list[int], block: int | list[int], buffers: dict[str, Any],
        scalars: dict[str, int] = ..., kernel: str = ..., schedule: str = ..., races: bool = ...) -> RunStats: ...

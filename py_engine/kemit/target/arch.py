"""The arch table: the processors kemit emits for, and the facts the families need."""
from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    name: str
    wave_size: int
    lds_bytes: int
    oldest_flavor: str   # the oldest flavor whose LLVM knows the processor
    mma: str             # matrix-core kind: mfma, wmma_gfx11, wmma_gfx12, wmma_gfx1250


ARCHS = (
    Arch("gfx90a", 64, 65536, "llvm16", "mfma"),
    Arch("gfx942", 64, 65536, "llvm19", "mfma"),
    Arch("gfx950", 64, 163840, "llvm22", "mfma"),
    Arch("gfx1100", 32, 65536, "llvm16", "wmma_gfx11"),
    Arch("gfx1151", 32, 65536, "llvm19", "wmma_gfx11"),
    Arch("gfx1201", 32, 65536, "llvm19", "wmma_gfx12"),
    Arch("gfx1250", 32, 327680, "llvm22", "wmma_gfx1250"),
)


class UnknownArch(ValueError):
    pass


def arch_names():
    return [a.name for a in ARCHS]


def find_arch(name):
    for arch in ARCHS:
        if arch.name == name:
            return arch
    raise UnknownArch(f"unknown arch '{name}' (known: {', '.join(arch_names())})")

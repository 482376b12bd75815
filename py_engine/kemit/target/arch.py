"""The arch table: the processors kemit emits for, and the facts the families need."""
from dataclasses import dataclass

from .. import tables


@dataclass(frozen=True)
class Arch:
    name: str
    wave_size: int
    lds_bytes: int
    oldest_flavor: str   # the oldest flavor whose LLVM knows the processor
    mma: str             # matrix-core kind: mfma, wmma_gfx11, wmma_gfx12, wmma_gfx1250


ARCHS = tuple(Arch(**row) for row in tables.ARCHS)  # tables/archs.json


class UnknownArch(ValueError):
    pass


def arch_names():
    return [a.name for a in ARCHS]


def find_arch(name):
    for arch in ARCHS:
        if arch.name == name:
            return arch
    raise UnknownArch("unknown arch '{name}' (known: {known})".format(name=name, known=", ".join(arch_names())))

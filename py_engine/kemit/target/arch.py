"""The arch table: the processors kemit emits for, and the facts the families need."""
from .. import tables

# a processor: one field per column of tables/archs.json (each column's meaning is its doc there)
Arch = tables.record_type(tables.TABLES["archs"])
ARCHS = tuple(tables.to_record(Arch, row) for row in tables.ARCHS)


class UnknownArch(ValueError):
    pass


def arch_names():
    return [a.name for a in ARCHS]


def find_arch(name):
    for arch in ARCHS:
        if arch.name == name:
            return arch
    raise UnknownArch("unknown arch '{name}' (known: {known})".format(name=name, known=", ".join(arch_names())))

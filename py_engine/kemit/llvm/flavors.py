"""The flavor table: what each supported LLVM version accepts, spells and knows.

Every row was measured on Debian's llvm-16, llvm-19 and llvm-22 (see docs/flavors.md).
A flavor is always an argument; nothing here reads the environment.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Flavor:
    name: str
    major: int
    datalayout: str
    or_disjoint: bool        # `or disjoint`
    zext_nneg: bool          # `zext nneg`
    gep_nuw: bool            # `getelementptr inbounds nuw`
    splat_constants: bool    # `splat (float 1.0)` vector constants
    captures_attr: bool      # `captures(none)` instead of `nocapture`
    readfirstlane_mangled: bool  # `llvm.amdgcn.readfirstlane.i32` instead of the unmangled name
    vector_bf16_casts: bool      # llc selects fpext/fptrunc between <N x bfloat> and <N x float> (16 aborts)
    processors: tuple
    wmma_operand_mangled: bool = False  # wmma names carry the operand type too (`.v8f32.v16f16`, not `.v8f32`)
    mma_instructions: tuple = ()        # the canonical mma instructions (ir/builder.py) this LLVM knows


# Matrix instructions by the oldest flavor whose LLVM knows them (llvm_flavors.md §5, re-measured
# with llvm-as: an unknown name is accepted silently, so "knows" means the declaration gets attributes).
_MMA_16 = ("mfma_f32_32x32x8_f16", "mfma_f32_32x32x8_bf16", "mfma_f32_16x16x16_f16",
           "mfma_f32_16x16x16_bf16", "wmma_gfx11_f32_16x16x16_f16", "wmma_gfx11_f32_16x16x16_bf16")
_MMA_19 = _MMA_16 + ("wmma_gfx12_f32_16x16x16_f16", "wmma_gfx12_f32_16x16x16_bf16")
_MMA_22 = _MMA_19 + ("mfma_f32_16x16x32_bf16", "wmma_gfx1250_f32_16x16x32_f16",
                     "wmma_gfx1250_f32_16x16x32_bf16")

_DL_COMMON = ("p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32")
_DL_TAIL = ("i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
            "-v2048:2048-n32:64-S32-A5-G1")

FLAVORS = (
    Flavor("llvm16", 16, "e-" + _DL_COMMON + "-" + _DL_TAIL + "-ni:7",
           or_disjoint=False, zext_nneg=False, gep_nuw=False, splat_constants=False,
           captures_attr=False, readfirstlane_mangled=False, vector_bf16_casts=False,
           processors=("gfx90a", "gfx1100"),
           wmma_operand_mangled=False, mma_instructions=_MMA_16),
    Flavor("llvm19", 19, "e-" + _DL_COMMON + "-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-"
           + _DL_TAIL + "-ni:7:8:9",
           or_disjoint=True, zext_nneg=True, gep_nuw=True, splat_constants=True,
           captures_attr=False, readfirstlane_mangled=True, vector_bf16_casts=True,
           processors=("gfx90a", "gfx942", "gfx1100", "gfx1151", "gfx1201"),
           wmma_operand_mangled=True, mma_instructions=_MMA_19),
    Flavor("llvm22", 22, "e-m:e-" + _DL_COMMON + "-p7:160:256:256:32-p8:128:128:128:48"
           "-p9:192:256:256:32-" + _DL_TAIL + "-ni:7:8:9",
           or_disjoint=True, zext_nneg=True, gep_nuw=True, splat_constants=True,
           captures_attr=True, readfirstlane_mangled=True, vector_bf16_casts=True,
           processors=("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"),
           wmma_operand_mangled=True, mma_instructions=_MMA_22),
)


class UnknownFlavor(ValueError):
    pass


def flavor_names():
    return [f.name for f in FLAVORS]


def newest_flavor():
    return FLAVORS[-1]


def find_flavor(name):
    """The flavor with exactly this canonical name."""
    for flavor in FLAVORS:
        if flavor.name == name:
            return flavor
    raise UnknownFlavor(f"unknown flavor '{name}' (known: {', '.join(flavor_names())})")


def resolve_flavor(name):
    """(flavor, note): a known name, or a newer `llvmN` aliased to the newest flavor with a note."""
    for flavor in FLAVORS:
        if flavor.name == name:
            return flavor, ""
    newest = newest_flavor()
    digits = name[4:] if name.startswith("llvm") else ""
    if digits.isascii() and digits.isdigit() and int(digits) > newest.major:
        return newest, (f"note: flavor {name} is not in the table; using {newest.name}, "
                        f"the newest (add a row when LLVM {int(digits)} is measured)")
    raise UnknownFlavor(f"unknown flavor '{name}' (known: {', '.join(flavor_names())}; "
                        f"a newer llvmN resolves to {newest.name})")

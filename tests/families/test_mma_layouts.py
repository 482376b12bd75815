"""Every MFMA / WMMA register layout kemit uses, checked entry by entry (A, B, C, D; every lane and
vector element) against the layout tables in llvm_lane/mma_layouts/: AMD's Matrix Instruction
Calculator output for gfx9 MFMA and gfx11 / gfx12 WMMA, kemit's documented tables for gfx950's
16x16x32 MFMA and gfx1250's WMMA (docs/ir.md, "Matrix ops"). Both the engine's fragment tables
(families/gemm_core.py, mirrored by the C++ engine) and the numpy reference's LAYOUTS are checked.
"""
import csv
import os
import re

import pytest

from kemit.families import gemm_core
from references.gemm_mma import LAYOUTS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLES = os.path.join(REPO, "llvm_lane", "mma_layouts")

# (layout kind, dtype) -> the tables of every processor family that runs it
TABLE_NAMES = {
    ("mfma_32x32x8", "f16"): ["cdna2_v_mfma_f32_32x32x8f16", "cdna3_v_mfma_f32_32x32x8_f16"],
    ("mfma_32x32x8", "bf16"): ["cdna2_v_mfma_f32_32x32x8bf16_1k", "cdna3_v_mfma_f32_32x32x8_bf16"],
    ("mfma_16x16x16", "f16"): ["cdna2_v_mfma_f32_16x16x16f16", "cdna3_v_mfma_f32_16x16x16_f16"],
    ("mfma_16x16x16", "bf16"): ["cdna2_v_mfma_f32_16x16x16bf16_1k", "cdna3_v_mfma_f32_16x16x16_bf16"],
    ("mfma_16x16x32", "bf16"): ["cdna4_v_mfma_f32_16x16x32_bf16"],
    ("mfma_16x16x32", "fp8"): ["cdna3_v_mfma_f32_16x16x32_fp8_fp8"],
    ("mfma_16x16x32", "bf8"): ["cdna3_v_mfma_f32_16x16x32_bf8_bf8"],
    ("wmma_gfx11", "f16"): ["rdna3_v_wmma_f32_16x16x16_f16"],
    ("wmma_gfx11", "bf16"): ["rdna3_v_wmma_f32_16x16x16_bf16"],
    ("wmma_gfx12", "f16"): ["rdna4_v_wmma_f32_16x16x16_f16"],
    ("wmma_gfx12", "bf16"): ["rdna4_v_wmma_f32_16x16x16_bf16"],
    ("wmma_gfx1250", "f16"): ["gfx1250_v_wmma_f32_16x16x32_f16"],
    ("wmma_gfx1250", "bf16"): ["gfx1250_v_wmma_f32_16x16x32_bf16"],
    ("mfma_32x32x8", "i8"): ["cdna2_v_mfma_i32_32x32x8i8"],
    ("mfma_16x16x16", "i8"): ["cdna2_v_mfma_i32_16x16x16i8"],
    ("mfma_32x32x16", "i8"): ["cdna3_v_mfma_i32_32x32x16_i8"],
    ("mfma_16x16x32", "i8"): ["cdna3_v_mfma_i32_16x16x32_i8"],
    ("wmma_gfx11", "iu8"): ["rdna3_v_wmma_i32_16x16x16_iu8"],
    ("wmma_gfx12_iu8", "iu8"): ["rdna4_v_wmma_i32_16x16x16_iu8"],
}
# layout kind -> its M: the spec shape's, or the M of the instruction the kind is named after
SHAPE_OF = {"wmma_gfx11": "wmma_16x16x16", "wmma_gfx12": "wmma_16x16x16", "wmma_gfx12_iu8": "wmma_16x16x16",
            "wmma_gfx1250": "wmma_16x16x32"}


def rows_of(kind):
    shape = SHAPE_OF.get(kind, kind)
    if shape in gemm_core.SHAPES:
        return gemm_core.SHAPES[shape][0]
    return int(re.fullmatch(r"mfma_(\d+)x\d+x\d+", shape).group(1))


def read_table(name, matrix):
    with open(os.path.join(TABLES, f"{name}_{matrix}.csv"), encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][0].startswith("Architecture:") and rows[2][0] == "lane"
    table = []
    for lane, row in enumerate(rows[3:]):
        assert int(row[0]) == lane
        table.append([tuple(int(x) for x in re.fullmatch(rf"{matrix}\[(\d+)\]\[(\d+)\]", cell).groups()) for cell in row[1:]])
    return table


def engine_layout(kind):
    """Per matrix, per lane, per element: (row, column), from the engine's fragment tables."""
    m = rows_of(kind)
    stride, offsets, length = gemm_core.FRAGMENTS[kind]
    wave = 64 if kind.startswith("mfma") else 32
    accumulators = LAYOUTS[kind][5]
    a, b, c = [], [], []
    for lane in range(wave):
        group, index = lane // m, lane % m
        ks = [group * stride + offset + j for offset in offsets for j in range(length)]
        a.append([(index, k) for k in ks])
        b.append([(k, index) for k in ks])
        c.append([(gemm_core.static_row(kind, e) + gemm_core.ROW_FACTORS[kind] * group, index) for e in range(accumulators)])
    return {"A": a, "B": b, "C": c, "D": c}


def reference_layout(kind):
    m, n, _, wave, length, accumulators, a_k, c_row = LAYOUTS[kind]
    a = [[(lane % m, a_k(lane, e)) for e in range(length)] for lane in range(wave)]
    b = [[(a_k(lane, e), lane % n) for e in range(length)] for lane in range(wave)]
    c = [[(c_row(lane, e), lane % n) for e in range(accumulators)] for lane in range(wave)]
    return {"A": a, "B": b, "C": c, "D": c}


CASES = [(kind, dtype, table) for (kind, dtype), tables in sorted(TABLE_NAMES.items()) for table in tables]


@pytest.mark.parametrize("kind,dtype,table", CASES, ids=[case[2] for case in CASES])
@pytest.mark.parametrize("source", [engine_layout, reference_layout], ids=["engine", "reference"])
def test_layout_matches_the_table_entry_by_entry(source, kind, dtype, table):
    ours = source(kind)
    compared = 0
    for matrix in "ABCD":
        theirs = read_table(table, matrix)
        assert len(ours[matrix]) == len(theirs), f"{matrix}: lane count"
        for lane, (mine, published) in enumerate(zip(ours[matrix], theirs)):
            assert len(mine) == len(published), f"{matrix} lane {lane}: element count"
            for e, (got, want) in enumerate(zip(mine, published)):
                assert got == want, f"{table} {matrix}: lane {lane} element {e} holds {want}, kemit puts {got}"
                compared += 1
    assert compared == sum(len(lane) for matrix in "ABCD" for lane in read_table(table, matrix)) > 0


def test_every_layout_kind_the_engine_has_is_covered():
    assert {kind for kind, _ in TABLE_NAMES} == set(gemm_core.FRAGMENTS)

"""The interpreter's layout formulas (interp/src/mma_layout.cpp, through kemit_cpp.mma_fragments) held
to AMD's layout tables (llvm_lane/mma_layouts/) entry by entry: every lane and vector element of A, B,
C and D, for every canonical mma instruction. Running an mma cannot show this alone: D is a sum over k,
which a reordering of k shared by A and B leaves unchanged.
"""
import csv
import os
import re

import pytest

from kemit import tables
from repo_paths import REPO

# canonical instruction -> the tables of the processor families that run it
TABLES = {
    "mfma_f32_32x32x8_f16": ["cdna2_v_mfma_f32_32x32x8f16", "cdna3_v_mfma_f32_32x32x8_f16"],
    "mfma_f32_32x32x8_bf16": ["cdna2_v_mfma_f32_32x32x8bf16_1k", "cdna3_v_mfma_f32_32x32x8_bf16"],
    "mfma_f32_16x16x16_f16": ["cdna2_v_mfma_f32_16x16x16f16", "cdna3_v_mfma_f32_16x16x16_f16"],
    "mfma_f32_16x16x16_bf16": ["cdna2_v_mfma_f32_16x16x16bf16_1k", "cdna3_v_mfma_f32_16x16x16_bf16"],
    "mfma_f32_16x16x32_bf16": ["cdna4_v_mfma_f32_16x16x32_bf16"],
    "mfma_f32_16x16x32_fp8_fnuz": ["cdna3_v_mfma_f32_16x16x32_fp8_fp8"],
    "mfma_f32_16x16x32_bf8_fnuz": ["cdna3_v_mfma_f32_16x16x32_bf8_bf8"],
    "mfma_f32_16x16x32_fp8_ocp": ["cdna3_v_mfma_f32_16x16x32_fp8_fp8"],
    "mfma_f32_16x16x32_bf8_ocp": ["cdna3_v_mfma_f32_16x16x32_bf8_bf8"],
    "wmma_gfx11_f32_16x16x16_f16": ["rdna3_v_wmma_f32_16x16x16_f16"],
    "wmma_gfx11_f32_16x16x16_bf16": ["rdna3_v_wmma_f32_16x16x16_bf16"],
    "wmma_gfx12_f32_16x16x16_f16": ["rdna4_v_wmma_f32_16x16x16_f16"],
    "wmma_gfx12_f32_16x16x16_bf16": ["rdna4_v_wmma_f32_16x16x16_bf16"],
    "wmma_gfx1250_f32_16x16x32_f16": ["gfx1250_v_wmma_f32_16x16x32_f16"],
    "wmma_gfx1250_f32_16x16x32_bf16": ["gfx1250_v_wmma_f32_16x16x32_bf16"],
    "mfma_i32_32x32x8_i8": ["cdna2_v_mfma_i32_32x32x8i8"],
    "mfma_i32_16x16x16_i8": ["cdna2_v_mfma_i32_16x16x16i8"],
    "mfma_i32_32x32x16_i8": ["cdna3_v_mfma_i32_32x32x16_i8"],
    "mfma_i32_16x16x32_i8": ["cdna3_v_mfma_i32_16x16x32_i8"],
    "wmma_gfx11_i32_16x16x16_iu8": ["rdna3_v_wmma_i32_16x16x16_iu8"],
    "wmma_gfx12_i32_16x16x16_iu8": ["rdna4_v_wmma_i32_16x16x16_iu8"],
}
CASES = [(instr, table) for instr, names in TABLES.items() for table in names]


def amd_cells(table, matrix):
    with open(os.path.join(REPO, "llvm_lane", "mma_layouts", f"{table}_{matrix}.csv"), encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[3:]
    return [[tuple(int(x) for x in re.fullmatch(rf"{matrix}\[(\d+)\]\[(\d+)\]", cell).groups()) for cell in row[1:]]
            for row in rows]


@pytest.mark.parametrize("instr,table", CASES, ids=[f"{i}-{t}" for i, t in CASES])
def test_interpreter_layout_matches_the_table_entry_by_entry(kemit_cpp, instr, table):
    ours = kemit_cpp.mma_fragments(instr)
    compared = 0
    for matrix, mine in (("A", ours["A"]), ("B", ours["B"]), ("C", ours["C"]), ("D", ours["C"])):
        theirs = amd_cells(table, matrix)
        assert len(mine) == len(theirs), f"{instr} {matrix}: {len(mine)} lanes, the table {len(theirs)}"
        for lane, (got, want) in enumerate(zip(mine, theirs)):
            assert [tuple(cell) for cell in got] == want, f"{instr} {matrix} lane {lane}: kemit {got}, {table} {want}"
            compared += len(want)
    assert compared >= 4 * 32 * 4


def test_every_canonical_instruction_is_compared():
    assert set(TABLES) == {row["name"] for row in tables.MMA_INSTRUCTIONS}


def test_a_wrong_table_is_caught_and_an_unknown_instruction_refused(kemit_cpp):
    """The comparison can fail: the gfx12 iu8 layout is not the gfx12 f16 one (8 consecutive k per lane)."""
    ours = kemit_cpp.mma_fragments("wmma_gfx12_i32_16x16x16_iu8")["A"]
    assert [list(map(tuple, lane)) for lane in ours] != amd_cells("rdna4_v_wmma_f32_16x16x16_f16", "A")
    with pytest.raises(kemit_cpp.InterpError, match="no layout for mma instruction 'mfma_i32_8x8x8_i8'"):
        kemit_cpp.mma_fragments("mfma_i32_8x8x8_i8")

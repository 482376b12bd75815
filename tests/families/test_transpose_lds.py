"""transpose_lds: the strip replay (padded LDS index maps of the family) against b = a^T, the
validator's reason texts in order, kernel names, configs."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import transpose_lds as family
from kemit.target.arch import find_arch
from references.transpose_lds import transpose, transpose_via_strips

CONFIGS = os.path.join(REPO, "parity", "configs", "transpose_lds.json")
GFX90A, GFX942, GFX950, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx950", "gfx1100"))


@pytest.mark.parametrize("rows, cols, tile, tiles, pad, vec", [
    (40, 56, 16, 1, 1, 8), (33, 64, 32, 2, 0, 4), (17, 18, 16, 1, 1, 2), (64, 48, 24, 1, 0, 8), (5, 7, 16, 3, 1, 1)])
def test_strips_transpose(rows, cols, tile, tiles, pad, vec):
    a = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    assert np.array_equal(transpose_via_strips(a, tile, tiles, pad, vec), transpose(a))


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "i8"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'i8')"),
    ({"vec": 16}, GFX90A, "vec must be one of 1, 2, 4, 8 (got 16)"),
    ({"pad": 2}, GFX90A, "pad must be one of 0, 1 (got 2)"),
    ({"tile": 8}, GFX90A, "tile must be between 16 and 64 (got 8)"),
    ({"tile": 20, "vec": 8}, GFX90A, "tile must be a multiple of vec 8 (got 20)"),
    ({"tiles": 17}, GFX90A, "tiles must be between 1 and 16 (got 17)"),
    ({"block": 96}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 2048}, GFX1100, "block must be at most 1024 (got 2048)"),
    ({"tile": 64, "tiles": 8}, GFX942, "LDS use 131328 bytes exceeds the 65536 bytes of gfx942"),
    ({"tile": 8, "vec": 16}, GFX90A, "vec must be one of 1, 2, 4, 8 (got 16)"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_lds_limit_is_the_archs():
    assert family.validate(family.parse_spec({"tile": 64, "tiles": 8}), GFX950) == ""


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "tr_f32_t32x1_p1_v1_b256"
    spec = family.parse_spec({"dtype": "bf16", "tile": 48, "tiles": 2, "pad": 0, "vec": 8, "block": 512})
    assert family.kernel_name(spec) == "tr_bf16_t48x2_p0_v8_b512"


def test_padding_decides_the_lds_store_alignment():
    padded = emit("transpose_lds", "gfx90a", {"vec": 4}, ["llvm19"]).ll[0].text
    unpadded = emit("transpose_lds", "gfx90a", {"vec": 4, "pad": 0}, ["llvm19"]).ll[0].text
    assert "store <4 x float> %v" in padded and "addrspace(3) %v" in padded
    assert [line for line in padded.splitlines() if "store <4 x float>" in line][0].endswith("align 4")
    assert [line for line in unpadded.splitlines() if "store <4 x float>" in line][0].endswith("align 16")
    assert "[1056 x float]" in padded and "[1024 x float]" in unpadded


def test_configs_expectations_hold():
    with open(CONFIGS, encoding="utf-8") as handle:
        document = json.load(handle)
    assert [c["id"] for c in document["configs"]] == list(range(1, len(document["configs"]) + 1))
    assert len(document["configs"]) >= 30
    for config in document["configs"]:
        result = emit("transpose_lds", config["arch"], config["spec"], ["llvm16", "llvm19", "llvm22"])
        assert ("reject" if result.rejected else "emit") == config["expect"], config["id"]

"""grouped_gemm's staging loops one trip long: the A staging loop's latch made `<=` (config 13 at
llvm19) or its bound + 1 (config 24 at llvm22) writes one vector past @a_tile, into the bytes of
@b_tile that follow it in LDS, which the B staging then overwrites, so every output is right. In
LLVM's terms the store is out of bounds of @a_tile; the executor bounds each LDS array by itself
(as the interpreter does), so the numerics lane kills both. kemit_mutate judges them as a campaign
judges them (docs/mutation.md)."""
import pytest


@pytest.mark.parametrize("name, edge", [
    ("grouped_gemm:13@llvm19:icmp_predicate:9", "bytes 512 to 528 are out of bounds of LDS array @a_tile (512 bytes)"),
    ("grouped_gemm:24@llvm22:const_inc:60", "bytes 2560 to 2576 are out of bounds of LDS array @a_tile (2560 bytes)"),
])
def test_a_staging_loop_one_trip_long_is_out_of_bounds_of_its_own_lds_array(judge_mutant, name, edge):
    _, m = judge_mutant(name)
    assert m["verdict"] == "KILLED", m
    assert ".again = icmp" in m["before"], m["before"]
    assert m["how"].startswith("numerics NOT_EXECUTABLE: ExecError: store <8 x"), m["how"]
    assert edge in m["how"], m["how"]

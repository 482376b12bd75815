"""conv_depthwise_tiled's mutant that only the config's own last column tile shows: config 32
(dgrad, w 96, filter 64 x 64, pad 31, 2-wide column tiles) with tap 48's column test against dy's
width made one short (`< 95` made `< 94`). A tile's first column is even, so tap 48 reaches dy's
last column (94) from column 46 only because w is even. The numerics lane's small problem once
had w 69, whose last dy column (67) tap 48 reaches from no tile, and the mutant survived; the
small problem now keeps w's remainder modulo the tile (w 70), and the dx it drops is off.
kemit_mutate judges it as a campaign judges it (docs/mutation.md)."""


def test_a_tap_cut_short_at_the_last_column_is_killed_by_the_configs_own_last_tile(judge_mutant):
    _, m = judge_mutant("conv_depthwise_tiled:32@llvm22:const_dec:277")
    assert m["verdict"] == "KILLED", m
    assert m["before"].strip() == "%v1154 = icmp ult i32 %v1152, 95", m["before"]
    assert m["how"].startswith("numerics NUMERIC_MISMATCH: dx:"), m["how"]

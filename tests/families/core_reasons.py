"""The gemm core's tile and wave refusal reasons (gemm_core.core_checks), in validate's order: what
the reason lists of the families built on the core (gemm_epilogue, gemm_int8) share."""

TILE_REASONS = [
    r"tile_m must be a positive multiple of \d+ for \S+ \(got -?\d+\)",
    r"tile_n must be a positive multiple of \d+ for \S+ \(got -?\d+\)",
    r"tile_k must be a positive multiple of \d+ for \S+ \(got -?\d+\)",
    r"tile_[mn] must be at most 256 \(got \d+\)",
    r"tile_k must be at most 128 \(got \d+\)",
    r"waves must be one of 1, 2, 4, 8 \(got -?\d+\)",
    r"the \d+ fragments of a \d+x\d+ tile do not split evenly over \d+ waves",
    r"\d+ fragments per wave need \d+ accumulator registers per lane, more than 128",
]

"""The families this engine knows, by name."""
from . import attention_fwd, conv_depthwise_dgrad_stream, conv_depthwise_tiled, conv_depthwise_wgrad
from . import elementwise, conv_fwd_lds_halo, gemm_epilogue, gemm_mma, norm_rows, reduce_rows, scan_rows
from . import softmax_rows, transpose_lds

FAMILIES = {module.FAMILY: module for module in (attention_fwd, conv_depthwise_dgrad_stream, conv_depthwise_tiled,
                                                     conv_depthwise_wgrad, conv_fwd_lds_halo, elementwise, gemm_epilogue,
                                                     gemm_mma, norm_rows, reduce_rows, scan_rows, softmax_rows,
                                                     transpose_lds)}


def family_names():
    return sorted(FAMILIES)


def find_family(name):
    if name not in FAMILIES:
        raise ValueError("unknown family '{name}' (known: {known})".format(name=name, known=", ".join(family_names())))
    return FAMILIES[name]

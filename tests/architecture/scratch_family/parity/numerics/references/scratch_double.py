"""numpy reference and numerics plan of the scratch_double family: y = a + a, exact in f32."""
import numpy as np

from plans import Case, Output, nan_memory, random_values, require_small, to_memory


def scratch_double(a):
    return np.asarray(a, dtype=np.float32) * np.float32(2)


def plan(spec, arch, rng):
    """Two workgroups and a partial third: the lanes past n write nothing."""
    n = 2 * spec["block"] + spec["block"] // 2 + 1
    require_small(n, 0, "the scratch_double problem")
    a = random_values(rng, n, "f32")
    buffers = {"a": to_memory(a, "f32"), "y": nan_memory(n, "f32")}
    return Case(spec, (3,), spec["block"], buffers, {"n": n}, [Output("y", "f32", scratch_double(a), None, 0.0)])

"""Two split-C modules of conv_fwd_lds_halo share one code object: configs 27 and 73 (gfx90a,
different specs) are emitted by an engine's CLI at every flavor, linked into one module by that
flavor's llvm-link, and the linked module compiles with that flavor's llc for gfx90a into one
object holding all four kernels. That works because the reduce kernel is named after its module's
spec: the same link with both reduce kernels renamed to one name, `conv_split_reduce`, must fail
with llvm-link's "symbol multiply defined" (the check can fail).

    /usr/bin/python3 tests/llvm_lane/link_split_modules.py BUILD_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, "parity", "configs", "conv_fwd_lds_halo.json")
PAIR = (27, 73)
FLAVORS = {"llvm16": 16, "llvm19": 19, "llvm22": 22}
SHARED_NAME = "conv_split_reduce"


def emit(build, config_id, flavor):
    command = [os.path.join(build, "cpp_engine", "kemit_emit"), "--config", f"{CONFIGS}:{config_id}", "--flavor", flavor]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def kernels(text):
    return re.findall(r"define amdgpu_kernel void @(\w+)\(", text)


def link(major, texts, folder, tag):
    paths = []
    for index, text in enumerate(texts):
        paths.append(os.path.join(folder, f"{tag}{index}.ll"))
        with open(paths[-1], "w", encoding="utf-8") as handle:
            handle.write(text)
    linked = os.path.join(folder, f"{tag}linked.ll")
    result = subprocess.run([f"llvm-link-{major}", "-S", "-o", linked] + paths, capture_output=True, text=True)
    return result, linked


def check_flavor(build, flavor, major, folder):
    texts = [emit(build, config_id, flavor) for config_id in PAIR]
    names = [name for text in texts for name in kernels(text)]
    reduce_names = [name for name in names if name.endswith("_reduce")]
    assert len(names) == 4 and len(set(names)) == 4 and len(reduce_names) == 2, names
    result, linked = link(major, texts, folder, f"{flavor}-")
    assert result.returncode == 0, f"{flavor}: llvm-link-{major} failed: {result.stderr}"
    with open(linked, encoding="utf-8") as handle:
        assert sorted(kernels(handle.read())) == sorted(names), f"{flavor}: the linked module lost a kernel"
    obj = os.path.join(folder, f"{flavor}.o")
    compiled = subprocess.run([f"llc-{major}", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-filetype=obj", "-o", obj,
                               linked], capture_output=True, text=True)
    assert compiled.returncode == 0, f"{flavor}: llc-{major} failed on the linked module: {compiled.stderr}"
    symbols = subprocess.run([f"llvm-nm-{major}", obj], capture_output=True, text=True, check=True).stdout
    assert all(re.search(rf"\b{name}\b", symbols) for name in names), f"{flavor}: the object lacks a kernel"
    same_name = [text.replace(reduce_name, SHARED_NAME) for text, reduce_name in zip(texts, reduce_names)]
    result, _ = link(major, same_name, folder, f"{flavor}-same-name-")
    assert result.returncode != 0 and "multiply defined" in result.stderr, \
        f"{flavor}: two modules both naming {SHARED_NAME} must not link (got exit {result.returncode}: {result.stderr})"
    print(f"{flavor}: configs {PAIR[0]} and {PAIR[1]} link into one object with kernels {', '.join(names)}; "
          f"named {SHARED_NAME} they collide")


def main(argv):
    build = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(ROOT, "build"))
    with tempfile.TemporaryDirectory(prefix="kemit-link-") as folder:
        for flavor, major in FLAVORS.items():
            check_flavor(build, flavor, major, folder)
    print("RESULT: GREEN")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

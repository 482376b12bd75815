"""ci/check_layering.py: each forbidden arrow, planted in a scratch tree, is reported (exit 1); a
clean scratch tree is LAYERING: OK. The real tree is checked by the ctest `architecture.layering`."""
import os
import subprocess
import sys

import pytest

from scratch import write

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "ci", "check_layering.py")

CLEAN_NINJA = """\
build parity/CMakeFiles/kemit_driver.dir/driver/src/triage.cpp.o: CXX_COMPILER__kemit_driver_RelWithDebInfo {root}/parity/driver/src/triage.cpp || cmake_object_order_depends_target_kemit_driver
  INCLUDES = -I{root}/parity/driver/include
build parity/libkemit_driver.a: CXX_STATIC_LIBRARY_LINKER__kemit_driver_RelWithDebInfo parity/CMakeFiles/kemit_driver.dir/driver/src/triage.cpp.o
  LANGUAGE_COMPILE_FLAGS = -O2
build parity/CMakeFiles/check_byte_identity.dir/driver/check_byte_identity.cpp.o: CXX_COMPILER__check_byte_identity_RelWithDebInfo {root}/parity/driver/check_byte_identity.cpp
  INCLUDES = -I{root}/parity/driver/include
build parity/check_byte_identity: CXX_EXECUTABLE_LINKER__check_byte_identity_RelWithDebInfo parity/CMakeFiles/check_byte_identity.dir/driver/check_byte_identity.cpp.o | parity/libkemit_driver.a
  LINK_LIBRARIES = parity/libkemit_driver.a  /usr/lib/x86_64-linux-gnu/libfmt.so.9.1.0
build cpp_engine/CMakeFiles/kemit.dir/src/engine.cpp.o: CXX_COMPILER__kemit_RelWithDebInfo {root}/cpp_engine/src/engine.cpp
  INCLUDES = -I{root}/cpp_engine/include
build cpp_engine/kemit_emit: CXX_EXECUTABLE_LINKER__kemit_emit_RelWithDebInfo cpp_engine/CMakeFiles/kemit.dir/src/engine.cpp.o | cpp_engine/libkemit.a
  LINK_LIBRARIES = cpp_engine/libkemit.a
"""


@pytest.fixture
def tree(tmp_path):
    """A minimal clean tree: one engine source of each language, harness sources, a build graph."""
    root = str(tmp_path / "repo")
    write(f"{root}/cpp_engine/src/engine.cpp", '#include "kemit/engine.h"\n#include "kemit/ir/types.h"\n')
    write(f"{root}/py_engine/kemit/__init__.py", "from .engine import emit\nimport json\n")
    write(f"{root}/parity/driver/src/triage.cpp", '#include "kemit/driver/triage.h"\n#include <string>\n')
    write(f"{root}/parity/pyharness/kemit_harness/engines.py", "import subprocess\nfrom .worker import Worker\n")
    write(f"{root}/parity/numerics/numerics_worker.py", "import kemit_cpp\n")  # the interpreter: allowed there only
    write(f"{root}/build/build.ninja", CLEAN_NINJA.format(root=root))
    return root


def check(root):
    done = subprocess.run([sys.executable, CHECK, "--root", root, "--build", os.path.join(root, "build")],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def test_a_clean_tree_passes(tree):
    code, out = check(tree)
    assert code == 0, out
    assert out.endswith("LAYERING: OK\n")
    assert "pending:" not in out  # no debt left: every harness folder is checked


@pytest.mark.parametrize("path,text,expected", [
    ("parity/driver/src/triage.cpp", '#include "kemit/llvm/lower.h"\n',
     'parity/driver/src/triage.cpp: #include "kemit/llvm/lower.h": a harness source includes an engine header'),
    ("llvm_lane/check_llvm.cpp", '#include "kemit/engine.h"\n',
     'llvm_lane/check_llvm.cpp: #include "kemit/engine.h": a harness source includes an engine header'),
    ("parity/numerics/check_numerics.cpp", '#include "kemit/tables.h"\n',
     'parity/numerics/check_numerics.cpp: #include "kemit/tables.h": a harness source includes an engine header'),
    ("parity/pyharness/kemit_harness/engines.py", "import kemit_cpp\n",
     "parity/pyharness/kemit_harness/engines.py: import kemit_cpp: a harness module imports the engine module"),
    ("parity/numerics/plans.py", "from kemit.target.arch import find_arch\n",
     "parity/numerics/plans.py: from kemit.target.arch import: a harness module imports the engine module kemit"),
    ("parity/numerics/numerics_worker.py", "from kemit.families.registry import find_family\n",
     "parity/numerics/numerics_worker.py: from kemit.families.registry import: a harness module imports the engine module kemit"),
    ("parity/numerics/module_source.py", "import kemit_cpp\n",
     "parity/numerics/module_source.py: import kemit_cpp: a harness module imports the engine module"),
    ("golden/tools/x.py", "from kemit.llvm.flavors import FLAVORS\n",
     "golden/tools/x.py: from kemit.llvm.flavors import: a harness module imports the engine module kemit"),
    ("cpp_engine/src/serve.cpp", '#include "kemit/driver/worker_pool.h"\n',
     'cpp_engine/src/serve.cpp: #include "kemit/driver/worker_pool.h": an engine includes harness code'),
    ("py_engine/kemit/__init__.py", "import kemit_cpp\n",
     "py_engine/kemit/__init__.py: import kemit_cpp: the engine imports kemit_cpp"),
    ("tooling/src/locations.cpp", '#include "kemit/driver/config.h"\n',
     'tooling/src/locations.cpp: #include "kemit/driver/config.h": tooling/ is shared by engines and harness'),
    ("tooling/src/version.cpp", '#include "kemit/llvm/flavors.h"\n',
     'tooling/src/version.cpp: #include "kemit/llvm/flavors.h": tooling/ is shared by engines and harness'),
    ("py_engine/kemit/serve.py", "from kemit_harness import Engines\n",
     "py_engine/kemit/serve.py: from kemit_harness import: the engine imports kemit_harness"),
])
def test_a_planted_source_violation_fails(tree, path, text, expected):
    write(os.path.join(tree, path), text)
    code, out = check(tree)
    assert code == 1, out
    assert expected in out
    assert out.endswith("LAYERING: VIOLATED (1)\n")


def test_a_harness_target_that_links_the_engine_fails(tree):
    ninja = os.path.join(tree, "build", "build.ninja")
    text = open(ninja, encoding="utf-8").read().replace(
        "LINK_LIBRARIES = parity/libkemit_driver.a ", "LINK_LIBRARIES = parity/libkemit_driver.a cpp_engine/libkemit.a ")
    write(ninja, text)
    code, out = check(tree)
    assert code == 1, out
    assert ("target check_byte_identity: parity/check_byte_identity links cpp_engine/libkemit.a: a harness target "
            "links an engine library") in out


@pytest.mark.parametrize("folder", ["cpp_engine/include", "build/generated"])  # the engine's headers, its tables.h
def test_a_harness_target_compiled_with_engine_headers_fails(tree, folder):
    ninja = os.path.join(tree, "build", "build.ninja")
    text = open(ninja, encoding="utf-8").read().replace(
        "INCLUDES = -I{0}/parity/driver/include\nbuild parity/libkemit_driver.a".format(tree),
        "INCLUDES = -I{0}/parity/driver/include -I{0}/{1}\nbuild parity/libkemit_driver.a".format(tree, folder))
    write(ninja, text)
    code, out = check(tree)
    assert code == 1, out
    assert f"target kemit_driver: parity/CMakeFiles/kemit_driver.dir/driver/src/triage.cpp.o (and its other objects) " \
           f"is compiled with -I{tree}/{folder}" in out


def test_a_build_without_a_graph_or_harness_fails_closed(tree):
    write(os.path.join(tree, "build", "build.ninja"), "rule phony\n")
    code, out = check(tree)
    assert code == 1 and "no harness target found: the check would compare nothing" in out
    os.remove(os.path.join(tree, "build", "build.ninja"))
    code, out = check(tree)
    assert code == 1 and "build.ninja: missing" in out

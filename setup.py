"""setuptools drives CMake for the one compiled piece of the Python package: `kemit_cpp`.

The version is the CMake project VERSION (CMakeLists.txt), the one place it is set. The binding is
built with CMake in KEMIT_CMAKE_BUILD_DIR (an existing build is reused incrementally) or else in
build/pip-cmake, then copied into the wheel next to its stub kemit_cpp.pyi. setuptools' own
scratch files go under build/ too, so the source tree gets nothing but the egg-info it needs.
docs/packaging.md has the commands.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8") as handle:
        return re.search(r"project\(kemit VERSION ([0-9.]+)", handle.read()).group(1)


class CMakeBuild(build_ext):
    """Builds the CMake target kemit_cpp and copies the module and its stub into the wheel."""

    def run(self):
        build_dir = os.environ.get("KEMIT_CMAKE_BUILD_DIR") or os.path.join(HERE, "build", "pip-cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure = ["cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            if shutil.which("ccache"):
                configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
            subprocess.run(configure, check=True)
        jobs = os.environ.get("KEMIT_BUILD_JOBS", "2")
        subprocess.run(["cmake", "--build", build_dir, "--target", "kemit_cpp", "-j", jobs], check=True)
        modules = glob.glob(os.path.join(build_dir, "bindings", "kemit_cpp*.so"))
        if len(modules) != 1:
            raise RuntimeError(f"expected one kemit_cpp module in {build_dir}/bindings, found {modules}")
        os.makedirs(self.build_lib, exist_ok=True)
        shutil.copy2(modules[0], self.build_lib)
        shutil.copy2(os.path.join(HERE, "bindings", "kemit_cpp.pyi"), self.build_lib)


class BuildPyWithTables(build_py):
    """The package plus the IR tables (tables/*.json) it reads at import, as kemit/table_data/
    (py_engine/kemit/tables.py looks there when the repository's tables/ is not beside it)."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "kemit", "table_data")
        os.makedirs(target, exist_ok=True)
        for table in glob.glob(os.path.join(HERE, "tables", "*.json")):
            shutil.copy2(table, target)


os.makedirs(os.path.join(HERE, "build", "setuptools"), exist_ok=True)  # egg_base must exist
setup(
    version=project_version(),
    package_dir={"": "py_engine"},
    packages=find_packages(where="py_engine"),
    package_data={"": ["*.json", "*.yaml", "*.txt", "py.typed"]},
    ext_modules=[Extension("kemit_cpp", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithTables},
    options={"build": {"build_base": os.path.join("build", "setuptools")},
             "egg_info": {"egg_base": os.path.join("build", "setuptools")}},
    zip_safe=False,
)

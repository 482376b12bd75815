"""ctest install_pip: `pip install . --no-build-isolation` into a scratch virtual environment.

The environment sees Debian's site packages (setuptools, wheel, pybind11 come from there: the
install is offline), as Debian 12 asks of a pip install outside its own packages. Checks that the
`kemit` package, the `kemit_cpp` module with its kemit_cpp.pyi next to it, and the `kemit-emit`
command are installed and work from outside the source tree.
"""
import argparse
import os
import shutil
import subprocess
import sys


def run(argv, **kwargs):
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"FAILED ({result.returncode}): {' '.join(argv)}\n{result.stdout}\n{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--scratch", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.scratch, ignore_errors=True)
    venv = os.path.join(args.scratch, "venv")
    run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])
    python = os.path.join(venv, "bin", "python")
    env = dict(os.environ, KEMIT_CMAKE_BUILD_DIR=args.build, PIP_NO_INDEX="1")
    env.pop("PYTHONPATH", None)  # only the install may answer
    # A sanitizer run (cmake/sanitizer.cmake) names the folder of its sitecustomize, which starts
    # Python again with the runtimes the instrumented kemit_cpp needs; it holds no kemit code.
    if os.environ.get("KEMIT_SANITIZER_PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["KEMIT_SANITIZER_PYTHONPATH"]
    run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", args.source], env=env)

    outside = os.path.join(args.scratch, "elsewhere")  # no source tree above: only the install can answer
    os.makedirs(outside)
    code = ("import os, kemit, kemit_cpp; from kemit.engine import emit; "
            "print(os.path.dirname(kemit.__file__)); print(kemit_cpp.__file__); "
            "r = emit('elementwise', 'gfx942', {}, ['llvm19']); print(r.kernel_name)")
    package_dir, module, kernel = run([python, "-c", code], cwd=outside, env=env).split()
    if not package_dir.startswith(venv) or not module.startswith(venv):
        sys.exit(f"kemit or kemit_cpp imported from outside the venv: {package_dir}, {module}")
    stub = os.path.join(os.path.dirname(module), "kemit_cpp.pyi")
    if not os.path.isfile(stub):
        sys.exit(f"kemit_cpp.pyi is not installed next to {module}")

    config = os.path.join(args.source, "parity", "configs", "elementwise.json") + ":1"
    text = run([os.path.join(venv, "bin", "kemit-emit"), "--config", config, "--flavor", "llvm19"], cwd=outside, env=env)
    if "target datalayout" not in text:
        sys.exit(f"kemit-emit printed no module:\n{text}")
    version = run([os.path.join(venv, "bin", "kemit-emit"), "--version"], cwd=outside, env=env)
    if "(installed)" not in version:
        sys.exit(f"kemit-emit --version of the installed package printed: {version}")
    print(f"installed kemit ({version.strip()}) into {venv}: package, kemit_cpp + .pyi, kemit-emit; kernel {kernel}")
    shutil.rmtree(args.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

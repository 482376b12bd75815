"""Both engines, each behind its protocol worker, with the Python-side "both" comparison."""
import os
import warnings

from .errors import EngineError, EngineMismatch, UnknownFamily, UnknownFlavor
from .results import from_answer, first_difference
from .worker import Worker

PYTHON = "/usr/bin/python3"
ENGINE_CHOICES = ("py", "cpp", "both")


def default_commands(root, build):
    """{engine: (argv, env)} for this checkout's engines: the Python worker with
    PYTHONPATH=<root>/py_engine, the C++ worker from <build>/cpp_engine."""
    return {"py": ([PYTHON, "-m", "kemit.emit", "--serve"], {"PYTHONPATH": os.path.join(root, "py_engine")}),
            "cpp": ([os.path.join(build, "cpp_engine", "kemit_emit"), "--serve"], {})}


def _check_arguments(family, arch, spec, flavors, engine):
    for name, value in (("family", family), ("arch", arch)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__} {value!r}")
    if not isinstance(spec, dict):
        raise TypeError(f"spec must be a dict (the family's spec), not {type(spec).__name__}")
    if isinstance(flavors, str) or not isinstance(flavors, (list, tuple)):
        raise TypeError(f"flavors must be a list of flavor names such as ['llvm19', 'llvm22'], "
                        f"not {type(flavors).__name__} {flavors!r}")
    for name in flavors:
        if not isinstance(name, str):
            raise TypeError(f"each flavor must be a str such as 'llvm19', not {type(name).__name__} {name!r}")
    if engine not in ENGINE_CHOICES:
        raise ValueError(f"engine must be one of py, cpp, both (got {engine!r})")


class Engines:
    """The engines' workers, started on first use and kept until close() (or the with-block ends).

    root, build: the checkout and the CMake build (default: this checkout and <root>/build);
    commands: {engine: (argv, env)} to run other workers (any program that speaks the protocol);
    timeout: seconds a worker may take for one answer before it is stopped (EngineError).
    """

    def __init__(self, root=None, build=None, commands=None, timeout=60):
        self._timeout = timeout
        root = root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        self._commands = commands or default_commands(root, build or os.path.join(root, "build"))
        self._workers = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    def worker(self, engine):
        """The started worker of one engine (its `hello` is the engine's answer to hello)."""
        if engine not in self._workers:
            argv, env = self._commands[engine]
            self._workers[engine] = Worker(engine, argv, env, EngineError, self._timeout)
        return self._workers[engine]

    def resolve_flavors(self, engine, flavors):
        """Canonical names, resolved by the engine's worker as the CLIs resolve them (a newer
        `llvmN` is the newest flavor; the CLIs' note comes as a warning). UnknownFlavor otherwise."""
        names = []
        for name in flavors:
            answer = self.worker(engine).ask({"op": "resolve_flavor", "name": name})
            if answer.get("status") != "ok":
                raise UnknownFlavor(answer.get("error", f"the {engine} engine cannot resolve flavor {name!r}"))
            if answer.get("note"):
                warnings.warn(answer["note"], stacklevel=4)
            names.append(answer["flavor"])
        return names

    def emit_one(self, engine, family, arch, spec, flavors):
        """One engine's EmitResult (flavors as given: aliases are resolved by that engine)."""
        worker = self.worker(engine)
        if family not in worker.hello.get("families", []):
            raise UnknownFamily(f"unknown family '{family}' (the {engine} engine serves: "
                                f"{', '.join(worker.hello.get('families', []))})")
        names = self.resolve_flavors(engine, flavors)
        answer = worker.ask({"op": "emit", "family": family, "config": 0, "arch": arch, "spec": spec,
                             "flavors": names})
        if answer.get("status") not in ("ok", "rejected"):
            raise EngineError(f"the {engine} engine failed on {family} at {arch}: {answer.get('error', answer)}")
        return from_answer(answer, names)

    def emit(self, family, arch, spec, flavors, engine="both"):
        """Emit one config with one engine ("py", "cpp") or with both ("both", the default), which
        returns the Python engine's result and raises EngineMismatch, naming the first differing
        field and line, when the engines disagree.

        Raises TypeError for arguments of the wrong type (flavors is a list of str), UnknownFamily,
        UnknownFlavor, and EngineError for an engine's `error` answer, crash or broken protocol.
        """
        _check_arguments(family, arch, spec, flavors, engine)
        if engine != "both":
            return self.emit_one(engine, family, arch, spec, flavors)
        py = self.emit_one("py", family, arch, spec, flavors)
        cpp = self.emit_one("cpp", family, arch, spec, flavors)
        difference = first_difference(py, cpp, ("py", "cpp"))
        if difference:
            raise EngineMismatch(f"{family} on {arch}: {difference}")
        return py

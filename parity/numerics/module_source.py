"""Where the numerics lane gets its modules: an engine's protocol worker (docs/protocol.md).

`EngineSource(engine, build)` keeps one `--serve` worker per thread and asks it for what a plan
needs: a spec with its defaults (`parse_spec`), an arch's facts (`hello`'s `arch_facts`), the
flavors and their LLVM majors (`hello`'s `flavors` and `flavor_facts`), and the spec emitted at
every flavor: the canonical text and each flavor's LLVM text (or the flavor's refusal). The lane
imports no engine code and keeps no engine table; a test may hand the lane any object with the
same `parse_spec`, `arch`, `flavors` and `build` methods (a mutated text, a fake engine).
"""
import json
import os
import subprocess
import sys
import threading
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Built:
    """One spec built by an engine: canonical text, {flavor: text or None (refused)}, kernel name,
    and the launch plan's text (docs/protocol.md; the lane runs every launch of it)."""

    def __init__(self, canonical, flavors, kernel_name, refused="", plan=""):
        self.canonical, self.flavors, self.kernel_name, self.refused = canonical, flavors, kernel_name, refused
        self.plan = plan


@dataclass(frozen=True)
class ArchFacts:
    """What a plan needs of a processor, from the engine's hello."""
    name: str
    wave_size: int
    fp8_format: str = ""  # the variant of the 8-bit floats its fp8 mma reads ("fnuz", "ocp"); "": none


def engine_command(engine, build):
    if engine == "cpp":
        return [os.path.join(os.path.abspath(build), "cpp_engine", "kemit_emit"), "--serve"], None
    if engine == "py":
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "py_engine"))
        return [sys.executable, "-m", "kemit.emit", "--serve"], env
    raise ValueError(f"unknown engine {engine!r} (cpp or py)")


class EngineWorker:
    def __init__(self, command, env):
        if not os.access(command[0], os.X_OK):
            raise RuntimeError(f"{command[0]} is missing: build it with `cmake --build BUILD --target kemit_emit`")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        self.next_id = 0

    def ask(self, request):
        self.next_id += 1
        request = dict(request, id=self.next_id)
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the engine worker {self.process.args[0]} died (exit {self.process.poll()})")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)


class EngineSource:
    def __init__(self, engine="cpp", build="build"):
        self.command, self.env = engine_command(engine, build)
        self.engine = engine
        self._local = threading.local()
        self._workers = []
        self._lock = threading.Lock()

    def _worker(self):
        worker = getattr(self._local, "worker", None)
        if worker is None:
            worker = self._local.worker = EngineWorker(self.command, self.env)
            with self._lock:
                self._workers.append(worker)
        return worker

    def _hello(self):
        """The engine's hello (asked once; every worker of one binary serves the same tables)."""
        with self._lock:
            hello = getattr(self, "_hello_answer", None)
        if hello is None:
            hello = self._worker().ask({"op": "hello"})
            if "arch_facts" not in hello:
                raise RuntimeError(f"the {self.engine} engine's hello has no arch_facts (an older engine? "
                                   f"rebuild {self.command[0]}): the numerics lane needs each arch's wave size")
            with self._lock:
                self._hello_answer = hello
        return hello

    def arch(self, name):
        """(ArchFacts, "") of a processor, or (None, reason) when the engine does not know it."""
        facts = {a["name"]: a for a in self._hello()["arch_facts"]}
        if name not in facts:
            return None, f"unknown arch '{name}' (known: {', '.join(facts)})"
        return ArchFacts(name, facts[name]["wave_size"], facts[name].get("fp8_format", "")), ""

    def flavors(self):
        """The flavors the engine serves, oldest first."""
        return tuple(self._hello()["flavors"])

    def flavor_majors(self):
        """flavor -> the LLVM major whose executor runs its modules (hello's flavor_facts)."""
        return {facts["name"]: facts["major"] for facts in self._hello().get("flavor_facts", [])}

    def parse_spec(self, family, spec):
        """(the spec with its defaults, "") or (None, the engine's refusal or error)."""
        answer = self._worker().ask({"op": "parse_spec", "family": family, "spec": spec})
        if answer["status"] == "ok":
            return answer["spec"], ""
        return None, answer.get("reason") or f"engine error: {answer.get('error')}"

    def build(self, family, config_id, arch, spec, buffer_range=None):
        """The spec emitted at every flavor; buffer_range (test-only) lowers the engine's 32-bit
        buffer range so that a small spec plans the chunked launches of a real size."""
        request = {"op": "emit", "family": family, "config": config_id, "arch": arch, "spec": spec,
                   "flavors": list(self.flavors())}
        answer = self._worker().ask(dict(request, buffer_range=buffer_range) if buffer_range else request)
        if answer["status"] == "rejected":
            return Built(None, {}, "", refused=answer["reason"])
        if answer["status"] != "ok":
            return Built(None, {}, "", refused=f"engine error: {answer.get('error')}")
        flavors = {name: section.get("text") for name, section in answer["ll"].items()}
        return Built(answer["canonical"], flavors, answer.get("kernel_name", ""), plan=answer.get("plan", ""))

    def close(self):
        for worker in self._workers:
            worker.close()

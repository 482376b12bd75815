"""A client of the per-LLVM checkers' EXEC verb (docs/llvm_lane.md#checker-protocol): the numerics
lane runs each flavor's module in the executor built into `kemit_llcheckN` (the LLVM of that flavor).
"""
import json
import os
import subprocess
import threading

import numpy as np


class CheckerError(RuntimeError):
    """The checker died, is missing, or answered out of protocol."""


def checker_path(build, major):
    """The checker and executor of LLVM `major` (a flavor's major comes from the engine's hello)."""
    return os.path.join(os.path.abspath(build), "llvm_lane", f"kemit_llcheck{major}")


class Checker:
    """One persistent kemit_llcheckN process; `execute` is thread-safe (one request at a time)."""

    def __init__(self, path, env=None):
        if not os.access(path, os.X_OK):
            raise CheckerError(f"{path} is missing: build it with `cmake --build BUILD --target {os.path.basename(path)}`")
        self.path = path
        self._lock = threading.Lock()
        self._process = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        ready = self._process.stdout.readline().decode()
        if not ready.startswith("READY\t"):
            raise CheckerError(f"{path} did not start (said {ready!r})")
        self.version = ready.split("\t")[1].strip()

    def alive(self):
        return self._process.poll() is None

    def close(self):
        if self._process.poll() is None:
            try:
                self._process.stdin.write(b"QUIT\n")
                self._process.stdin.close()
            except OSError:
                pass
            self._process.wait(timeout=10)

    def execute(self, text, name, grid, block, buffers, scalars=None, kernel="", schedule="in-order", races=True):
        """Runs one kernel; buffers (name -> C-contiguous numpy array) are updated in place.
        schedule orders the waves between barriers and the workgroups (in-order, reverse, random:SEED);
        races watches every byte (an error that begins "race: " names a race).
        Returns (ok, error, lane_instructions, seconds)."""
        scalars = scalars or {}
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = (block, 1, 1) if isinstance(block, int) else tuple(block) + (1,) * (3 - len(block))
        ir = text.encode()
        parts = [f"EXEC\t{len(ir)}\t{name}\n".encode(), ir,
                 (f"LAUNCH\t{kernel or '-'}\t{grid[0]} {grid[1]} {grid[2]}\t{block[0]} {block[1]} {block[2]}\t"
                  f"{len(buffers)}\t{len(scalars)}\t{schedule}\t{int(bool(races))}\n").encode()]
        parts += [f"SCALAR\t{key}\t{int(value)}\n".encode() for key, value in scalars.items()]
        for key, array in buffers.items():
            data = np.ascontiguousarray(array).tobytes()
            parts += [f"BUFFER\t{key}\t{len(data)}\n".encode(), data]
        with self._lock:
            try:
                self._process.stdin.write(b"".join(parts))
                self._process.stdin.flush()
                return self._read_answer(name, buffers)
            except (OSError, ValueError) as error:
                raise CheckerError(f"{self.path} died while running {name} ({error})") from error
            except CheckerError:
                self._process.kill()  # out of sync: the next request gets a fresh process
                raise

    def witness(self, text, name, launch):
        """A witness run at real size (the WITNESS verb): the report kemit_cpp.witness answers, a
        dict (parity/numerics/witness.py); (None, error) when the module or the description
        cannot run, else (report, "")."""
        ir = text.encode()
        request = f"WITNESS\t{len(ir)}\t{name}\n".encode() + ir + json.dumps(launch).encode() + b"\n"
        with self._lock:
            try:
                self._process.stdin.write(request)
                self._process.stdin.flush()
                return self._read_witness(name)
            except (OSError, ValueError) as error:
                raise CheckerError(f"{self.path} died while running {name} ({error})") from error
            except CheckerError:
                self._process.kill()
                raise

    def _read_witness(self, name):
        line = self._process.stdout.readline().decode()
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 5 or fields[0] != "WITNESSED" or fields[1] != name:
            raise CheckerError(f"{self.path} answered {line[:200]!r} to WITNESS {name}")
        if fields[2] != "1":
            return None, unescape(fields[4])
        report = json.loads(self._process.stdout.read(int(fields[3])))
        page_bytes = report["page_bytes"]
        for entry in report["buffers"].values():
            pages = {}
            for page in entry["written"]:
                data = self._process.stdout.read(page_bytes)
                bits = self._process.stdout.read(page_bytes // 8)
                if len(data) != page_bytes or len(bits) != page_bytes // 8:
                    raise CheckerError(f"{self.path} sent a short page {page} for WITNESS {name}")
                pages[page] = (data, bits)
            entry["written"] = pages
        return report, ""

    def digest(self, text, name):
        """The DIGEST verb: (digest, "") of the module's decoded kernels, or ("", why it cannot run).
        Two texts with one digest run alike on every launch, whichever LLVM parsed them."""
        ir = text.encode()
        with self._lock:
            try:
                self._process.stdin.write(f"DIGEST\t{len(ir)}\t{name}\n".encode() + ir)
                self._process.stdin.flush()
                line = self._process.stdout.readline().decode()
            except (OSError, ValueError) as error:
                raise CheckerError(f"{self.path} died while decoding {name} ({error})") from error
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5 or fields[0] != "DIGESTED" or fields[1] != name or fields[2] not in ("0", "1"):
                self._process.kill()  # out of sync: the next request gets a fresh process
                raise CheckerError(f"{self.path} answered {line[:200]!r} to DIGEST {name}")
        return (fields[3], "") if fields[2] == "1" else ("", unescape(fields[4]))

    def check(self, text, name):
        """The checker's CHECK verb: (parsed, verified)."""
        ir = text.encode()
        with self._lock:
            self._process.stdin.write(f"CHECK\t{len(ir)}\t{name}\n".encode() + ir)
            self._process.stdin.flush()
            fields = self._process.stdout.readline().decode().split("\t")
        if fields[0] != "RESULT" or fields[1] != name:
            raise CheckerError(f"{self.path} answered {fields[:2]} to CHECK {name}")
        return fields[2] == "1", fields[3] == "1"

    def _read_answer(self, name, buffers):
        line = self._process.stdout.readline().decode()
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 7 or fields[0] != "EXECUTED" or fields[1] != name:
            raise CheckerError(f"{self.path} answered {line[:200]!r} to EXEC {name}")
        ok, error = fields[2] == "1", unescape(fields[6])
        if ok:
            for key, array in buffers.items():
                header = self._process.stdout.readline().decode().rstrip("\n").split("\t")
                size = int(header[2])
                data = self._process.stdout.read(size)
                if header[:2] != ["BUFFER", key] or len(data) != size or size != array.nbytes:
                    raise CheckerError(f"{self.path} sent back buffer {header} for {key} of {name}")
                np.copyto(array, np.frombuffer(data, dtype=array.dtype).reshape(array.shape))
        return ok, error, int(fields[3]), float(fields[5])


def unescape(text):
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append({"t": "\t", "n": "\n", "\\": "\\", "r": "\r"}.get(text[i + 1], text[i + 1]))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)

"""One protocol worker (docs/protocol.md): a subprocess that answers one JSON line per request."""
import json
import os
import select
import subprocess


class Worker:
    """A started `--serve` worker. `ask(request)` sends one request and returns its answer; a
    worker that dies, hangs past `timeout` seconds or answers off-protocol raises `error_type`
    with its stderr's tail (and is stopped)."""

    def __init__(self, name, argv, env, error_type, timeout=60):
        self.name, self._error_type, self._next_id, self._timeout = name, error_type, 0, timeout
        try:
            self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, env=dict(os.environ, **env), text=True,
                                             encoding="utf-8")
        except OSError as error:
            raise error_type(f"the {name} engine's worker cannot start ({' '.join(argv)}): {error}") from error
        self.hello = self.ask({"op": "hello"})
        if self.hello.get("status") != "ok" or self.hello.get("protocol") != 1:
            raise error_type(f"the {name} engine answered hello badly (protocol 1 expected): {self.hello}")

    def ask(self, request):
        self._next_id += 1
        line = json.dumps(dict(request, id=self._next_id)) + "\n"
        try:
            self._process.stdin.write(line)
            self._process.stdin.flush()
            # One answer line per request and nothing else, so nothing waits in the read buffer.
            ready, _, _ = select.select([self._process.stdout], [], [], self._timeout)
            if not ready:
                raise self._error_type(f"the {self.name} engine's worker gave no answer within {self._timeout} s "
                                       f"({self._stderr_tail()})")
            answer_line = self._process.stdout.readline()
        except (BrokenPipeError, OSError):
            answer_line = ""
        if not answer_line:
            raise self._error_type(f"the {self.name} engine's worker died ({self._stderr_tail()})")
        try:
            answer = json.loads(answer_line)
        except ValueError as error:
            raise self._error_type(f"the {self.name} engine answered a line that is not JSON ({error}): "
                                   f"{answer_line[:200]!r}") from error
        if not isinstance(answer, dict) or answer.get("id") != self._next_id:
            raise self._error_type(f"the {self.name} engine answered another request: {answer_line[:200]!r}")
        return answer

    def _stderr_tail(self):
        self._process.kill()
        _, err = self._process.communicate(timeout=10)
        tail = err.strip().splitlines()[-5:]
        return "its stderr ends: " + " | ".join(tail) if tail else "its stderr was empty"

    def close(self):
        if self._process.poll() is None:
            self._process.stdin.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            stream.close()

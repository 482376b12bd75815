"""The shared result cache, for the Python lanes: the same keys, files and checks as
parity/lane_support/src/result_cache.cpp (format in docs/run_diff.md, "Result cache").

An entry <dir>/<key[0:2]>/<key> is three header lines and the value:
    kemit-result-cache 1
    key <key>
    sha256 <sha256 of the value>
    <value bytes, to the end of the file>
The key is the sha256 of "kemit-result-cache-key 1\\n" followed, for each part, by
"<byte length>:<bytes>\\n". A broken entry is deleted, counted, reported and recomputed.
"""
import hashlib
import os
import threading

MAGIC = b"kemit-result-cache 1"
KEY_PREFIX = b"kemit-result-cache-key 1\n"


def cache_key(parts):
    """sha256 hex over length-prefixed parts (str or bytes)."""
    material = bytearray(KEY_PREFIX)
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else bytes(part)
        material += str(len(data)).encode() + b":" + data + b"\n"
    return hashlib.sha256(material).hexdigest()


def resolve_cache_dir(flag_dir, no_cache, build_dir):
    """--no-cache -> None; --cache DIR; else $KEMIT_CACHE; else <build>/result-cache."""
    if no_cache:
        return None
    return flag_dir or os.environ.get("KEMIT_CACHE") or os.path.join(build_dir, "result-cache")


def default_max_bytes():
    try:
        megabytes = int(os.environ.get("KEMIT_CACHE_MAX_MB", "0"))
    except ValueError:
        megabytes = 0
    return (megabytes if megabytes > 0 else 1024) << 20


class ResultCache:
    def __init__(self, directory, max_bytes=None):
        self.directory = directory  # None: disabled
        self.max_bytes = max_bytes or default_max_bytes()
        self.hits = self.misses = self.stored = self.corrupt = 0
        self.problems = []
        self._lock = threading.Lock()

    @property
    def enabled(self):
        return self.directory is not None

    def path_of(self, key):
        return os.path.join(self.directory, key[:2], key)

    def get(self, key):
        """The verified value (bytes), or None on a miss or a broken entry."""
        if not self.enabled:
            return None
        path = self.path_of(key)
        value = None
        try:
            with open(path, "rb") as handle:
                text = handle.read()
        except OSError:
            text = None
        if text is not None:
            value, why = _verified_value(text, key)
            if value is None:
                self._record_corrupt(path, why)
            else:
                _touch(path)
        with self._lock:
            if value is None:
                self.misses += 1
            else:
                self.hits += 1
        return value

    def reject(self, key, why):
        """The caller could not use the value get() gave: corrupt, deleted, counted as a miss."""
        self._record_corrupt(self.path_of(key), why)
        with self._lock:
            self.hits -= 1
            self.misses += 1

    def put(self, key, value):
        if not self.enabled:
            return
        path = self.path_of(key)
        temporary = f"{path}.tmp.{os.getpid()}.{threading.get_ident()}"
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(temporary, "wb") as handle:
                handle.write(MAGIC + b"\nkey " + key.encode() + b"\nsha256 " +
                             hashlib.sha256(value).hexdigest().encode() + b"\n" + value)
            os.replace(temporary, path)  # atomic: a reader sees the old entry or the new one
        except OSError as error:
            with self._lock:
                self.problems.append(f"cannot write cache entry {path} ({error}): not cached")
            return
        with self._lock:
            self.stored += 1

    def prune(self):
        """Deletes least recently used entries until the cache is under 90% of its cap."""
        if not self.enabled:
            return
        entries, total = [], 0
        for folder, _, names in os.walk(self.directory):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    status = os.stat(path)
                except OSError:
                    continue  # deleted meanwhile by a concurrent prune
                entries.append((status.st_mtime_ns, status.st_size, path))
                total += status.st_size
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries):
            if total <= self.max_bytes // 10 * 9:
                break
            try:
                os.remove(path)
                total -= size
            except OSError:
                pass

    def summary(self):
        if not self.enabled:
            return "cache: off"
        text = f"cache: {self.hits} hits, {self.misses} misses"
        if self.corrupt:
            text += f", {self.corrupt} corrupt entr{'y' if self.corrupt == 1 else 'ies'} recomputed"
        return text

    def _record_corrupt(self, path, why):
        try:
            os.remove(path)  # never trusted again; the recomputed value replaces it
        except OSError:
            pass
        with self._lock:
            self.corrupt += 1
            self.problems.append(f"corrupt cache entry {path} ({why}): deleted and recomputed")


def _verified_value(text, key):
    lines = text.split(b"\n", 3)
    if len(lines) < 4 or lines[0] != MAGIC or not lines[2].startswith(b"sha256 "):
        return None, "not a kemit-result-cache 1 entry"
    if lines[1] != b"key " + key.encode():
        return None, "its key line names another key"
    value = lines[3]
    if lines[2] != b"sha256 " + hashlib.sha256(value).hexdigest().encode():
        return None, "its value does not match its sha256"
    return value, ""


def _touch(path):
    try:
        os.utime(path)  # most recently used, for prune()
    except OSError:
        pass

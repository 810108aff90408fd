"""The run directory of an evolution run: event log, checkpoints, operators, populations.

Layout::

    config.json              the run's EvolutionConfig (and LLM endpoint, without the key)
    events.jsonl             one JSON object per line: every LLM call, admitted and rejected
                             operator (with its code), episode, validation, cycle
    events.abandoned.jsonl   events of cycles that were in progress when a run was killed
    checkpoint.json          the state after the last finished cycle (atomic)
    populations/cycle_NNN.json   the populations and their scores after cycle NNN (atomic)
    operators/<id>.py        the code of every admitted operator, with its lineage
    best_operators.py        the final populations and the best pair as an importable module
    summary.txt, convergence.png   written at the end of the run

Files that must never be seen half-written are written to a temporary file, flushed to disk
and renamed over the old one (``os.replace`` is atomic on POSIX). The event log is appended
line by line and flushed; the checkpoint records its length, so a resumed run cuts what the
killed run appended after its last checkpoint (and keeps it in ``events.abandoned.jsonl``).
While the checkpoint of a cycle is still to be written (its validation runs alongside the next
cycle's LLM requests), the next cycle's events are held back in memory (:meth:`hold`) and
appended after that checkpoint, so the recorded length always separates the two cycles.
A lock file keeps two processes from writing one directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from glns.exceptions import GlnsError

__all__ = ["RunDirectory", "RunDirectoryError", "atomic_write", "atomic_write_json"]

logger = logging.getLogger(__name__)


class RunDirectoryError(GlnsError, RuntimeError):
    """The run directory cannot be used (locked by another run, missing, not a run)."""


def _json_default(value: Any) -> Any:
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _clean(value: Any) -> Any:
    """A JSON-ready copy: numpy values as lists/numbers, tuples and sets as lists, and inf/nan
    as strings (JSON has none), so the files stay standard JSON."""
    if hasattr(value, "tolist"):      # numpy arrays and scalars
        return _clean(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(v) for v in value]
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """Standard JSON (inf/nan as strings, numpy values as lists/numbers)."""
    return json.dumps(_clean(value), default=_json_default, indent=indent, allow_nan=False)


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable (POSIX); silently skipped where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write `data` (str: UTF-8, newlines kept as they are) to `path` atomically: a temporary
    file in the same directory, flushed to disk, then renamed over `path`. A reader (or a run
    killed meanwhile) sees the old file or the new one, never a torn one."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)
    return path


def atomic_write_json(path: str | os.PathLike, value: Any) -> Path:
    return atomic_write(path, dumps(value, indent=1) + "\n")


class RunDirectory:
    """Files of one evolution run. Open with :meth:`create` or :meth:`open` (for resuming)."""

    CHECKPOINT = "checkpoint.json"
    CONFIG = "config.json"
    EVENTS = "events.jsonl"
    ABANDONED = "events.abandoned.jsonl"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_file: Any = None
        self._events: Any = None
        self._write_lock = threading.Lock()   # events come from several threads
        self._held: list[str] | None = None

    # ------------------------------------------------------------------ opening
    @classmethod
    def create(cls, path: str | os.PathLike, config: Mapping[str, Any]) -> "RunDirectory":
        """A new run in `path` (created if missing; it must not hold a run already)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if (path / cls.CONFIG).exists() or (path / cls.EVENTS).exists():
            raise RunDirectoryError(f"{path} already holds a run; resume it with --resume {path} "
                                    "or choose another directory")
        rd = cls(path)
        rd._lock()
        (path / "operators").mkdir(exist_ok=True)
        (path / "populations").mkdir(exist_ok=True)
        atomic_write_json(path / cls.CONFIG, config)
        rd._events = open(path / cls.EVENTS, "a", encoding="utf-8")
        return rd

    @classmethod
    def open(cls, path: str | os.PathLike) -> "RunDirectory":
        """An existing run, for resuming: cuts the event log back to the last checkpoint."""
        path = Path(path)
        cls._require_run(path)
        rd = cls(path)
        rd._lock()
        (path / "operators").mkdir(exist_ok=True)
        (path / "populations").mkdir(exist_ok=True)
        checkpoint = rd.read_checkpoint()
        offset = int(checkpoint["events_offset"]) if checkpoint else 0
        rd._cut_events(offset)
        rd._events = open(path / cls.EVENTS, "a", encoding="utf-8")
        return rd

    @classmethod
    def _require_run(cls, path: Path) -> None:
        if not (path / cls.CONFIG).is_file():
            raise RunDirectoryError(f"{path} is not a glns evolution run (no {cls.CONFIG})")

    @classmethod
    def read_run_config(cls, path: str | os.PathLike) -> dict[str, Any]:
        """The saved configuration of the run in `path`, read without opening (locking) it."""
        path = Path(path)
        cls._require_run(path)
        return cls(path).read_config()

    def _lock(self) -> None:
        self._lock_file = open(self.path / ".lock", "w")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise RunDirectoryError(f"{self.path} is in use by another glns evolve process") from None

    def _cut_events(self, offset: int) -> None:
        events = self.path / self.EVENTS
        if not events.exists():
            events.touch()
            return
        size = events.stat().st_size
        if size <= offset:
            return
        with open(events, "rb") as f:
            f.seek(offset)
            tail = f.read()
        if not tail.endswith(b"\n"):
            tail += b"\n"   # a line torn by the kill stays readable as one (broken) line
        with open(self.path / self.ABANDONED, "ab") as f:
            f.write(tail)
            f.flush()
            os.fsync(f.fileno())
        with open(events, "r+b") as f:
            f.truncate(offset)
            f.flush()
            os.fsync(f.fileno())
        logger.info("%s: %d bytes of events logged after the last checkpoint moved to %s (that "
                    "cycle is run again)", self.path, len(tail), self.ABANDONED)

    def close(self) -> None:
        if self._events is not None:
            self.release()   # after the last checkpoint in any case: kept as abandoned on resume
            self._events.close()
            self._events = None
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    def __enter__(self) -> "RunDirectory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def log(self, event: str, **fields: Any) -> None:
        """Append one event (a JSON line with the wall time and the event's name); while the
        log is held, keep it for :meth:`release`."""
        self._write(event, fields, hold=True)

    def log_now(self, event: str, **fields: Any) -> None:
        """Append one event even while the log is held (events of the cycle being closed)."""
        self._write(event, fields, hold=False)

    def _write(self, event: str, fields: Mapping[str, Any], hold: bool) -> None:
        line = dumps({"time": round(time.time(), 3), "event": event, **fields})
        with self._write_lock:
            if hold and self._held is not None:
                self._held.append(line)
            else:
                self._append(line)

    def _append(self, line: str) -> None:
        self._events.write(line + "\n")
        self._events.flush()

    def hold(self) -> None:
        """Keep the events of :meth:`log` in memory until :meth:`release`."""
        with self._write_lock:
            if self._held is None:
                self._held = []

    def release(self) -> None:
        """Append the held events and log directly again."""
        with self._write_lock:
            held, self._held = self._held or [], None
            for line in held:
                self._append(line)

    def events_offset(self) -> int:
        """Bytes in the event log so far (recorded in the checkpoint)."""
        with self._write_lock:
            self._events.flush()
            os.fsync(self._events.fileno())
            return self._events.tell()

    def write_checkpoint(self, state: Mapping[str, Any]) -> None:
        atomic_write_json(self.path / self.CHECKPOINT, {**state, "events_offset": self.events_offset()})

    def write_population(self, cycle: int, data: Mapping[str, Any]) -> None:
        atomic_write_json(self.path / "populations" / f"cycle_{cycle:03d}.json", data)

    def write_operator(self, member_id: str, text: str) -> Path:
        return atomic_write(self.path / "operators" / f"{member_id}.py", text)

    # ------------------------------------------------------------------ reading
    def read_json(self, name: str) -> Any:
        """A JSON file of the run directory."""
        return json.loads((self.path / name).read_text(encoding="utf-8"))

    def read_config(self) -> dict[str, Any]:
        return json.loads((self.path / self.CONFIG).read_text(encoding="utf-8"))

    def read_checkpoint(self) -> dict[str, Any] | None:
        p = self.path / self.CHECKPOINT
        if not p.exists():
            return None
        return json.loads(p.read_text(encoding="utf-8"))

    def events(self) -> list[dict[str, Any]]:
        """Every readable event of the log (a torn last line is skipped)."""
        return read_events(self.path / self.EVENTS)


def read_events(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The events of a JSON-lines log; lines that do not parse (torn by a kill) are skipped."""
    out = []
    p = Path(path)
    if not p.exists():
        return out
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out

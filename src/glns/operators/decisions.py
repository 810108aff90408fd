"""Forms decided once: kept on disk, carried by tasks, adopted by workers.

A Python operator's form (:mod:`glns.operators.accelerate`) is negotiated on its first calls in
a run. The decision holds for every instance of the problem kind, so it is kept:

- in this process (``accelerate``'s per-process cache);
- on disk, next to the compiled twins (``<compile cache>/decisions/<operator>.json``, or
  ``$GLNS_DECISION_DIR``), so that
  a later process (a new script, a worker of a new pool) adopts it without recording or
  probing. A process that cannot write there (a confined sandbox worker) sends its new
  decisions to its caller, which keeps them (:func:`drain_new`, :func:`save`);
- in tasks: ``glns.solve_many`` and ``glns.sandbox.evaluate`` hand each task the decisions
  known for its operators (:func:`known`), and the worker adopts them (:func:`offer`) before it
  binds, so that workers on other machines (Ray) negotiate nothing either.

A decision is keyed by the operator (its source, with the versions of glns and NumPy, and its
entry function) and by the context it was made in (operator and problem kind, calling convention,
views setting, whether the python view fits, and which compiled twin, if any: a new build is
decided afresh). It names a form
and says why; it cannot make an operator's output reach the solver unchecked, since every
output is still validated, whatever form produced it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from glns.compiler.cache import cache_dir
from glns.version import __version__

__all__ = ["EVENT_TAG", "ENV_DIR", "decisions_dir", "operator_id", "context_key", "lookup", "remember", "offer", "known", "save",
           "drain_new", "wire_ids", "listener", "FORM_LABELS"]

#: the tag of the event a worker's task sends with the decisions it could not store
EVENT_TAG = "glns-decisions"

#: the labels a stored decision may name (anything else in a file is ignored)
FORM_LABELS = ("numpy", "python", "compiled+numpy", "compiled+python")

_LOCK = threading.Lock()
#: decisions carried by tasks or read from disk: operator id -> {context: (form, reason)}
_OFFERED: dict[str, dict[str, tuple[str, str]]] = {}
#: decisions made in this process and not yet reported: operator id -> {context: (form, reason)}
_NEW: dict[str, dict[str, tuple[str, str]]] = {}


@functools.lru_cache(maxsize=1024)   # (a caller hashes the same sources for every task)
def operator_id(source: str) -> str:
    """The id of the decisions on the operators of a source: a hash of the source and the
    versions of glns and NumPy (a new version negotiates again)."""
    blob = json.dumps([__version__, np.__version__, source])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def context_key(entry: str, op_kind: str, problem_kind: str, convention: str, views: str,
                python_ok: bool, twin: str, coincident: bool = False) -> str:
    """The operator (its entry function) and the context a decision was made in, as a key;
    `twin` is the compile-cache key of the compiled twin it chose among, "" when none;
    `coincident`: made on an instance with coincident nodes (there the views part)."""
    return (f"{entry}|{op_kind}|{problem_kind}|{convention}|{views}|{int(python_ok)}|{twin}"
            + ("|coincident" if coincident else ""))


#: environment variable naming where decisions are kept (default: "decisions" in the compile cache)
ENV_DIR = "GLNS_DECISION_DIR"


def decisions_dir() -> Path:
    """Where decisions are kept: ``$GLNS_DECISION_DIR``, else ``decisions/`` in the compile
    cache (:func:`glns.compiler.cache_dir`)."""
    explicit = os.environ.get(ENV_DIR)
    return Path(explicit).expanduser() if explicit else cache_dir() / "decisions"


def _file(op_id: str) -> Path:
    return decisions_dir() / f"{op_id}.json"


def _read(op_id: str) -> dict[str, tuple[str, str]]:
    """The decisions stored on disk for an operator ({} when none or unreadable)."""
    try:
        with open(_file(op_id), encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError):
        return {}
    return _valid(raw)


def _valid(raw: Any) -> dict[str, tuple[str, str]]:
    """The well-formed entries of a {context: [form, reason]} mapping."""
    out: dict[str, tuple[str, str]] = {}
    if isinstance(raw, dict):
        for context, value in raw.items():
            if isinstance(context, str) and isinstance(value, (list, tuple)) and len(value) == 2 \
                    and value[0] in FORM_LABELS and isinstance(value[1], str):
                out[context] = (value[0], value[1])
    return out


def lookup(op_id: str, context: str) -> tuple[str, str] | None:
    """(form label, reason) decided earlier for the operator in this context: carried by a
    task, or stored on disk; None when it must be negotiated."""
    with _LOCK:
        hit = _OFFERED.get(op_id, {}).get(context)
    if hit is not None:
        return hit
    stored = _read(op_id)
    if stored:
        with _LOCK:
            _OFFERED.setdefault(op_id, {}).update(stored)
    return stored.get(context)


def remember(op_id: str, context: str, form: str, reason: str) -> None:
    """Keep a decision made in this process: on disk when this process may write there, else
    in the list :func:`drain_new` reports to a caller (a confined worker's)."""
    with _LOCK:
        _OFFERED.setdefault(op_id, {})[context] = (form, reason)
    if not save({op_id: {context: (form, reason)}}):
        with _LOCK:
            _NEW.setdefault(op_id, {})[context] = (form, reason)


def offer(decisions: dict[str, Any] | None) -> None:
    """Adopt decisions carried by a task ({operator id: {context: [form, reason]}})."""
    if not decisions:
        return
    with _LOCK:
        for op_id, entries in decisions.items():
            if isinstance(op_id, str):
                _OFFERED.setdefault(op_id, {}).update(_valid(entries))


def known(op_ids: Any) -> dict[str, dict[str, tuple[str, str]]]:
    """The decisions known here (carried, made or stored) for these operators, for a task."""
    out = {}
    for op_id in dict.fromkeys(op_ids):
        entries = {**_read(op_id)}
        with _LOCK:
            entries.update(_OFFERED.get(op_id, {}))
        if entries:
            out[op_id] = entries
    return out


def drain_new() -> dict[str, dict[str, tuple[str, str]]]:
    """The decisions made in this process since the last call that it could not store itself
    (a confined worker reports them to its caller)."""
    with _LOCK:
        out = dict(_NEW)
        _NEW.clear()
    return out


def save(decisions: dict[str, Any]) -> bool:
    """Store decisions on disk, merged with what is there; False when this process cannot
    write (a confined worker, a read-only cache). Never raises for I/O."""
    ok = True
    for op_id, entries in decisions.items():
        entries = _valid(entries)
        if not isinstance(op_id, str) or not op_id.isalnum() or not entries:
            continue
        path = _file(op_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            merged = {**_read(op_id), **entries}
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(merged, f)
                os.replace(tmp, path)   # atomic: a reader sees the old file or the new one
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            ok = False
    return ok



def wire_ids(wires: Any) -> list[str]:
    """The decision ids of the Python operators among operator wires (``Operator.wire()``:
    ``("python", source, entry, name)``); an operator imported by name has none before it is
    loaded."""
    out = []
    for wire in wires:
        if wire[0] == "python" and isinstance(wire[1], str):
            out.append(operator_id(wire[1]))
    return out


def listener(allowed: set[str], inner: Any = None) -> Any:
    """An ``on_event(i, event)`` for an executor's map: keeps the decisions a worker reports
    (only for the operators in `allowed`, the ids of the tasks' own operators) and hands every
    other event to `inner`."""

    def on_event(i: int, event: Any) -> Any:
        if type(event) is tuple and len(event) == 2 and event[0] == EVENT_TAG:
            if isinstance(event[1], dict):
                save({k: v for k, v in event[1].items() if k in allowed})
            return False
        return inner(i, event) if inner is not None else False

    return on_event

"""Choosing an executor by backend name: "serial", "process" or "ray"."""

from __future__ import annotations

from typing import Any

from glns.executors.base import Executor, check_workers
from glns.executors.process import WorkerPool
from glns.executors.ray_actors import RayExecutor
from glns.executors.serial import SerialExecutor

__all__ = ["BACKENDS", "make_executor"]

#: the backend names of :func:`make_executor`
BACKENDS = ("serial", "process", "ray")


def make_executor(backend: str = "process", workers: int | None = None, *,
                  address: str | None = None, memory_mb: int | None = None,
                  sandbox: Any = None) -> Executor:
    """An executor by backend name; close it (or use it in a ``with`` block) when done.

    workers: processes or Ray actors (default: all cores of this machine, or all CPUs of the
    Ray cluster); "serial" accepts only None or 1. address: the Ray cluster to connect to
    ("auto", "ray://host:10001", ...; "ray" only; default: the runtime already initialised in
    this process, else a new local one). memory_mb: address-space limit of each worker process
    ("process" only; default: none). sandbox: OS-level confinement of the workers ("process"
    only; see :class:`WorkerPool`).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    workers = check_workers(workers)
    if address is not None and backend != "ray":
        raise ValueError(f"address is for the 'ray' backend only (backend is {backend!r})")
    if memory_mb is not None and backend != "process":
        raise ValueError(f"memory_mb is for the 'process' backend only (backend is {backend!r})")
    if sandbox not in (None, False, "off") and backend != "process":
        raise ValueError(f"sandbox is for the 'process' backend only (backend is {backend!r}): "
                         "serial runs in this process and Ray actors are not confined")
    if backend == "serial":
        if workers not in (None, 1):
            raise ValueError(f"the 'serial' backend runs one task at a time; workers={workers}")
        return SerialExecutor()
    if backend == "process":
        return WorkerPool(workers=workers, memory_mb=memory_mb, sandbox=sandbox)
    return RayExecutor(workers=workers, address=address)

"""The loop of a worker process of :class:`glns.executors.WorkerPool` (the child side).

It imports nothing of glns but the executor basics: the modules a task needs come with the task
(unpickling imports them) or, with the "forkserver" start method, are already loaded by the fork
server (:data:`glns.executors.process.PRELOAD`).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading
from typing import Any

from glns.executors.base import call_task
from glns.executors.channel import STOP, PipeChannel, using
from glns.executors.confinement import Confinement, apply

__all__ = ["worker_main"]


def _limit_memory(memory_mb: int | None) -> None:
    if memory_mb is None:
        return
    limit = int(memory_mb) * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    # soft and hard: the code under test cannot raise its own limit again
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _silence() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _tidy_up(recursion_limit: int) -> bool:
    """Undo what a task may have left behind; False if the worker cannot be trusted any more.

    Code under test may block or redirect SIGALRM (which would disable the next task's
    in-process time limit) or leave threads running that keep using CPU and memory.
    """
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    sys.setrecursionlimit(recursion_limit)
    return threading.active_count() == 1


def worker_main(conn: Any, memory_mb: int | None, quiet: bool,
                confinement: Confinement | None = None) -> None:
    """Answer (fn, args) messages with (status, value, message, seconds, retire) until None or EOF.

    A task may send events on the same pipe while it runs (glns.executors.channel).

    retire: the worker leaves after this answer (see _tidy_up); the parent replaces it.
    confinement: applied before the first task; if it fails (strict mode), every task is
    answered with the error instead of being run.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C is the parent's business
    try:
        os.setsid()   # own process group: the parent's kill also reaches processes the code starts
    except OSError:
        pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))   # no core files from crashing code
    if quiet:
        _silence()
    _limit_memory(memory_mb)
    refused = None
    if confinement is not None and confinement.active:
        try:
            apply(confinement)
        except Exception as exc:   # strict mode: run nothing unconfined
            refused = f"the sandbox could not be applied: {type(exc).__name__}: {exc}"
    recursion_limit = sys.getrecursionlimit()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        except Exception as exc:  # a task that cannot be unpickled here
            conn.send(("error", None, f"cannot read the task: {type(exc).__name__}: {exc}", 0.0, False))
            continue
        if msg is None:
            return
        if msg == STOP:     # a stop request for a task that has ended meanwhile
            continue
        fn, args = msg
        if refused is not None:
            conn.send(("error", None, refused, 0.0, False))
            continue
        # BaseException: SystemExit and the bridge's timeout included
        with using(PipeChannel(conn)):
            *answer, seconds = call_task(fn, args, f"exceeded the memory limit of {memory_mb} MB",
                                         BaseException)
        try:
            retire = not _tidy_up(recursion_limit)
        except BaseException:
            retire = True
        try:
            conn.send((*answer, seconds, retire))
        except MemoryError:
            conn.send(("memory", None, f"exceeded the memory limit of {memory_mb} MB", seconds, True))
        except (BrokenPipeError, OSError):
            return
        except Exception as exc:  # e.g. a return value that cannot be pickled
            conn.send(("error", None, f"cannot send the result: {type(exc).__name__}: {exc}",
                       seconds, retire))
        del fn, args, answer, msg
        if retire:
            os._exit(0)   # threads left running: do not wait for them

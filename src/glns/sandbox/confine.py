"""The confinement of the sandbox's workers: what they import first and may read afterwards.

:func:`sandbox_confinement` builds the :class:`glns.executors.confinement.Confinement` that the
pre-evaluation filter, the episodes and validation of ``glns evolve``, final testing,
:func:`glns.sandbox.evaluate` and ``solve_many(..., sandbox=True)`` give their worker pools:
the modules an operator may import are imported before the confinement starts, and the
compiled-operator cache stays readable, so compiled twins load in a confined worker.
"""

from __future__ import annotations

from typing import Any, Iterable

from glns.compiler.cache import cache_dir
from glns.executors.confinement import Confinement, as_confinement
from glns.policy import ALLOWED_IMPORTS

__all__ = ["sandbox_confinement", "PRELOAD"]

#: imported in every confined worker before its first task: the operators' modules and the
#: task functions of the sandbox
PRELOAD = (*(m for m in ALLOWED_IMPORTS if m != "__future__"), "glns.sandbox.check_worker",
           "glns.sandbox.evaluation", "glns.compiler.loader", "glns.operators.accelerate")


def sandbox_confinement(mode: Any = "auto", *, scrub: Iterable[str] = (),
                        read_paths: Iterable[str] = ()) -> Confinement | None:
    """The confinement for workers that run untrusted operator code (None for mode "off").

    mode: "strict", "auto", "off", True ("auto"), False/None ("off") or a Confinement (taken
    as it is). scrub: more environment variable names to remove (e.g. the API key variables
    an LLM configuration names). read_paths: more paths the code may read.
    """
    if isinstance(mode, Confinement):
        return as_confinement(mode)
    base = as_confinement(mode)
    if base is None:
        return None
    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)   # Landlock grants only paths that exist
    except OSError:
        pass
    return Confinement(mode=base.mode, read_paths=(str(cache), *read_paths), scrub=tuple(scrub),
                       preload=PRELOAD)

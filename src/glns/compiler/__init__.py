"""Compile Python operators with Cython, cached on disk.

The unchanged source of an operator (plain Python functions, e.g. an LLM's answer) becomes an
extension module:

>>> from glns import compiler
>>> out = compiler.compile_source(source)                     # doctest: +SKIP
>>> if out.ok:                                                 # doctest: +SKIP
...     from glns.operators.bridge import OPERATOR_GLOBALS
...     module = compiler.load_module(out, OPERATOR_GLOBALS)

The source is untrusted: it must pass :func:`compile_violation` (the admission policy plus
Cython's directive comments), it is never executed by compiling, and Cython and the C
compiler run in a child process with a time and memory limit. A second compile of the same
source (same Cython, Python and compiler) is a cache hit and starts no process. With
``signal_checks`` (the default) the compiled code still sees signals (the operator time
limit) and raises RecursionError at the interpreter's recursion limit (see
:mod:`glns.compiler.transform`).

Cython is an optional dependency (``pip install 'glns[compile]'``): without it this package
imports fine and :func:`compile_source` reports "unavailable".
"""

from glns.compiler.cache import cache_dir, cache_key, clear_cache
from glns.compiler.driver import CompileOutcome, add_search_dir, compile_source, lookup
from glns.compiler.loader import load_module
from glns.compiler.screen import compile_violation
from glns.compiler.toolchain import unavailable_reason

__all__ = ["CompileOutcome", "compile_source", "lookup", "add_search_dir", "load_module", "cache_key", "cache_dir",
           "clear_cache", "unavailable_reason", "compile_violation"]

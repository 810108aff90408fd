"""Which operator sources may be compiled: the admission policy plus Cython's own escapes.

The source is compiled as a ``.py`` file (Cython's pure-Python mode), where ``cimport``,
``include``, ``DEF``/``IF`` and ``cdef`` are not keywords, so any such statement is a syntax
error already, and ``import cython`` is outside the policy's allowed imports. What remains is
the compiler-directive comments Cython reads from any source (``# cython: boundscheck=False``
would change semantics, ``# distutils: ...`` could add libraries or flags); those, and the
words ``cimport``/``include`` used as statements, are refused here.
"""

from __future__ import annotations

import io
import re
import tokenize

from glns.policy import parse_source, policy_violation

__all__ = ["compile_violation"]

# anywhere, any spacing or case: also inside strings (refusing those costs nothing)
_DIRECTIVE = re.compile(r"#\s*(cython|distutils)\s*:", re.IGNORECASE)


def compile_violation(source: str) -> str | None:
    """Why `source` may not be compiled (None if it may): it must parse, pass
    :func:`glns.policy.policy_violation` (the admission check), and hold no Cython
    directive comment (``# cython:``/``# distutils:``) nor ``cimport``/``include``."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str, got {type(source).__name__}")
    try:
        parse_source(source)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes, absurd nesting
        return f"source cannot be parsed: {type(exc).__name__}: {exc}"
    why = policy_violation(source)
    if why is not None:
        return why
    m = _DIRECTIVE.search(source)
    if m is not None:
        line = source.count("\n", 0, m.start()) + 1
        return (f"contains a Cython compiler directive comment {m.group(0)!r} (line {line}); "
                "operators may not set compiler options")
    return _cython_word(source)


def _cython_word(source: str) -> str | None:
    """`cimport` as a name anywhere, or a statement ``include "file"``/``include("file")``
    (a variable named ``include`` is fine)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):  # cannot happen for source that parses
        return "source cannot be tokenized"
    tokens = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
    line_start = True
    for tok, after in zip(tokens, tokens[1:] + tokens[-1:]):
        if tok.type == tokenize.NAME and tok.string == "cimport":
            return f"uses 'cimport' (line {tok.start[0]}); operators are plain Python"
        if line_start and tok.type == tokenize.NAME and tok.string == "include" \
                and (after.type == tokenize.STRING or after.string == "("):
            return f"'include' statement (line {tok.start[0]}); operators are plain Python"
        line_start = tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) \
            or (tok.type == tokenize.OP and tok.string == ";")
    return None

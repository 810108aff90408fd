"""A static policy check of generated operator code, before it runs anywhere.

The operator contract (docs/operator-contract.md, and the task description every prompt carries)
allows a few modules and no I/O. Code that imports anything else (``os``, ``subprocess``,
``socket`` ...) or reaches for the interpreter's escape hatches (``__import__``, ``eval``,
``open``, ``__subclasses__`` ...) breaks that contract and is rejected with the offending line.

This is a filter for code that does not follow the rules, not a security boundary: the
process sandbox (separate worker processes with time and memory limits) is what contains
code that misbehaves at run time.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "policy_violation", "parse_source"]

#: top-level modules an operator may import
ALLOWED_IMPORTS = ("numpy", "random", "math", "copy", "itertools", "heapq", "collections",
                   "functools", "operator", "bisect", "statistics", "typing", "dataclasses",
                   "time", "numbers", "enum", "__future__")
#: names and attributes an operator may not use
FORBIDDEN_NAMES = ("__import__", "eval", "exec", "compile", "open", "input", "breakpoint",
                   "__builtins__", "__subclasses__", "__globals__", "__code__", "__getattribute__",
                   "__loader__", "__spec__", "memoryview")


_PARSE_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time: CPython 3.11 converts parse trees with a
    process-wide recursion counter, and two threads parsing at once fail with "SystemError: AST
    constructor recursion depth mismatch" (seen here: a background build's check racing the
    solver's)."""
    with _PARSE_LOCK:
        return ast.parse(source)


def policy_violation(source: str, allowed_imports: tuple[str, ...] = ALLOWED_IMPORTS) -> str | None:
    """Why `source` breaks the operator rules (None if it does not, or if it does not parse:
    the syntax check reports that)."""
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    allowed = set(allowed_imports)
    for node in ast.walk(tree):
        where = f" (line {getattr(node, 'lineno', '?')})"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in allowed:
                    return (f"imports {alias.name!r}{where}; operators may only import "
                            f"{', '.join(m for m in allowed_imports if m != '__future__')}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module.split(".")[0] not in allowed:
                return (f"imports from {module or '.'!r}{where}; operators may only import "
                        f"{', '.join(m for m in allowed_imports if m != '__future__')}")
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            return f"uses {node.id!r}{where}, which operators may not use (no I/O, no dynamic code)"
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            return f"uses '.{node.attr}'{where}, which operators may not use"
    return None

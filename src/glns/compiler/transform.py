"""The source rewrite applied before Cython sees an operator: signal and recursion checks.

Compiled code never runs the interpreter's eval loop, so two things the interpreter does for
free are lost (measured on Cython 3.3 / CPython 3.11):

- signal handlers run only when C code calls ``PyErr_CheckSignals()``: a compiled
  ``while True: pass`` never sees the SIGALRM of ``glns.operators.bridge.time_limit``;
- calls between compiled functions go through vectorcall, which does not count recursion
  depth: infinite recursion overflows the C stack (SIGSEGV) instead of raising RecursionError,
  and ``sys.setrecursionlimit`` is ignored.

With checks on, :func:`transform` puts a signal check at the top of every loop body, in every
comprehension (as a first, always-true ``if``) and in every lambda, and brackets every function
body with ``Py_EnterRecursiveCall``/``Py_LeaveRecursiveCall`` (which also checks signals on
entry). That is where the interpreter checks: backward jumps, calls, frame depth. The helpers
are C inline functions of :data:`RUNTIME_PXD`, cimported in Cython's pure-Python mode, so a
check costs a C call, not a Python one. Function names, signatures and behaviour do not change;
comments are lost (``ast.unparse``).

Not guarded against recursion: lambdas (an expression cannot hold ``try``/``finally``) and
generators and coroutines (their frames are suspended, so depth brackets would not nest); they
still check signals.
"""

from __future__ import annotations

import ast
import re

from glns.policy import parse_source

__all__ = ["RUNTIME_MODULE", "RUNTIME_PXD", "transform"]

#: name of the .pxd holding the check helpers, written next to the module being compiled
RUNTIME_MODULE = "_glns_rt"

#: the check helpers: header-only (inline), so the compiled module imports nothing at run time
RUNTIME_PXD = """\
cdef extern from "Python.h":
    int PyErr_CheckSignals() except -1
    int Py_EnterRecursiveCall(const char *where) noexcept
    void Py_LeaveRecursiveCall() noexcept

# 1 (true), or an exception from a signal handler (e.g. the operator time limit)
cdef inline int tick() except -1:
    PyErr_CheckSignals()
    return 1

# counts one level of recursion like a Python frame does; RecursionError past the limit
cdef inline int enter() except -1:
    PyErr_CheckSignals()
    if Py_EnterRecursiveCall(""):
        return -1
    return 1

cdef inline void leave() noexcept:
    Py_LeaveRecursiveCall()
"""

_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def transform(source: str, *, signal_checks: bool = True) -> str:
    """The module source handed to Cython for operator `source` (which must parse).

    Without signal checks the source is returned unchanged except for a PEP 263 coding line,
    which is neutralised: the file Cython reads is always written as UTF-8.
    """
    tree = parse_source(source)
    if not signal_checks:
        return _neutralise_coding(source)
    used = _identifiers(tree)
    names = {helper: _fresh(f"_glns_{helper}", used) for helper in ("tick", "enter", "leave")}
    _Instrument(names).visit(tree)
    imports = ", ".join(f"{helper} as {alias}" for helper, alias in names.items())
    cimport = parse_source(f"from cython.cimports.{RUNTIME_MODULE} import {imports}").body[0]
    tree.body.insert(_preamble_length(tree), cimport)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n"


def _neutralise_coding(source: str) -> str:
    lines = source.split("\n")
    for i in range(min(2, len(lines))):  # PEP 263: only the first two lines count
        if _CODING_COOKIE.match(lines[i]):
            lines[i] = "#"
    return "\n".join(lines)


def _identifiers(tree: ast.AST) -> set[str]:
    """Every string in the tree (names, attributes, arguments, constants): helper names avoid
    them all, so they can never shadow or be shadowed by the operator's own names."""
    found: set[str] = set()
    for node in ast.walk(tree):
        for _, value in ast.iter_fields(node):
            if isinstance(value, str):
                found.add(value)
            elif isinstance(value, list):
                found.update(v for v in value if isinstance(v, str))
    return found


def _fresh(base: str, used: set[str]) -> str:
    name, i = base, 0
    while name in used:
        i += 1
        name = f"{base}{i}"
    used.add(name)
    return name


def _preamble_length(tree: ast.Module) -> int:
    """Statements that must stay first: the module docstring and ``from __future__`` imports."""
    n = 0
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        n = 1
    while n < len(body) and isinstance(body[n], ast.ImportFrom) and body[n].module == "__future__":
        n += 1
    return n


def _has_docstring(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[0], ast.Expr) \
        and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)


def _is_generator(func: ast.FunctionDef) -> bool:
    """Whether `func` itself (not a nested scope) contains yield."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


class _Instrument(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def _call(self, helper: str) -> ast.Call:
        return ast.Call(func=ast.Name(id=self.names[helper], ctx=ast.Load()), args=[], keywords=[])

    def _stmt(self, helper: str) -> ast.Expr:
        return ast.Expr(value=self._call(helper))

    def _loop(self, node):
        self.generic_visit(node)
        node.body.insert(0, self._stmt("tick"))
        return node

    visit_For = visit_AsyncFor = visit_While = _loop

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs.insert(0, self._call("tick"))  # tick() is 1: the filter keeps every item
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        self.generic_visit(node)
        node.body = ast.BoolOp(op=ast.And(), values=[self._call("tick"), node.body])
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        doc = node.body[:1] if _has_docstring(node.body) else []
        rest = node.body[len(doc):]
        if isinstance(node, ast.AsyncFunctionDef) or _is_generator(node):
            node.body = doc + [self._stmt("tick")] + rest
        else:
            guarded = ast.Try(body=rest or [ast.Pass()], handlers=[], orelse=[],
                              finalbody=[self._stmt("leave")])
            node.body = doc + [self._stmt("enter"), guarded]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

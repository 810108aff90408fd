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

Element reads are rewritten too, with or without checks: every ``x[i]`` and ``x[i, j]`` that
is read (not assigned, deleted or annotated) becomes a call of a C helper, and so does every
one-argument call ``m.array(x)``, ``m.argmin(x)``, ``m.argmax(x)``, and every ``a + b`` and
``a - b`` without a literal operand. The helpers
(:data:`READS_HEADER`, ``reads.h``) have direct paths for what operators do in inner loops:
a list or tuple item or an element of a float64/int64 NumPy array at exact ``int`` indices,
advanced indexing with 1-D int64 index arrays (``d[prev, c]``), ``np.array`` of a list of
ints or floats, ``np.argmin``/``np.argmax`` of a 1-D array, the sum and difference of two
float64 vectors. Anything else (slices, other
types and dtypes, out of bounds, another function) does exactly what the expression does. An
operator written in NumPy style (``d = np.asarray(problem_data["distance_matrix"])``, then
``d[a, b]``) runs several times faster this way. The one difference from NumPy: an element
read this way, and the index argmin/argmax return, is a Python ``float`` or ``int``, not a
NumPy scalar (as in the python view), so a compiled form is taken only where its outputs are
identical (:mod:`glns.operators.probe`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from glns.policy import parse_source

__all__ = ["RUNTIME_MODULE", "RUNTIME_PXD", "READS_FILE", "READS_HEADER", "transform"]

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

cdef extern from "_glns_reads.h":
    int glns_arrays() except -1
    object glns_at1(object a, object i)
    object glns_at2(object a, object i, object j)
    object glns_call1(object f, object x)
    object glns_plus_minus(object a, object b, int sub)

# 1, after NumPy's C API is loaded for at1/at2 (once per module, at its import)
cdef inline int arrays() except -1:
    glns_arrays()
    return 1

# x[i], with direct reads for exact ints (see the module doc of glns.compiler.transform)
cdef inline object at1(object x, object i):
    return glns_at1(x, i)

# x[i, j], likewise
cdef inline object at2(object x, object i, object j):
    return glns_at2(x, i, j)

# f(x) for a call module.function(x), with np.array/np.argmin/np.argmax direct on small data
cdef inline object call1(object f, object x):
    return glns_call1(f, x)

# a + b and a - b, direct for two float64 vectors of one length
cdef inline object plus(object a, object b):
    return glns_plus_minus(a, b, 0)

cdef inline object minus(object a, object b):
    return glns_plus_minus(a, b, 1)
"""

#: the C helpers of at1/at2/call1, written next to the module being compiled as READS_FILE
READS_FILE = "_glns_reads.h"
READS_HEADER = (Path(__file__).parent / "reads.h").read_text(encoding="utf-8")

_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)


def transform(source: str, *, signal_checks: bool = True) -> str:
    """The module source handed to Cython for operator `source` (which must parse).

    A source without element reads, compiled without signal checks, is returned unchanged
    except for a PEP 263 coding line, which is neutralised: the file Cython reads is always
    written as UTF-8.
    """
    tree = parse_source(source)
    used = _identifiers(tree)
    names = {helper: _fresh(f"_glns_{helper}", used) for helper in _READ_HELPERS}
    reads = _ElementReads(names)
    reads.visit(tree)
    if not signal_checks and not reads.rewritten:
        return _neutralise_coding(source)
    if signal_checks:
        names.update({helper: _fresh(f"_glns_{helper}", used) for helper in ("tick", "enter", "leave")})
        _Instrument(names).visit(tree)
    if reads.rewritten:
        names["arrays"] = _fresh("_glns_arrays", used)
    else:
        for helper in _READ_HELPERS:
            del names[helper]
    imports = ", ".join(f"{helper} as {alias}" for helper, alias in names.items())
    header = [parse_source(f"from cython.cimports.{RUNTIME_MODULE} import {imports}").body[0]]
    if reads.rewritten:
        header.append(parse_source(f"{names['arrays']}()").body[0])
    start = _preamble_length(tree)
    tree.body[start:start] = header
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


#: the helpers of the element-read rewrite (cimported under fresh names)
_READ_HELPERS = ("at1", "at2", "call1", "plus", "minus")

#: functions whose one-argument calls (``np.array(x)``, ...) go through call1: it recognises
#: NumPy's own by identity at run time, so any module name and any other function are fine
_CALLS_WITH_DIRECT_PATHS = frozenset({"array", "argmin", "argmax"})


class _ElementReads(ast.NodeTransformer):
    """``x[i]`` -> ``at1(x, i)`` and ``x[i, j]`` -> ``at2(x, i, j)`` where the subscript is read
    and its index holds no slice or starred item; annotations are left alone."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.rewritten = 0

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        index = node.slice
        if isinstance(index, ast.Tuple):
            if len(index.elts) != 2 or any(isinstance(e, (ast.Slice, ast.Starred)) for e in index.elts):
                return node
            helper, args = "at2", [node.value, *index.elts]
        elif isinstance(index, (ast.Slice, ast.Starred)):
            return node
        else:
            helper, args = "at1", [node.value, index]
        self.rewritten += 1
        call = ast.Call(func=ast.Name(id=self.names[helper], ctx=ast.Load()), args=args, keywords=[])
        return ast.copy_location(call, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _CALLS_WITH_DIRECT_PATHS \
                and isinstance(func.value, ast.Name) and len(node.args) == 1 \
                and not isinstance(node.args[0], ast.Starred) and not node.keywords:
            self.rewritten += 1
            call = ast.Call(func=ast.Name(id=self.names["call1"], ctx=ast.Load()),
                            args=[func, node.args[0]], keywords=[])
            return ast.copy_location(call, node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        # (an operand that is a literal keeps Cython's own fast path for it)
        helper = "plus" if isinstance(node.op, ast.Add) else "minus" if isinstance(node.op, ast.Sub) else None
        if helper is None or isinstance(node.left, ast.Constant) or isinstance(node.right, ast.Constant):
            return node
        self.rewritten += 1
        call = ast.Call(func=ast.Name(id=self.names[helper], ctx=ast.Load()),
                        args=[node.left, node.right], keywords=[])
        return ast.copy_location(call, node)

    def _skip_annotations(self, node: ast.AST, *annotations: str) -> ast.AST:
        for field_name, value in ast.iter_fields(node):
            if field_name in annotations:
                continue
            if isinstance(value, list):
                setattr(node, field_name, [self.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field_name, self.visit(value))
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def visit_FunctionDef(self, node):
        return self._skip_annotations(node, "returns")

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        return self._skip_annotations(node, "annotation")

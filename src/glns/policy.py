"""A static policy check of generated operator code, before it runs anywhere.

The operator contract (docs/operator-contract.md, and the task description every prompt carries)
allows a few modules and no I/O. Code that imports anything else (``os``, ``subprocess``,
``socket`` ...) or reaches for the interpreter's escape hatches (``__import__``, ``eval``,
``open``, ``__subclasses__`` ...) breaks that contract and is rejected with the offending line.
So is code that gets around those two rules: private and dunder attributes (``random._os``),
attribute access by a string (``getattr``, ``operator.attrgetter``), a foreign module reached
through an allowed one's attributes (``typing.sys``), and NumPy's file, memory-map and ctypes
APIs (``np.save``, ``a.tofile``, ``np.memmap``, ``a.ctypes``).

This is a filter for code that does not follow the rules, not a security boundary: the
process sandbox (separate worker processes with time and memory limits) is what contains
code that misbehaves at run time. It follows names as written; a module passed around as a
value (``m = typing; m.sys``) is not tracked.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import sys
import threading
import types

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "REFLECTION_NAMES", "NUMPY_IO_NAMES",
           "IMPLICIT_MODULES", "policy_violation", "parse_source"]

#: top-level modules an operator may import
ALLOWED_IMPORTS = ("numpy", "random", "math", "copy", "itertools", "heapq", "collections",
                   "functools", "operator", "bisect", "statistics", "typing", "dataclasses",
                   "time", "numbers", "enum", "__future__")
#: names and attributes an operator may not use; get_type_hints and singledispatch(method)
#: (whose register reads a function's annotations with it) evaluate strings as code
FORBIDDEN_NAMES = ("__import__", "eval", "exec", "compile", "open", "input", "breakpoint",
                   "__builtins__", "__subclasses__", "__globals__", "__code__", "__getattribute__",
                   "__loader__", "__spec__", "memoryview",
                   "get_type_hints", "singledispatch", "singledispatchmethod",
                   # frames and code objects lead to the caller's variables (a worker's pipe)
                   "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_back",
                   "f_locals", "f_globals", "f_builtins", "f_code", "tb_frame", "tb_next",
                   "co_code", "co_consts")
#: names that reach attributes by a string or list a namespace: ways around the attribute checks
REFLECTION_NAMES = ("getattr", "setattr", "delattr", "vars", "dir", "globals", "locals",
                    "attrgetter", "methodcaller")
#: NumPy's file, memory-map and ctypes APIs (and its test and build tools), refused as attribute
#: names on any receiver: the check cannot tell an array from another object. read_array and
#: NpzFile unpickle what a file-like object hands them, i.e. run any code; as_strided reads and
#: writes raw memory (in the caller's process: the core's data).
NUMPY_IO_NAMES = ("save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
                  "fromfile", "tofile", "fromregex", "memmap", "open_memmap", "read_array",
                  "NpzFile", "ctypeslib", "ctypes", "DataSource", "dump", "f2py", "distutils",
                  "testing", "as_strided", "stride_tricks")
#: module names an operator's source may use without importing them (the operator's globals,
#: ``glns.operators.bridge.OPERATOR_GLOBALS``)
IMPLICIT_MODULES = {"np": "numpy", "numpy": "numpy", "random": "random", "math": "math",
                    "copy": "copy", "itertools": "itertools", "heapq": "heapq",
                    "collections": "collections"}

_FORBIDDEN = frozenset(FORBIDDEN_NAMES)
_REFLECTION = frozenset(REFLECTION_NAMES)
_NUMPY_IO = frozenset(NUMPY_IO_NAMES)
_NO_IO = "NumPy's file/memory-map/ctypes API; operators may not do I/O"
_NO_REFLECTION = ("operators may not reach attributes by a string nor list namespaces "
                  "(getattr, setattr, vars, dir, globals, attrgetter ...)")
_NO_PRIVATE = "operators may not use names starting with '_' (private or interpreter internals)"
_MISSING = object()

_PARSE_LOCK = threading.Lock()


def parse_source(source: str) -> ast.Module:
    """``ast.parse(source)``, one thread at a time: CPython 3.11 converts parse trees with a
    process-wide recursion counter, and two threads parsing at once fail with "SystemError: AST
    constructor recursion depth mismatch" (seen here: a background build's check racing the
    solver's)."""
    with _PARSE_LOCK:
        return ast.parse(source)


def policy_violation(source: str, allowed_imports: tuple[str, ...] = ALLOWED_IMPORTS, *,
                     tree: ast.Module | None = None) -> str | None:
    """Why `source` breaks the operator rules (None if it does not, or if it does not parse:
    the syntax check reports that). tree: `source` already parsed (:func:`parse_source`)."""
    if tree is None:
        try:
            tree = parse_source(source)
        except (SyntaxError, ValueError):
            return None
    allowed = frozenset(allowed_imports)
    nodes = list(ast.walk(tree))
    # names bound to allowed modules (or their attributes) -> (module, attribute path)
    roots: dict[str, tuple[str, tuple[str, ...]]] = {}
    for node in nodes:
        why = _name_violation(node, allowed, allowed_imports, roots)
        if why:
            return why
    # the rules above hold for every name as written; now follow them to what they are
    for name, module in IMPLICIT_MODULES.items():
        roots.setdefault(name, (module, ()))
    covered: set[int] = set()
    for node in nodes:
        why = _resolved_violation(node, allowed, allowed_imports, roots, covered)
        if why:
            return why
    return None


def _where(node: ast.AST) -> str:
    return f" (line {getattr(node, 'lineno', '?')})"


def _only(allowed_imports: tuple[str, ...]) -> str:
    return ("operators may only import "
            f"{', '.join(m for m in allowed_imports if m != '__future__')}")


def _refused(attr: str) -> str | None:
    """Why an attribute called `attr` (or a name imported from a module) is refused: the end
    of the message, None if it is not."""
    if attr in _FORBIDDEN:
        return ", which operators may not use"
    if attr in _REFLECTION:
        return f"; {_NO_REFLECTION}"
    if attr in _NUMPY_IO:
        return f", {_NO_IO}"
    if attr.startswith("_"):
        return f"; {_NO_PRIVATE}"
    return None


def _name_violation(node: ast.AST, allowed: frozenset[str], allowed_imports: tuple[str, ...],
                    roots: dict[str, tuple[str, tuple[str, ...]]]) -> str | None:
    """The rules that read one node's names; records what its imports bind in `roots`."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            if parts[0] not in allowed:
                return f"imports {alias.name!r}{_where(node)}; {_only(allowed_imports)}"
            why = next(filter(None, map(_refused, parts[1:])), None)
            if why:
                return f"imports {alias.name!r}{_where(node)}{why}"
            roots[alias.asname or parts[0]] = (alias.name if alias.asname else parts[0], ())
    elif isinstance(node, ast.ImportFrom):
        module = node.module or ""
        parts = module.split(".")
        if node.level or parts[0] not in allowed:
            return f"imports from {module or '.'!r}{_where(node)}; {_only(allowed_imports)}"
        why = next(filter(None, map(_refused, parts[1:])), None)
        if why:
            return f"imports from {module!r}{_where(node)}{why}"
        for alias in node.names:
            if alias.name == "*" or module == "__future__":
                continue
            why = _refused(alias.name)
            if why:
                return f"imports {alias.name!r} from {module!r}{_where(node)}{why}"
            roots[alias.asname or alias.name] = (module, (alias.name,))
    elif isinstance(node, ast.Name):
        if node.id in _FORBIDDEN:
            return (f"uses {node.id!r}{_where(node)}, which operators may not use "
                    "(no I/O, no dynamic code)")
        if node.id in _REFLECTION:
            return f"uses {node.id!r}{_where(node)}; {_NO_REFLECTION}"
    elif isinstance(node, ast.Attribute):
        why = _refused(node.attr)
        if why:
            return f"uses '.{node.attr}'{_where(node)}{why}"
    elif isinstance(node, ast.MatchClass):   # case C(attr=...) reads attributes by name
        for attr in node.kwd_attrs:
            why = _refused(attr)
            if why:
                return f"uses '.{attr}'{_where(node)}{why}"
    return None


def _resolved_violation(node: ast.AST, allowed: frozenset[str], allowed_imports: tuple[str, ...],
                        roots: dict[str, tuple[str, tuple[str, ...]]],
                        covered: set[int]) -> str | None:
    """The rules that follow an import or an attribute chain rooted at an imported name to the
    objects it names; `covered`: the inner links of chains already followed."""
    if isinstance(node, ast.ImportFrom) and not node.level and node.module != "__future__":
        for alias in node.names:
            if alias.name == "*":
                why = _star_violation(node.module, allowed_imports)
                if why:
                    return f"imports '*' from {node.module!r}{_where(node)}, {why}"
                continue
            link = _foreign_link(node.module, (alias.name,), allowed)
            if link:
                return (f"imports module {link[1]!r} from {node.module!r}{_where(node)}"
                        f"{_module_refusal(link[1], allowed_imports)}")
    elif isinstance(node, ast.Attribute) and id(node) not in covered:
        attrs = []
        value: ast.AST = node
        while isinstance(value, ast.Attribute):
            covered.add(id(value))
            attrs.append(value.attr)
            value = value.value
        if isinstance(value, ast.Name) and value.id in roots:
            module, path = roots[value.id]
            attrs.reverse()
            link = _foreign_link(module, path + tuple(attrs), allowed)
            if link and link[0] >= len(path):   # (else the import itself is refused)
                shown = ".".join([value.id] + attrs[:link[0] + 1 - len(path)])
                return (f"reaches module {link[1]!r} through {shown!r}{_where(node)}"
                        f"{_module_refusal(link[1], allowed_imports)}")
    return None


def _module_refusal(module: str, allowed_imports: tuple[str, ...]) -> str:
    """The end of the message for a module reached that may not be."""
    return f", {_NO_IO}" if module.startswith("numpy.") else f"; {_only(allowed_imports)}"


@functools.lru_cache(maxsize=256)
def _module(name: str) -> types.ModuleType | None:
    """The module `name` (imported on first use: only allowed modules get here), None if it
    cannot be imported."""
    try:
        return importlib.import_module(name)
    except Exception:   # noqa: BLE001 - whatever stops it, the operator's import fails the same way
        return None


def _attribute(obj: object, name: str) -> object:
    """``obj.name`` without running obj's code (descriptors, properties), _MISSING if absent;
    for a module also its loaded submodules and lazy attributes (NumPy's ``np.linalg``)."""
    try:
        if not isinstance(obj, types.ModuleType):
            return inspect.getattr_static(obj, name, _MISSING)
        found = vars(obj).get(name, _MISSING)
        if found is _MISSING:
            found = sys.modules.get(f"{obj.__name__}.{name}", _MISSING)
        if found is _MISSING and "__getattr__" in vars(obj) and hasattr(obj, "__path__") \
                and importlib.util.find_spec(f"{obj.__name__}.{name}") is not None:
            found = getattr(obj, name, _MISSING)   # what the package's lazy loader gives
        return found
    except Exception:   # noqa: BLE001 - a lazy attribute that fails is absent
        return _MISSING


def _refused_module(module: types.ModuleType, home: str, allowed: frozenset[str]) -> bool:
    """Whether an operator may not reach `module` (from a module of package `home`): it is
    outside the allowed packages, or one of NumPy's file/ctypes/tool submodules."""
    parts = module.__name__.split(".")
    return (parts[0] not in allowed and parts[0] != home) or \
        (parts[0] == "numpy" and any(p in _NUMPY_IO for p in parts[1:]))


@functools.lru_cache(maxsize=4096)
def _foreign_link(module: str, attrs: tuple[str, ...],
                  allowed: frozenset[str]) -> tuple[int, str] | None:
    """(index into attrs, module name) of the first link of ``module.attrs[0].attrs[1]...``
    that is a module an operator may not reach, None if there is none (or the chain cannot be
    followed)."""
    obj: object = _module(module)
    home = module.split(".")[0]
    for i, attr in enumerate(attrs):
        if obj is None or obj is _MISSING:
            return None
        obj = _attribute(obj, attr)
        if isinstance(obj, types.ModuleType) and _refused_module(obj, home, allowed):
            return i, obj.__name__
    return None


@functools.lru_cache(maxsize=64)
def _star_violation(module: str, allowed_imports: tuple[str, ...]) -> str | None:
    """Why ``from module import *`` is refused: it binds a name that may not be imported."""
    obj = _module(module)
    if obj is None:
        return None
    public = getattr(obj, "__all__", None)
    if public is None:
        public = [n for n in vars(obj) if not n.startswith("_")]
    for name in public:
        why = _refused(name)
        if why:
            return f"which binds {name!r}{why}"
        if _foreign_link(module, (name,), frozenset(allowed_imports)):
            return f"which binds the module {name!r}; {_only(allowed_imports)}"
    return None

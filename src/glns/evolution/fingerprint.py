"""Identity of an operator's code up to renaming, comments, docstrings and formatting.

Two answers of an LLM are often the same operator with other variable names or comments.
:func:`code_fingerprint` hashes a normalised syntax tree: string statements (docstrings) are
dropped, and every name the code binds itself (functions, arguments, variables, aliases of
imports, classes, ...) is renamed to ``_v0``, ``_v1``, ... by order of first appearance, one
name per variable of each scope. What carries meaning stays: constants, operators, attribute
names, keyword-argument names, builtins, module names of imports, and names imported without
an alias (``from math import sqrt`` keeps ``sqrt``). Names bound in a class body are kept as
well: they are attributes (``self.x`` reads them).

>>> a = code_fingerprint("def f(a):\\n    return len(a)")
>>> a == code_fingerprint("def g(b):  # same\\n    return len(b)")
True
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass, field

from glns.policy import parse_source

__all__ = ["code_fingerprint", "normalised_source", "source_key"]

#: hex digits of sha256 kept, as in glns.evolution.generate.source_key
_DIGITS = 16

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def code_fingerprint(source: str) -> str:
    """A 16-hex-digit digest of the normalised code; code that does not parse gets the hash
    of its text without trailing spaces and blank lines (never raises)."""
    tree = _normalised_tree(source)
    if tree is None:
        return _digest(_plain_text(source))
    return _digest(ast.dump(tree, annotate_fields=False, include_attributes=False))


def normalised_source(source: str) -> str:
    """The normalised code as Python text (what :func:`code_fingerprint` compares, readable);
    code that does not parse comes back without trailing spaces and blank lines."""
    tree = _normalised_tree(source)
    return _plain_text(source) if tree is None else ast.unparse(tree)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:_DIGITS]


def _plain_text(source: str) -> str:
    lines = [line.rstrip() for line in source.strip().splitlines()]
    return "\n".join(line for line in lines if line)


def source_key(source: str) -> str:
    """Identity of an operator's exact code, blind only to trailing spaces and blank lines
    (the validation cache's key: a renamed copy may run differently, e.g. another seed use)."""
    return _digest(_plain_text(source))


def _normalised_tree(source: str) -> ast.Module | None:
    try:
        tree = parse_source(source)   # thread-safe: requests are examined in threads
        _drop_string_statements(tree)
        _Renamer().run(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # ValueError: null bytes; RecursionError: absurdly deep nesting
        return None
    return tree


def _drop_string_statements(tree: ast.AST) -> None:
    """Remove docstrings and other bare string statements: they do nothing."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            kept = [s for s in body if not _is_string_statement(s)]
            if not kept and name != "orelse" and not isinstance(node, ast.Module):
                kept = [ast.Pass()]  # a block cannot be empty (normalised_source must unparse)
            body[:] = kept


def _is_string_statement(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
        and isinstance(node.value.value, str)


@dataclass(eq=False)
class _Scope:
    """A module, function, lambda, comprehension or class body and the names it binds."""

    kind: str  # "module" | "function" | "comprehension" | "class"
    parent: "_Scope | None"
    stored: set[str] = field(default_factory=set)
    fixed: set[str] = field(default_factory=set)  # bound by an import without alias: kept
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def binds(self, name: str) -> bool:
        return name in self.stored and name not in self.globals and name not in self.nonlocals


@dataclass
class _Use:
    """One identifier in the tree: where to write its new name and the scope it is seen from."""

    node: ast.AST
    attr: str
    index: int | None
    name: str
    scope: _Scope


class _Renamer:
    """Two steps: one walk records every identifier with its scope and every binding; then,
    with all bindings known, each identifier is resolved to its variable and renamed."""

    def __init__(self) -> None:
        self.uses: list[_Use] = []
        self.module: _Scope | None = None

    def run(self, tree: ast.Module) -> None:
        self.module = _Scope("module", None)
        self._body(tree.body, self.module)
        for scope in {id(u.scope): u.scope for u in self.uses}.values():
            for name in scope.stored & scope.globals:  # `global x; x = 1` binds a module name
                self.module.stored.add(name)
        canonical: dict[tuple[int, str], str] = {}
        for use in self.uses:
            owner = self._resolve(use.name, use.scope)
            if owner is None or owner.kind == "class" or use.name in owner.fixed:
                continue
            new = canonical.setdefault((id(owner), use.name), f"_v{len(canonical)}")
            if use.index is None:
                setattr(use.node, use.attr, new)
            else:
                getattr(use.node, use.attr)[use.index] = new

    def _resolve(self, name: str, scope: _Scope) -> _Scope | None:
        """The scope whose variable `name` means when used in `scope` (None: free/builtin)."""
        if name in scope.globals:
            return self.module if self.module.binds(name) else None
        if name in scope.nonlocals:
            scope = scope.parent
            while scope is not None and not (scope.kind == "function" and scope.binds(name)):
                scope = scope.parent
            return scope
        if scope.binds(name):
            return scope
        scope = scope.parent
        while scope is not None:  # a class body is not seen from the functions inside it
            if scope.kind != "class" and scope.binds(name):
                return scope
            scope = scope.parent
        return None

    # -- the walk --------------------------------------------------------------------------
    def _use(self, node: ast.AST, attr: str, scope: _Scope, bind: bool = False,
             index: int | None = None) -> None:
        name = getattr(node, attr) if index is None else getattr(node, attr)[index]
        if bind:
            scope.stored.add(name)
        self.uses.append(_Use(node, attr, index, name, scope))

    def _body(self, nodes: list, scope: _Scope) -> None:
        for node in nodes:
            self._visit(node, scope)

    def _visit(self, node: ast.AST | None, scope: _Scope) -> None:
        if node is None:
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._use(node, "name", scope, bind=True)
            self._body(node.decorator_list, scope)
            self._function(node, scope)
        elif isinstance(node, ast.Lambda):
            self._function(node, scope)
        elif isinstance(node, ast.ClassDef):
            self._use(node, "name", scope, bind=True)
            self._body(node.decorator_list + node.bases + node.keywords, scope)
            self._body(node.body, _Scope("class", scope))
        elif isinstance(node, _COMPREHENSIONS):
            self._comprehension(node, scope)
        elif isinstance(node, ast.Name):
            self._use(node, "id", scope, bind=not isinstance(node.ctx, ast.Load))
        elif isinstance(node, ast.NamedExpr):
            # the target of := inside a comprehension belongs to the enclosing function
            home = scope
            while home.kind == "comprehension":
                home = home.parent
            self._visit(node.value, scope)
            self._visit(node.target, home)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared = scope.globals if isinstance(node, ast.Global) else scope.nonlocals
            declared.update(node.names)
            for i in range(len(node.names)):
                self._use(node, "names", scope, index=i)
        elif isinstance(node, ast.alias):
            if node.asname is not None:
                self._use(node, "asname", scope, bind=True)
            elif node.name != "*":  # `import a.b` binds a; the module name itself stays
                bound = node.name.split(".")[0]
                scope.stored.add(bound)
                scope.fixed.add(bound)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._visit(node.type, scope)
            self._use(node, "name", scope, bind=True)
            self._body(node.body, scope)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self._children(node, scope)  # `case [x] as y`: the pattern comes first
            self._use(node, "name", scope, bind=True)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self._children(node, scope)
            self._use(node, "rest", scope, bind=True)
        else:
            self._children(node, scope)

    def _children(self, node: ast.AST, scope: _Scope) -> None:
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self._visit(item, scope)
            elif isinstance(value, ast.AST):
                self._visit(value, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
                  outer: _Scope) -> None:
        args = node.args
        # defaults and annotations are evaluated where the function is defined
        self._body(args.defaults + [d for d in args.kw_defaults if d is not None], outer)
        every = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
        params = [a for a in every if a is not None]
        self._body([a.annotation for a in params if a.annotation is not None], outer)
        self._visit(getattr(node, "returns", None), outer)
        inner = _Scope("function", outer)
        for a in params:
            self._use(a, "arg", inner, bind=True)
        if isinstance(node, ast.Lambda):
            self._visit(node.body, inner)
        else:
            self._body(node.body, inner)

    def _comprehension(self, node: ast.expr, outer: _Scope) -> None:
        first, *rest = node.generators
        self._visit(first.iter, outer)  # the first iterable is evaluated outside
        inner = _Scope("comprehension", outer)
        self._visit(first.target, inner)
        self._body(first.ifs, inner)
        for gen in rest:
            self._visit(gen.iter, inner)
            self._visit(gen.target, inner)
            self._body(gen.ifs, inner)
        if isinstance(node, ast.DictComp):
            self._visit(node.key, inner)
            self._visit(node.value, inner)
        else:
            self._visit(node.elt, inner)

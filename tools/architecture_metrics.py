"""Structural figures of the package: module sizes, imports deferred into functions, import
cycles between modules and packages, private names imported across packages, problem-kind
branches and references to documents outside the repository.

    python tools/architecture_metrics.py [--json] [--src DIR]

Reads the source as text (ast); imports nothing of glns.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "glns"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> list[tuple[str, list[str], bool]]:
    """(imported module, imported names, deferred into a function) for every glns import."""
    tree = ast.parse(path.read_text())
    module, is_package = _module_name(path), path.name == "__init__.py"
    out = []

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, [], deferred) for a in child.names if a.name.split(".")[0] == PACKAGE)
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(module, is_package, child)
                if target.split(".")[0] == PACKAGE:
                    out.append((target, [a.name for a in child.names], deferred))
            visit(child, inner)

    visit(tree, False)
    return out


def _cimports(path: Path) -> list[str]:
    return re.findall(r"^\s*from\s+(glns\.[\w.]+)\s+cimport", path.read_text(), re.M)


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _files() -> list[Path]:
    return sorted(SRC.rglob("*.py")) + sorted(SRC.rglob("*.pyx")) + sorted(SRC.rglob("*.pxd"))


def import_edges() -> list[tuple[str, str, list[str], bool]]:
    """(importing module, imported glns module, imported names, deferred into a function)."""
    files = _files()
    modules = {_module_name(p) for p in files}
    out = []
    for path in files:
        module = _module_name(path)
        if path.suffix == ".py":
            found = _imports(path)
        else:
            found = [(m, [], False) for m in _cimports(path)]
            found += [(m, n, d) for m, n, d in _imports_pyx(path)]
        for target, names, is_deferred in found:   # `from pkg import module` imports the module
            subs = [n for n in names if f"{target}.{n}" in modules]
            targets = [(f"{target}.{n}", []) for n in subs]
            if len(subs) < len(names) or not names:
                targets.append((target, [n for n in names if n not in subs]))
            for t, t_names in targets:
                while t not in modules and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t != module:
                    out.append((module, t, t_names, is_deferred))
    return out


def metrics() -> dict:
    files = _files()
    sizes = sorted(((len(p.read_text().splitlines()), str(p.relative_to(SRC))) for p in files), reverse=True)
    graph: dict[str, set[str]] = defaultdict(set)
    package_graph: dict[str, set[str]] = defaultdict(set)
    deferred, private = [], []
    for module, target, names, is_deferred in import_edges():
        graph[module].add(target)
        crosses = _package_of(target) != _package_of(module)
        if crosses:
            package_graph[_package_of(module)].add(_package_of(target))
        if is_deferred:
            deferred.append(f"{module} -> {target}")
        hidden = [n for n in names if n.startswith("_") and not n.startswith("__")] + (
            [target.rsplit(".", 1)[1]] if target.rsplit(".", 1)[-1].startswith("_") else [])
        if crosses and hidden and not target.startswith("glns._core"):
            private.append(f"{module} -> {target}: {', '.join(hidden)}")
    text = {str(p.relative_to(SRC)): p.read_text() for p in files}
    kind_branches = {
        "python": sum(len(re.findall(r"[!=]=\s*['\"](?:tsp|cvrp|ovrp)['\"]", t))
                      for n, t in text.items() if n.endswith(".py")),
        "core": sum(len(re.findall(r"\bkind\s*[!=]=\s*KIND_", t)) for n, t in text.items() if not n.endswith(".py")),
    }
    outside_refs = sum(len(re.findall(r"SPEC\s*§|\bissue \d+", t)) for t in text.values())
    return {
        "modules": len(files),
        "lines": sum(s for s, _ in sizes),
        "largest": sizes[:8],
        "deferred_imports": len(deferred),
        "module_cycles": _cycles(graph),
        "package_cycles": _cycles(package_graph),
        "private_cross_package_imports": private,
        "kind_branches": kind_branches,
        "references_outside_repository": outside_refs,
    }


def _imports_pyx(path: Path) -> list[tuple[str, list[str], bool]]:
    """Python imports of glns modules in a .pyx file (by pattern: Cython is not ast-parsable)."""
    out = []
    for indent, target, names in re.findall(r"^(\s*)from\s+(glns[\w.]*)\s+import\s+([\w, ()]+)", path.read_text(), re.M):
        out.append((target, [n.strip() for n in names.strip("()").split(",") if n.strip()], bool(indent)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--src", type=Path, help="the src/ folder to read (default: this checkout's)")
    args = parser.parse_args()
    if args.src is not None:
        global SRC
        SRC = args.src.resolve()
    m = metrics()
    if args.json:
        print(json.dumps(m, indent=2))
        return
    print(f"{m['modules']} modules, {m['lines']} lines")
    print("largest:", ", ".join(f"{name} {size}" for size, name in m["largest"]))
    print(f"imports deferred into functions: {m['deferred_imports']}")
    print(f"module import cycles: {len(m['module_cycles'])}", *(" ↔ ".join(c) for c in m["module_cycles"]), sep="\n  ")
    print(f"package import cycles: {len(m['package_cycles'])}", *(" ↔ ".join(c) for c in m["package_cycles"]), sep="\n  ")
    print(f"private names imported across packages: {len(m['private_cross_package_imports'])}",
          *m["private_cross_package_imports"], sep="\n  ")
    print(f"problem-kind branches: {m['kind_branches']}")
    print(f"references to SPEC sections or issue numbers: {m['references_outside_repository']}")


if __name__ == "__main__":
    main()

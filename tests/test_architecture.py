"""Layering: modules import only downward (docs/dev/architecture.md).

core <- problems/params <- operators <- solve <- sandbox/batch <- evolution/benchmark <- cli.
Read from the source as text (tools/architecture_metrics.py), so the test needs no build.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_TOOL = Path(__file__).resolve().parents[1] / "tools" / "architecture_metrics.py"
_spec = importlib.util.spec_from_file_location("architecture_metrics", _TOOL)
metrics = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(metrics)

#: the layer of each top-level part of the package; a module may import its own package and
#: anything on a lower layer
LAYERS = {
    "glns.exceptions": 0, "glns.rng": 0, "glns.version": 0, "glns.checks": 0, "glns.ablation": 0,
    "glns._core": 1, "glns.neighbours": 1,
    "glns.problems": 2, "glns.params": 2, "glns.result": 2, "glns.policy": 2, "glns.monitor": 2,
    "glns.solution_files": 2, "glns.llm": 2,
    "glns.datasets": 3, "glns.compiler": 3,
    "glns.operators": 4,
    "glns.solve": 5, "glns.reference": 5,
    "glns.executors": 1, "glns.sandbox": 6, "glns.batch": 6,
    "glns.offline_llm": 7, "glns.deploy": 7,
    "glns.evolution": 8, "glns.benchmark": 8, "glns.plot": 8, "glns.regression": 8,
    "glns.pytest_plugin": 8,
    "glns.cli": 9, "glns.__main__": 9, "glns": 9,
}

#: upward imports that are still there (each one a debt to pay, listed so that no new one
#: comes in unnoticed; remove an entry when its import is gone)
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _part(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _upward() -> set[tuple[str, str]]:
    out = set()
    for module, target, _, _ in metrics.import_edges():
        a, b = _part(module), _part(target)
        if a == b:
            continue
        assert a in LAYERS and b in LAYERS, f"no layer for {a if a not in LAYERS else b}: add it to LAYERS"
        if LAYERS[b] > LAYERS[a]:
            out.add((module, target))
    return out


def test_modules_import_only_downward():
    upward = _upward()
    new = sorted(upward - KNOWN_UPWARD)
    assert not new, "upward imports (a lower layer importing a higher one):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in new)
    gone = sorted(KNOWN_UPWARD - upward)
    assert not gone, f"fixed, remove from KNOWN_UPWARD: {gone}"


def test_no_import_cycles_between_packages():
    assert metrics.metrics()["package_cycles"] == [], "import cycles between packages"


def test_no_private_names_imported_across_packages():
    assert metrics.metrics()["private_cross_package_imports"] == []

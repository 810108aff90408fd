"""`import glns`: every documented subpackage is reachable as an attribute, no optional
dependency is imported, and the top-level names are complete (checked in fresh interpreters)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import glns

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "glns"
OPTIONAL = ("matplotlib", "openai", "ray", "ortools", "pyvrp", "vrplib", "elkai", "alns", "Cython")
NOT_API = {"cli", "__main__"}


def _fresh(code: str) -> dict:
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def documented_modules() -> list[str]:
    """Modules of the package the README and docs/ name as ``glns.<name>`` or ``src/glns/<name>``."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    names = set(re.findall(r"\bglns\.([a-z][a-z0-9_]*)", text)) | set(re.findall(r"src/glns/([a-z][a-z0-9_]*)", text))
    return sorted(n for n in names - NOT_API
                  if (SRC / n / "__init__.py").is_file() or (SRC / f"{n}.py").is_file())


def test_the_docs_name_subpackages():
    # guards the scan below: these are named in the README, so the check is not vacuous
    named = {"datasets", "operators", "evolution", "benchmark", "plot", "compiler", "sandbox"}
    assert named <= set(documented_modules())


def test_documented_subpackages_reachable_after_plain_import():
    names = documented_modules()
    found = _fresh(f"""
import json, sys
import glns
optional = sorted(m for m in {OPTIONAL!r} if m in sys.modules)
reached = {{}}
for name in {names!r}:
    try:
        reached[name] = getattr(glns, name) is not None
    except AttributeError as exc:
        reached[name] = str(exc)
print(json.dumps({{"optional": optional, "reached": reached}}))
""")
    assert found["optional"] == [], "import glns must not import optional dependencies"
    assert found["reached"] == {name: True for name in names}


def test_plain_import_pulls_no_optional_dependency():
    found = _fresh(f"""
import json, sys
import glns
glns.read, glns.write_solution, glns.read_solution, glns.datasets, glns.evolution, glns.compiler
print(json.dumps(sorted(m for m in {OPTIONAL!r} if m in sys.modules)))
""")
    assert found == []


def test_lazy_subpackages_load_on_first_access():
    found = _fresh("""
import json, sys
import glns
before = "glns.evolution" in sys.modules
module = glns.evolution
print(json.dumps([before, module is sys.modules["glns.evolution"], hasattr(module, "load_module")]))
""")
    assert found == [False, True, True]


def test_star_import_and_dir():
    namespace: dict = {}
    exec("from glns import *", namespace)  # noqa: S102 - the star import itself is under test
    assert set(glns.__all__) <= set(namespace) and glns._LAZY_MODULES <= set(glns.__all__)
    assert {"evolution", "plot", "datasets", "read", "write_solution"} <= set(dir(glns))
    public = {n for n, v in vars(glns).items()
              if not n.startswith("_") and not isinstance(v, type(glns)) and n not in ("annotations",)}
    assert public <= set(glns.__all__), sorted(public - set(glns.__all__))


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="module 'glns' has no attribute 'no_such_thing'"):
        glns.no_such_thing  # noqa: B018

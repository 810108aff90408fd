"""The public API's docstrings follow numpydoc, and the API reference (docs/api, Sphinx) builds
from them without a warning.

The public API is every name of ``glns.__all__`` that is a class or a function (not a
subpackage, not a constant), with the methods, properties, class methods and static methods
its class defines itself. Sphinx and numpydoc come with the ``test`` and ``docs`` extras.
"""

from __future__ import annotations

import inspect
import io
import time
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import glns

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api"

#: the numpydoc validation checks every public docstring must pass
CHECKS = {
    "GL08": "no docstring",
    "SS01": "no summary",
    "PR01": "a parameter is not documented",
    "PR02": "a documented parameter does not exist",
    "PR03": "parameters in the wrong order",
    "PR04": "a parameter has no type",
    "PR10": "no space before and after the colon of a parameter",
    "RT01": "no Returns section",
}


def _members(cls: type) -> list[tuple[str, object]]:
    """The public callables a class defines itself (methods, properties, class/static methods)."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod)):
            out.append((name, getattr(cls, name) if not isinstance(value, property) else value))
    return out


def public_objects() -> dict[str, object]:
    """``glns.<name>`` (and ``glns.<Class>.<member>``) -> the object, from ``glns.__all__``."""
    found: dict[str, object] = {}
    for name in glns.__all__:
        if name in glns._LAZY_MODULES:
            continue
        obj = getattr(glns, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue                       # constants (TRACE_SAMPLES, SIGMA_PAPER, ...)
        found[f"glns.{name}"] = obj
        if inspect.isclass(obj):
            for member, value in _members(obj):
                found[f"glns.{name}.{member}"] = value
    return found


PUBLIC = public_objects()


def test_the_public_api_is_found():
    # guards the parametrization below: it is computed, so make sure it is not vacuous
    for name in ("glns.solve", "glns.SolveParams", "glns.Result.to_json", "glns.Problem.cost",
                 "glns.TSP.routes_of", "glns.VRPTW.schedule", "glns.read", "glns.BatchError"):
        assert name in PUBLIC, name
    assert len(PUBLIC) > 60


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_docstring_follows_numpydoc(name: str):
    pytest.importorskip("numpydoc")
    from numpydoc.docscrape import get_doc_object
    from numpydoc.validate import validate

    # the object itself, not its name: "glns.solve" by name is the module glns.solve
    report = validate(get_doc_object(PUBLIC[name]))
    errors = [(code, message) for code, message in report["errors"] if code in CHECKS]
    assert not errors, f"{name} fails numpydoc validation:\n" + "\n".join(
        f"  {code} ({CHECKS[code]}): {message}" for code, message in errors)


def test_api_reference_builds_without_warnings(tmp_path: Path):
    pytest.importorskip("numpydoc")
    pytest.importorskip("sphinx")
    from sphinx.cmd.build import build_main

    # -W: a warning fails the build; -w: the warnings also go to a file, for the message;
    # -E: read every source afresh; -q: no progress output
    warnings_file = tmp_path / "warnings.txt"
    args = ["-W", "--keep-going", "-E", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
            "-w", str(warnings_file), str(DOCS), str(tmp_path / "html")]
    stderr = io.StringIO()
    start = time.perf_counter()
    with redirect_stderr(stderr):
        status = build_main(args)
    seconds = time.perf_counter() - start
    logged = warnings_file.read_text(encoding="utf-8") if warnings_file.exists() else ""
    assert status == 0 and not logged.strip(), (
        f"python -m sphinx -W -b html docs/api failed (status {status}, {seconds:.1f} s):\n"
        f"{logged or stderr.getvalue()}")
    # the reference has a page per group, and autodoc filled them from the docstrings
    for page, expected in (("index", "glns API reference"), ("problems", "VRPTW.schedule"),
                           ("solving", "SolveParams.paper"), ("monitoring", "TargetCost"),
                           ("files", "read_solution"), ("errors", "InvalidInstanceError"),
                           ("constants", "TRACE_SAMPLES")):
        html = (tmp_path / "html" / f"{page}.html").read_text(encoding="utf-8")
        assert expected in html, f"{page}.html lacks {expected}"

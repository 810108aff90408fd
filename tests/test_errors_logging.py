"""One exception hierarchy (glns.GlnsError) and the glns.* loggers (docs/errors.md)."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import pkgutil
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import glns
from glns import compiler, datasets
from glns.exceptions import GlnsError

#: interrupts are outside the hierarchy on purpose: raised inside operator code at its time
#: limit, they derive from BaseException only, so that `except Exception` there cannot swallow
#: them (nor can `except glns.GlnsError`)
CORE_TIMEOUT = "glns._core._alns.OperatorTimeout"


def _is_interrupt(cls: type) -> bool:
    return not issubclass(cls, Exception)


def _glns_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(glns.__path__, "glns.")
            if not m.name.endswith("__main__")]   # __main__ runs the command line


def _exception_classes() -> dict[str, type]:
    """Every exception class defined in a glns module (optional dependencies may be missing)."""
    found = {}
    for name in _glns_modules():
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            if (getattr(exc, "name", None) or "").startswith("glns"):
                raise
            continue   # a module for an optional extra that is not installed here
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == name:
                found[f"{name}.{obj.__qualname__}"] = obj
    return found


# -- exceptions --------------------------------------------------------------------------------

def test_glns_error_is_exported_and_documented():
    assert glns.GlnsError is GlnsError and "GlnsError" in glns.__all__
    assert issubclass(GlnsError, Exception)
    assert not issubclass(GlnsError, (ValueError, RuntimeError))
    doc = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
    text = doc.read_text(encoding="utf-8")
    for name, cls in _exception_classes().items():
        if not _is_interrupt(cls):
            assert name.rsplit(".", 1)[1] in text, f"{name} is not in docs/errors.md"


def test_every_exception_class_derives_from_glns_error_and_keeps_its_builtin_base():
    classes = _exception_classes()
    assert len(classes) >= 12, sorted(classes)   # the walk found the package's exceptions
    assert _is_interrupt(classes[CORE_TIMEOUT])
    wrong = [n for n, c in classes.items() if not _is_interrupt(c) and not issubclass(c, GlnsError)]
    assert not wrong, f"not derived from glns.GlnsError: {wrong}"
    for name, cls in classes.items():
        if cls is GlnsError or _is_interrupt(cls):
            continue
        # the builtin (or standard library) base it had before, so `except ValueError` still works
        others = [b for b in cls.__mro__ if not b.__module__.startswith("glns")
                  and b not in (Exception, BaseException, object)]
        assert others, f"{name} lost its builtin base class"


def test_existing_except_clauses_keep_working():
    with pytest.raises(ValueError) as info:
        glns.TSP(np.zeros((1, 2)))
    assert isinstance(info.value, glns.InvalidInstanceError) and isinstance(info.value, GlnsError)
    with pytest.raises(GlnsError):
        glns.solve(datasets.generate("tsp", 10, 1), "no_such_operator", iterations=1)
    from glns.llm import LLMConfig, LLMConfigError

    with pytest.raises(ValueError):
        LLMConfig(base_url="localhost:8000", model="m")
    assert issubclass(LLMConfigError, GlnsError)


def test_exceptions_module_imports_nothing_from_glns():
    source = Path(glns.exceptions.__file__).read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "glns" for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and (node.module or "").split(".")[0] != "glns"


# -- logging -----------------------------------------------------------------------------------

def test_import_adds_no_handler_but_a_null_handler():
    code = (
        "import json, logging\n"
        "import glns, glns.compiler, glns.executors, glns.sandbox, glns.llm, glns.evolution\n"
        "found = {name: [type(h).__name__ for h in lg.handlers]\n"
        "         for name, lg in logging.root.manager.loggerDict.items()\n"
        "         if name.startswith('glns') and isinstance(lg, logging.Logger)}\n"
        "root = [type(h).__name__ for h in logging.root.handlers]\n"
        "print(json.dumps({'glns': found, 'root': root,\n"
        "                  'propagate': all(logging.getLogger(n).propagate for n in found)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    state = json.loads(out.stdout)
    assert state["root"] == []
    assert state["glns"].pop("glns") == ["NullHandler"]
    assert len(state["glns"]) >= 5   # the modules' own loggers exist ...
    assert all(handlers == [] for handlers in state["glns"].values()), state   # ... with no handler
    assert state["propagate"]


def _records(caplog, logger: str, level: int | None = None) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == logger and (level is None or r.levelno == level)]


def test_operator_timeout_is_logged_once_at_warning(caplog):
    def slow(x, destroy_cnt, problem_data):
        time.sleep(1.0)
        return [], x

    problem = datasets.generate("cvrp", 10, 1)
    params = glns.SolveParams(op_timeout=0.05, views="numpy", compile="off")
    with caplog.at_level(logging.DEBUG, logger="glns"):
        result = glns.solve(problem, slow, "greedy_insertion", iterations=3, params=params)
    assert result.destroy_stats[0].failures == 3
    warnings = _records(caplog, "glns.operators.bridge", logging.WARNING)
    assert len(warnings) == 1
    assert "slow ran past its time limit of 0.05 s" in warnings[0].getMessage()
    assert len(_records(caplog, "glns.operators.bridge", logging.DEBUG)) == 2


def test_an_operator_that_raises_is_not_logged_as_a_timeout(caplog):
    def broken(x, destroy_cnt, problem_data):
        raise ZeroDivisionError("no")

    params = glns.SolveParams(op_timeout=1.0, views="numpy", compile="off")
    with caplog.at_level(logging.DEBUG, logger="glns"):
        result = glns.solve(datasets.generate("tsp", 10, 1), broken, "greedy_insertion",
                            iterations=2, params=params)
    assert result.destroy_stats[0].failures == 2
    assert _records(caplog, "glns.operators.bridge") == []


def test_compile_failure_is_logged_at_warning(caplog, tmp_path):
    if compiler.unavailable_reason() is not None:
        pytest.skip(f"no compile toolchain: {compiler.unavailable_reason()}")
    source = ("def destroy(x, n, data):\n    y = 1\n    def g():\n        return y\n"
              "    del y\n    return g, []\n")   # valid Python that Cython refuses
    key = compiler.cache_key(source)
    bogus = tmp_path / key[:2] / key
    bogus.mkdir(parents=True)
    (bogus / "meta.json").write_text("{not json")   # an invalid entry: removed before the build
    with caplog.at_level(logging.DEBUG, logger="glns"):
        out = compiler.compile_source(source, cache_dir=tmp_path)
    assert out.status == "failed"
    messages = [r.getMessage() for r in _records(caplog, "glns.compiler.driver", logging.WARNING)]
    assert any("was invalid" in m and "rebuilding" in m for m in messages), messages
    assert any("failed" in m and "can not delete variable" in m and "runs interpreted" in m
               for m in messages), messages
    assert not bogus.exists()


def test_sandbox_worker_killed_at_its_deadline_is_logged(caplog):
    from glns.executors import WorkerPool

    with caplog.at_level(logging.WARNING, logger="glns"), \
            WorkerPool(workers=1, memory_mb=None) as pool:
        res = pool.run(time.sleep, 30, timeout=0.5)
        assert res.status == "timeout" and pool.restarts == 1
    records = _records(caplog, "glns.executors.process", logging.WARNING)
    assert len(records) == 1 and "no answer within 0.5 s" in records[0].getMessage()


def test_llm_retry_is_logged_at_warning(caplog):
    pytest.importorskip("openai")
    from glns.llm import LLMClient, LLMConfig, markers
    from glns.offline_llm import OfflineLLMServer

    sleeps: list[float] = []
    with OfflineLLMServer(seed=2) as server:
        config = LLMConfig(base_url=server.base_url, model="offline:fail=503x2,good", timeout=5.0)
        client = LLMClient(config, sleep=sleeps.append, rng=random.Random(0))
        with caplog.at_level(logging.INFO, logger="glns"):
            prompt = "Design an operator.\n" + markers.marker_lines("cvrp", "destroy")
            reply = client.complete(prompt)
    assert reply.record.attempts == 3
    records = _records(caplog, "glns.llm.client", logging.WARNING)
    assert len(records) == 2
    assert "attempt 1 of" in records[0].getMessage() and "HTTP 503" in records[0].getMessage()
    assert f"retrying in {sleeps[0]:.1f} s" in records[0].getMessage()

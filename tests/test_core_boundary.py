"""The typed boundary of the core: RunSettings in, RunResult out, stubs for the compiled API."""

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

import glns
from glns._core._alns import run_alns
from glns._core._result import OperatorRecord, RunResult
from glns._core._settings import AutoSchedule, FixedSchedule, RunSettings
from glns.operators import native
from glns.params import AutoTemperature, FixedTemperature, SolveParams

from conftest import make_problem

SETTINGS = dict(k_min=2, k_max=5, decay=0.5, scores=(1.5, 1.2, 0.8, 0.1),
                temperature=FixedSchedule(t0=100.0, alpha=0.97), adaptive=True,
                iterations=20, time_limit=None, no_improvement=None)


def _settings(**changes):
    return RunSettings(**{**SETTINGS, **changes})


def test_settings_are_typed_attributes():
    s = _settings()
    assert (s.k_min, s.k_max, s.decay, s.scores, s.adaptive) == (2, 5, 0.5, (1.5, 1.2, 0.8, 0.1), True)
    assert (s.iterations, s.time_limit, s.no_improvement) == (20, None, None)
    assert isinstance(s.temperature, FixedSchedule) and s.temperature.t0 == 100.0
    with pytest.raises(AttributeError):
        s.k_min = 3


@pytest.mark.parametrize("wrong", ["iteration", "kmin", "time_limits", "temprature"])
def test_a_misspelled_setting_is_an_error(wrong):
    with pytest.raises(TypeError, match=wrong):
        RunSettings(**SETTINGS, **{wrong: 1})


@pytest.mark.parametrize("missing", sorted(SETTINGS))
def test_a_missing_setting_is_an_error(missing):
    with pytest.raises(TypeError, match=missing):
        RunSettings(**{k: v for k, v in SETTINGS.items() if k != missing})


@pytest.mark.parametrize("changes, error, match", [
    (dict(k_min=0), ValueError, "destroy range"),
    (dict(k_min=6), ValueError, "destroy range"),
    (dict(scores=(1.0, 1.0, 1.0)), ValueError, "4 numbers"),
    (dict(temperature={"mode": "fixed", "t0": 1.0, "alpha": 0.9}), TypeError, "FixedSchedule"),
    (dict(iterations=None), ValueError, "no stopping criterion"),
    (dict(iterations=-1), ValueError, ">= 0"),
    (dict(time_limit=0.0), ValueError, "time_limit"),
])
def test_settings_the_loop_cannot_run_with_are_refused(changes, error, match):
    with pytest.raises(error, match=match):
        _settings(**changes)


def test_schedules_need_every_field_by_name():
    assert AutoSchedule(worse=0.01, accept=0.5, end_ratio=0.01).accept == 0.5
    with pytest.raises(TypeError):
        FixedSchedule(t0=1.0)
    with pytest.raises(TypeError):
        FixedSchedule(1.0, 0.9)
    with pytest.raises(TypeError):
        AutoSchedule(worse=0.01, accept=0.5, end_ratio=0.01, t0=1.0)


def test_solve_params_build_the_settings():
    s = SolveParams(destroy_fraction=0.2, max_destroy=None).to_core(50, iterations=10, time_limit=2.0)
    assert (s.k_min, s.k_max, s.iterations, s.time_limit, s.no_improvement) == (10, 10, 10, 2.0, None)
    assert isinstance(s.temperature, AutoSchedule)
    assert (s.temperature.worse, s.temperature.accept, s.temperature.end_ratio) == (0.01, 0.5, 0.01)
    fixed = SolveParams.paper().to_core(50, no_improvement=5)
    assert isinstance(fixed.temperature, FixedSchedule) and fixed.temperature.alpha == 0.97
    assert FixedTemperature(3.0, 0.5).to_core(1000).t0 == 3.0
    assert AutoTemperature(0.02).to_core(50).worse == 0.02
    # above reference_nodes the fraction is of the cost of reference_nodes customers
    assert AutoTemperature(0.02).to_core(200).worse == 0.02 * 50 / 200
    assert AutoTemperature(0.02, reference_nodes=None).to_core(200).worse == 0.02


def test_the_loop_takes_only_run_settings():
    problem = make_problem("cvrp", 15, 1, 30)
    ops = [native("random_removal").bind(problem)], [native("greedy_insertion").bind(problem)]
    with pytest.raises(TypeError):
        run_alns(problem.core, *ops, dict(SETTINGS), 0)
    with pytest.raises(ValueError, match="used as a destroy operator"):
        run_alns(problem.core, ops[1], ops[0], _settings(), 0)


def test_the_loop_returns_a_typed_result():
    problem = make_problem("cvrp", 15, 1, 30)
    d, r = [native("random_removal").bind(problem)], [native("greedy_insertion").bind(problem)]
    run = run_alns(problem.core, d, r, _settings(), 3)
    assert isinstance(run, RunResult) and isinstance(run.destroy, OperatorRecord)
    assert run.iterations == 20 and run.best_curve.shape == (20,) and run.synergy.shape == (1, 1)
    assert run.best_cost == pytest.approx(problem.cost(run.best))
    assert run.destroy.calls.tolist() == [20] and run.destroy.outcomes.shape == (1, 4)
    assert run.repair.last_error == (None,)
    assert not hasattr(run, "all_native")
    with pytest.raises(AttributeError):
        run.best_cost = 0.0
    # glns.solve builds its Result from the same run
    res = glns.solve(problem, "random_removal", "greedy_insertion", iterations=20, seed=3,
                     params=SolveParams(destroy_fraction=(2 / 15, 5 / 15), max_destroy=None,
                                        temperature=FixedTemperature(100.0, 0.97), restart=None))
    assert res.cost == run.best_cost and np.array_equal(res.best_curve, run.best_curve)


# --- stubs --------------------------------------------------------------------------------------

CORE = Path(glns.__file__).parent / "_core"


def test_package_is_marked_typed():
    assert (Path(glns.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("stub", sorted(p.name for p in CORE.glob("*.pyi")))
def test_every_stubbed_name_exists_in_the_compiled_module(stub):
    module = importlib.import_module(f"glns._core.{stub[:-4]}")
    tree = ast.parse((CORE / stub).read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.AnnAssign):
            names = [node.target.id]
        else:
            continue
        for name in names:
            assert hasattr(module, name), f"{stub}: {name} is not in the module"
        if isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("__"):
                    assert hasattr(cls, item.name), f"{stub}: {node.name}.{item.name} is missing"


def test_every_compiled_module_imported_by_python_code_has_a_stub():
    used = set()
    for path in CORE.parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("glns._core."):
                used.add(node.module.split(".")[2])
            elif isinstance(node, ast.ImportFrom) and node.module == "glns._core":
                used.update(alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                used.update(a.name.split(".")[2] for a in node.names if a.name.startswith("glns._core."))
    assert {"_alns", "_native_ops", "_settings", "_result"} <= used
    assert used <= {p.stem for p in CORE.glob("*.pyi")}

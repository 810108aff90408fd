"""One operator-spec parser and one reader of exported modules, the same for every caller.

Every accepted form of an operator gives the same Operator (and the same runs) in glns.solve,
glns.solve_many and glns.sandbox.evaluate; every rejected form gives the same message in all of
them; a module and the path of its file are the same thing; a module evolved for another
problem kind is refused everywhere.
"""

from __future__ import annotations

import json
import sys
import textwrap
import types
from pathlib import Path

import pytest

import glns
from glns import datasets, operators
from glns.cli import main
from glns.exceptions import OperatorError
from glns.executors import WorkerPool
from glns.operators import Operator, PythonSource
from glns.operators.arguments import parse_arguments, parse_per_kind
from glns.operators.exported import load_module, read_export
from glns.operators.spec import is_module_spec, parse, parse_list
from glns.rng import run_seed
from glns.sandbox import evaluate

MODULE = "glns_test_spec_ops"
OPS_SOURCE = textwrap.dedent('''
    """User operators for the parser tests (a module on sys.path and a file)."""
    import random


    def destroy_fn(x, destroy_cnt, problem_data):
        customers = [c for route in x for c in route]
        removed = random.sample(customers, min(destroy_cnt, len(customers)))
        gone = set(removed)
        partial = [[c for c in route if c not in gone] for route in x]
        return removed, [route for route in partial if route]


    def repair_fn(partial, removed, problem_data):
        d = problem_data["distance_matrix"]
        q, cap = problem_data["demands"], problem_data["capacity"]
        routes = [list(r) for r in partial]
        for c in removed:
            best = None
            for i, r in enumerate(routes):
                if sum(int(q[v]) for v in r) + int(q[c]) <= cap:
                    cost = d[r[-1], c] + d[c, 0] - d[r[-1], 0]
                    if best is None or cost < best[0]:
                        best = (cost, i)
            if best is None:
                routes.append([c])
            else:
                routes[best[1]].append(c)
        return routes


    from glns.operators import native

    OP = native("random_removal")
''')
ITER = 25


@pytest.fixture(scope="module")
def ops_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spec_ops")
    (folder / f"{MODULE}.py").write_text(OPS_SOURCE)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(MODULE, None)


@pytest.fixture(scope="module")
def ops(ops_dir):
    import importlib

    return importlib.import_module(MODULE)


@pytest.fixture(scope="module")
def pool(ops_dir):
    with WorkerPool(workers=1, memory_mb=1024) as p:   # started after sys.path has the module
        yield p


@pytest.fixture(scope="module")
def cvrps():
    return [datasets.generate_cvrp(12, 1), datasets.generate_cvrp(15, 2)]


def _forms(ops, folder: Path) -> dict[str, object]:
    """Every way to say "destroy_fn" as a destroy operator."""
    return {
        "function": ops.destroy_fn,
        "Operator": operators.from_callable(ops.destroy_fn, "destroy"),
        "import path": f"{MODULE}:destroy_fn",
        "file path": f"{folder / MODULE}.py:destroy_fn",
        "PythonSource": PythonSource(OPS_SOURCE, "destroy_fn"),
        "source text": OPS_SOURCE,   # the entry is the one function named like a destroy
        "list": [f"{MODULE}:destroy_fn"],
    }


def _fingerprint(r: glns.Result) -> tuple:
    stats = tuple((s.name, s.calls, s.outcomes, s.failures, s.weight) for s in r.destroy_stats + r.repair_stats)
    return r.cost, r.solution_array().tolist(), r.best_curve.tolist(), stats


# ------------------------------------------------------------------ accepted forms


def test_every_form_parses_to_the_same_operator(ops, ops_dir):
    reference = parse(ops.destroy_fn, "destroy")
    assert reference.name == "destroy_fn" and reference.loaded
    for label, form in _forms(ops, ops_dir).items():
        [op] = parse_list(form, "destroy")
        assert op == reference, label
        assert op.loaded, label
        # unloaded (as a worker pool's caller parses): nothing executed, the same once loaded
        [lazy] = parse_list(form, "destroy", load=False)
        assert lazy.load() == reference, label
        # and the same after the trip to a worker
        assert Operator.from_wire(lazy.wire(), "destroy").load() == reference, label


def test_import_path_works_in_solve_and_equals_the_function(ops, cvrps):
    p = cvrps[0]
    by_path = glns.solve(p, f"{MODULE}:destroy_fn", f"{MODULE}:repair_fn", iterations=ITER, seed=3)
    by_func = glns.solve(p, ops.destroy_fn, ops.repair_fn, iterations=ITER, seed=3)
    assert _fingerprint(by_path) == _fingerprint(by_func)
    assert by_path.destroy_stats[0].name == "destroy_fn"


def test_every_form_gives_the_same_runs_in_solve_solve_many_and_evaluate(ops, ops_dir, cvrps, pool):
    params = glns.SolveParams(op_timeout=5.0)
    expected_many = [_fingerprint(glns.solve(p, ops.destroy_fn, "greedy_insertion", iterations=ITER,
                                             seed=run_seed(7, i), params=params))
                     for i, p in enumerate(cvrps)]
    expected_eval = [_fingerprint(glns.solve(p, ops.destroy_fn, "greedy_insertion", iterations=ITER,
                                             seed=s, params=params))
                     for p, s in zip(cvrps, (4, 5))]
    for label, form in _forms(ops, ops_dir).items():
        solved = [_fingerprint(glns.solve(p, form, "greedy_insertion", iterations=ITER, seed=run_seed(7, i),
                                          params=params)) for i, p in enumerate(cvrps)]
        assert solved == expected_many, label
        many = glns.solve_many(cvrps, form, "greedy_insertion", iterations=ITER, seed=7, params=params,
                               executor=pool)
        assert [_fingerprint(r) for r in many] == expected_many, label
        outcomes = evaluate(cvrps, form, "greedy_insertion", pool=pool, iterations=ITER, seeds=[4, 5],
                            params=params)
        assert all(o.ok for o in outcomes), (label, [o.error for o in outcomes])
        assert [_fingerprint(o.result) for o in outcomes] == expected_eval, label


def test_python_source_is_not_executed_by_a_worker_pools_caller():
    boom = "raise RuntimeError('ran in the caller')\ndef destroy(x, k, pd):\n    return [], x\n"
    [lazy] = parse_list(PythonSource(boom), "destroy", load=False)
    assert not lazy.loaded and lazy.wire() == ("python", boom, None, None)
    with pytest.raises(OperatorError, match="source raised RuntimeError when loaded: ran in the caller"):
        lazy.load()


def test_file_function_runs_like_operator_source(tmp_path, cvrps):
    # no import needed in the file: operator source gets np, random, ... (docs/operator-contract.md)
    path = tmp_path / "plain_ops.py"
    path.write_text("def shuffle_out(x, k, pd):\n    gone = set(random.sample([c for r in x for c in r], k))\n"
                    "    return list(gone), [[c for c in r if c not in gone] for r in x]\n")
    res = glns.solve(cvrps[0], f"{path}:shuffle_out", "greedy_insertion", iterations=10)
    assert res.destroy_stats[0].name == "shuffle_out" and res.destroy_stats[0].failures == 0


# ------------------------------------------------------------------ rejected forms


def _message(call) -> str:
    with pytest.raises((OperatorError, ValueError)) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("destroy, repair, expected", [
    ("nope", None, "destroy operator 0: unknown native operator 'nope'"),
    (["random_removal", "random_remval"], None, "destroy operator 1: unknown native operator 'random_remval'"),
    (42, None, "cannot use 42 as a destroy operator"),
    ([None], None, "destroy operator 0: cannot use None as a destroy operator"),
    ("greedy_insertion", None, "destroy operator 0: 'greedy_insertion' is a repair operator, used as destroy"),
    ("random_removal", "random_removal", "repair operator 0: 'random_removal' is a destroy operator, used as repair"),
    ("no_such_pkg.mod:destroy", None, "destroy operator 0: cannot import module 'no_such_pkg.mod' of "
                                      "'no_such_pkg.mod:destroy'"),
    ("/no/such/dir/ops.py:destroy", None, "destroy operator 0: cannot read '/no/such/dir/ops.py'"),
    ("/no/such/dir/ops.py", None, "no such operator module file: /no/such/dir/ops.py"),
    ([], None, "give at least one destroy and one repair operator"),
    ("random_removal", types.ModuleType("m"), "module 'm' passed as repair"),
    ("random_removal", "ops.py", "module 'ops.py' passed as repair"),
    (["random_removal", "ops.py"], None, "destroy operator 1: 'ops.py' is an operator module: pass it alone"),
])
def test_every_rejected_form_gives_the_same_message_everywhere(destroy, repair, expected, cvrps):
    via_solve = _message(lambda: glns.solve(cvrps[0], destroy, repair, iterations=5))
    via_many = _message(lambda: glns.solve_many(cvrps, destroy, repair, iterations=5, backend="serial"))
    via_evaluate = _message(lambda: evaluate(cvrps, destroy, repair, iterations=5))
    via_parser = _message(lambda: parse_arguments(destroy, repair, "cvrp"))
    assert via_solve == via_many == via_evaluate == via_parser
    assert expected in via_solve


def test_functions_that_cannot_reach_a_worker_are_refused_before_any_task(cvrps):
    def nested(x, k, pd):
        return [], x

    # glns.solve runs it in this process; a worker cannot import it
    assert glns.solve(cvrps[0], nested, "greedy_insertion", iterations=3).destroy_stats[0].calls == 3
    for call in (lambda: glns.solve_many(cvrps, nested, "greedy_insertion", iterations=3, backend="serial"),
                 lambda: evaluate(cvrps, [nested], "greedy_insertion", iterations=3)):
        assert "destroy operator 0: 'nested' cannot be sent to a worker process" in _message(call)


def test_a_missing_function_fails_in_the_caller_for_solve_and_in_the_task_for_a_pool(cvrps):
    spec = "glns.operators.seeds.vrp:no_such_function"
    assert "destroy operator 0: cannot import 'glns.operators.seeds.vrp:no_such_function': AttributeError" \
        in _message(lambda: glns.solve(cvrps[0], spec, iterations=3))
    [out] = glns.solve_many(cvrps[:1], spec, "greedy_insertion", iterations=3, backend="serial", errors="return")
    assert "destroy operator 0: cannot import 'glns.operators.seeds.vrp:no_such_function': AttributeError" \
        in out.error


def test_kind_is_checked(ops):
    with pytest.raises(OperatorError, match="kind must be 'destroy' or 'repair', got 'destroyer'"):
        parse("random_removal", "destroyer")
    with pytest.raises(OperatorError, match=f"'{MODULE}:OP' is a destroy operator, used as repair"):
        parse(f"{MODULE}:OP", "repair")
    assert parse(f"{MODULE}:OP", "destroy") == operators.native("random_removal")


# ------------------------------------------------------------------ exported modules


EXPORT = textwrap.dedent('''
    from glns.operators import from_source, native

    D_SRC = "def destroy(x, k, pd):\\n    gone = set(random.sample([c for r in x for c in r], k))\\n" \\
            "    return list(gone), [[c for c in r if c not in gone] for r in x]\\n"
    PROBLEM = "{problem}"
    META = {{"problem": "{problem}"}}
    DESTROY = [native("random_removal"), from_source(D_SRC, "destroy", name="d_py")]
    REPAIR = [native("greedy_insertion")]
    BEST_DESTROY = DESTROY[1]
    BEST_REPAIR = REPAIR[0]
    BEST = (BEST_DESTROY, BEST_REPAIR)
''')


@pytest.fixture
def export_path(tmp_path):
    path = tmp_path / "best_ops.py"
    path.write_text(EXPORT.format(problem="cvrp"))
    return path


def test_a_module_and_its_path_are_the_same(export_path, cvrps, pool):
    module = load_module(export_path)
    a, b = read_export(module), read_export(export_path)
    assert (a.problem, a.destroy, a.repair, a.best) == (b.problem, b.destroy, b.repair, b.best)
    assert [op.name for op in a.pair()[0]] == ["d_py"]
    runs = [_fingerprint(glns.solve(cvrps[0], spec, iterations=ITER, seed=2))
            for spec in (module, export_path, str(export_path))]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0] == _fingerprint(glns.solve(cvrps[0], [module.BEST_DESTROY], [module.BEST_REPAIR],
                                              iterations=ITER, seed=2))
    many = [[_fingerprint(r) for r in glns.solve_many(cvrps, spec, iterations=ITER, seed=1, executor=pool)]
            for spec in (module, export_path)]
    assert many[0] == many[1]
    evals = [[_fingerprint(o.result) for o in evaluate(cvrps, spec, None, pool=pool, iterations=ITER)]
             for spec in (module, str(export_path))]
    assert evals[0] == evals[1]


@pytest.mark.parametrize("used_on", ["tsp", "ovrp"])
def test_a_module_of_another_kind_is_refused_by_every_caller(export_path, used_on, capsys):
    problem = datasets.generate_tsp(8, 1) if used_on == "tsp" else datasets.generate_ovrp(8, 1)
    expected = f"operators evolved for CVRP used on a {used_on.upper()} (module '{export_path}')"
    messages = [_message(lambda: glns.solve(problem, export_path, iterations=5)),
                _message(lambda: glns.solve_many([problem], export_path, iterations=5, backend="serial")),
                _message(lambda: evaluate([problem], export_path, None, iterations=5))]
    assert messages[0] == messages[1] == messages[2] and expected in messages[0]
    module = load_module(export_path)
    assert "operators evolved for CVRP used on a" in _message(lambda: glns.solve(problem, module, iterations=5))
    assert main(["solve", "--problem", used_on, "--size", "8", "--destroy", str(export_path)]) == 2
    assert expected in capsys.readouterr().err


def test_export_format_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("PROBLEM = 'pdptw'\nDESTROY = ['random_removal']\nREPAIR = ['greedy_insertion']\n")
    with pytest.raises(OperatorError, match=r"PROBLEM is 'pdptw', not one of \['cvrp', 'ovrp', 'tsp', 'vrptw'\]"):
        read_export(bad)
    bad.write_text("PROBLEM = 'cvrp'\nDESTROY = ['random_removal', 'nope']\nREPAIR = ['greedy_insertion']\n")
    with pytest.raises(OperatorError, match=r"DESTROY\[1\]: unknown native operator 'nope'"):
        read_export(bad)
    plain = tmp_path / "plain.py"
    plain.write_text("DESTROY = 'random_removal'\nREPAIR = ['greedy_insertion']\nPROBLEMS = ['CVRP']\n")
    with pytest.raises(OperatorError, match="it has no PROBLEM"):
        read_export(plain)
    export = read_export(plain, plain=True)
    assert export.problem is None and export.problems == ("cvrp",) and export.best is None
    with pytest.raises(OperatorError, match=r"is for CVRP only \(its PROBLEMS\), used on a TSP"):
        export.check_problem("tsp")


def test_functions_of_a_module_file_travel_as_its_source(ops_dir, tmp_path):
    path = tmp_path / "fn_ops.py"
    path.write_text("PROBLEM = 'cvrp'\nimport random\n" + OPS_SOURCE.split('"""', 2)[2]
                    + "\nDESTROY = [destroy_fn]\nREPAIR = repair_fn\n")
    export = read_export(path, load=False)
    [d], [r] = export.pair()
    assert d.wire()[0] == "python" and d.wire()[2] == "destroy_fn" and r.name == "repair_fn"
    assert is_module_spec(path) and is_module_spec(str(path)) and not is_module_spec(f"{path}:destroy_fn")


def test_parse_per_kind_reads_a_module_file_once_and_checks_every_kind(export_path):
    out = parse_per_kind(export_path, None, set())          # no instances: its own kind
    assert list(out) == ["cvrp"]
    with pytest.raises(OperatorError, match="evolved for CVRP used on a TSP"):
        parse_per_kind(export_path, None, {"cvrp", "tsp"})


# ------------------------------------------------------------------ the command line


def test_glns_solve_accepts_file_and_import_paths_and_exports(ops, ops_dir, export_path, capsys):
    args = ["solve", "--size", "12", "--iterations", "20", "--seed", "4", "--json"]
    assert main(args + ["--destroy", f"{ops_dir / MODULE}.py:destroy_fn", "random_removal",
                        "--repair", f"{MODULE}:repair_fn"]) == 0
    record = json.loads(capsys.readouterr().out)
    p = datasets.generate_cvrp(12, 0)
    direct = glns.solve(p, [ops.destroy_fn, "random_removal"], [ops.repair_fn], iterations=20, seed=4)
    assert record["cost"] == direct.cost
    assert main(args + ["--destroy", str(export_path)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["cost"] == glns.solve(p, export_path, iterations=20, seed=4).cost
    assert main(args + ["--destroy", "nope"]) == 2
    assert "unknown native operator 'nope'" in capsys.readouterr().err

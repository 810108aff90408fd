"""A result to and from JSON, and its tables as CSV (glns.result)."""

import csv
import json

import numpy as np
import pytest

import glns
from glns import Result, datasets
from glns.result import RESULT_FORMAT


def _same(a: Result, b: Result) -> None:
    for name in Result.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


@pytest.mark.parametrize("problem, kw", [
    (datasets.generate_tsp(20, 1), {}),
    (datasets.generate_cvrp(30, 2), {"statistics": 8}),
    (datasets.generate_vrptw(25, 3), {}),
    (datasets.generate_ovrp(15, 4), {"statistics": "none"}),
])
def test_json_round_trip_keeps_everything(problem, kw, tmp_path):
    r = glns.solve(problem, iterations=300, seed=1, **kw)
    back = Result.from_json(r.to_json())
    _same(r, back)
    path = tmp_path / "r.json"
    r.to_json(path, indent=1)
    _same(r, Result.from_json(path))
    assert json.loads(path.read_text())["format"] == list(RESULT_FORMAT)
    assert back.num_routes == r.num_routes and back.summary() == r.summary()


def test_python_operator_results_round_trip_with_their_forms():
    from glns.operators.seeds import BY_PROBLEM

    seeds = BY_PROBLEM["cvrp"]
    r = glns.solve(datasets.generate_cvrp(20, 1), seeds.random_removal, "greedy_insertion", iterations=50)
    back = Result.from_json(r.to_json())
    assert back.destroy_stats == r.destroy_stats and back.destroy_stats[0].form == r.destroy_stats[0].form


def test_not_a_result_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not a glns result"):
        Result.from_json('{"cost": 3}')
    with pytest.raises(ValueError, match="not a glns result"):
        Result.from_json("{broken")
    r = glns.solve(datasets.generate_tsp(8, 1), iterations=10)
    data = json.loads(r.to_json())
    data["format"][1] = RESULT_FORMAT[1] + 1
    with pytest.raises(ValueError, match="newer glns"):
        Result.from_json(json.dumps(data))


def test_csv_tables(tmp_path):
    r = glns.solve(datasets.generate_cvrp(30, 5), ["random_removal", "string_removal"], "greedy_insertion",
                   iterations=200, seed=2)
    r.curves_to_csv(tmp_path / "curves.csv")
    r.improvements_to_csv(tmp_path / "best.csv")
    r.operators_to_csv(tmp_path / "ops.csv")
    curves = list(csv.DictReader(open(tmp_path / "curves.csv")))
    assert len(curves) == 200 and [int(row["iteration"]) for row in curves] == list(range(1, 201))
    assert [float(row["best"]) for row in curves] == r.best_curve.tolist()
    assert [float(row["current"]) for row in curves] == r.current_curve.tolist()
    best = list(csv.DictReader(open(tmp_path / "best.csv")))
    assert len(best) == len(r.improvements) and float(best[-1]["cost"]) == r.best_curve[-1]
    ops = list(csv.DictReader(open(tmp_path / "ops.csv")))
    assert [row["name"] for row in ops] == ["random_removal", "string_removal", "greedy_insertion"]
    assert sum(int(row["calls"]) for row in ops if row["kind"] == "destroy") == 200
    assert all(int(row["best"]) + int(row["better"]) + int(row["accepted"]) + int(row["rejected"])
               == int(row["calls"]) for row in ops)

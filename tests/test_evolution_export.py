"""Exporting evolved operators as one importable module, and glns.solve/evaluate accepting it."""

from __future__ import annotations

import ast
import inspect
import sys
import types

import pytest
from hypothesis import given, settings, strategies as st

import glns
from glns import operators
from glns.evolution.export import (atomic_write, export_module, load_module, module_text,
                                   string_literal)
from glns.evolution.population import Member
from glns.exceptions import OperatorError
from glns.offline_llm.corpus import good_entries
from glns.operators.seeds import BY_PROBLEM
from glns.sandbox import WorkerPool, evaluate
from conftest import make_problem

# ------------------------------------------------------------------ string literals

Q3, D3 = "'" * 3, '"' * 3
TRICKY = {
    "plain": "def f():\n    return 1\n",
    "single triple": f"x = {Q3}a ' b{Q3}\n",
    "double triple": f'x = {D3}a " b{D3}\n',
    "both triples": f"x = {Q3}{D3}{Q3}\ny = {D3}{Q3}{D3}\n",
    "backslashes": "s = 'a\\nb\\\\c\\'d'\np = r'C:\\x'\n",
    "continuation line": "y = 1 + \\\n    2\n",
    "trailing backslash": "# ends with a backslash \\",
    "trailing quote": "x = 'a'",
    "trailing double quote": 'x = "a"',
    "backslash quote": f"s = '\\''\nt = {Q3}\\{Q3}\n",
    "carriage return": "a = 1\r\nb = 2\r\n",
    "control characters": "a = '\x00\x0c\x1b'\n",
    "unicode": "# naïve café ∑ 🚚\nx = 'ü'\n",
    "empty": "",
    "tabs": "\tx = 1\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_string_literal_round_trips(name):
    text = TRICKY[name]
    assert ast.literal_eval(string_literal(text)) == text


def test_string_literal_prefers_readable_raw_forms():
    assert string_literal("a\\b\n") == "r'''a\\b\n'''"
    assert string_literal(TRICKY["single triple"]).startswith('r"""')
    assert string_literal(TRICKY["double triple"]).startswith("r'''")
    for name in ("both triples", "trailing backslash", "carriage return", "control characters"):
        assert not string_literal(TRICKY[name]).startswith("r"), name


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab'\"\\\n\r\t \x00é")) | st.characters(), max_size=40))
def test_string_literal_round_trips_any_text(text):
    literal = string_literal(text)
    assert ast.literal_eval(literal) == text
    compile(f"X = {literal}\n", "<t>", "exec")


# ------------------------------------------------------------------ members


def corpus_member(problem: str, kind: str, i: int, mid: str, **kw) -> Member:
    e = good_entries(problem, kind)[i]
    return Member(mid, kind, e.source(kind), kind, e.idea, kw.pop("action", "i1" if kind == "destroy" else "i2"), **kw)


def native_member(problem: str, name: str, mid: str) -> Member:
    func = getattr(BY_PROBLEM[problem], name)
    kind = operators.NATIVE_OPERATORS[name].kind
    return Member(mid, kind, inspect.getsource(func), name, inspect.getdoc(func).splitlines()[0],
                  "seed", native=name)


def tricky_member(mid: str) -> Member:
    """A working TSP destroy whose source has triple quotes of both kinds, backslashes, a
    continuation line and ends with a backslash."""
    source = (
        "def destroy(x, destroy_cnt, problem_data):\n"
        f"    {D3}Remove the first cities; note {Q3} and \\\\ here.{D3}\n"
        f"    label = {Q3}a {D3} b \\n{Q3}\n"
        "    k = min(destroy_cnt, \\\n"
        "            len(x))\n"
        "    return list(x[:k]), list(x[k:])\n"
        "# trailing comment \\"
    )
    return Member(mid, "destroy", source, "destroy", "Remove a prefix.\nSecond line.", "m1",
                  ("d0", "d1"), 4)


@pytest.fixture(scope="module")
def cvrp():
    return make_problem("cvrp", 20, 3, capacity=30)


@pytest.fixture(scope="module")
def cvrp_members():
    destroy = [corpus_member("cvrp", "destroy", 0, "d0"), corpus_member("cvrp", "destroy", 1, "d1")]
    repair = [corpus_member("cvrp", "repair", 0, "r0"), corpus_member("cvrp", "repair", 1, "r1")]
    return destroy, repair


@pytest.fixture(scope="module")
def cvrp_module(tmp_path_factory, cvrp_members):
    destroy, repair = cvrp_members
    path = tmp_path_factory.mktemp("export") / "cvrp_ops.py"
    meta = {"problem": "cvrp", "run_dir": "/runs/cvrp-1", "seed": 7, "cycle": 3, "best_score": 12.25}
    export_module(path, destroy, repair, (destroy[1], repair[0]), meta)
    return load_module(path)


def same_result(a: glns.Result, b: glns.Result) -> None:
    assert a.cost == b.cost
    assert a.solution == b.solution
    assert a.best_curve.tolist() == b.best_curve.tolist()


# ------------------------------------------------------------------ the module text


def test_module_text_is_valid_python_with_verbatim_sources(cvrp_members):
    destroy, repair = cvrp_members
    tricky = tricky_member("d9")
    text = module_text(destroy + [tricky], repair, None, {"problem": "tsp"})
    tree = ast.parse(text)
    consts = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id.endswith("_SOURCE")}
    assert consts == {"D0_SOURCE": destroy[0].source, "D1_SOURCE": destroy[1].source,
                      "D9_SOURCE": tricky.source, "R0_SOURCE": repair[0].source,
                      "R1_SOURCE": repair[1].source}
    # readable: the corpus sources are kept as raw triple-quoted text, not one long repr line
    assert f"D0_SOURCE = r{Q3}" in text or f"D0_SOURCE = r{D3}" in text


def test_module_docstring_and_lineage_comments(cvrp_module, cvrp_members):
    doc = cvrp_module.__doc__
    for fact in ("CVRP", "/runs/cvrp-1", "Seed: 7", "Cycle: 3", "12.25", glns.__version__,
                 "Best pair: d1 + r0", "glns.solve(problem, ops)", "load_module"):
        assert fact in doc, fact
    text = inspect.getsource(cvrp_module)
    d1 = cvrp_members[0][1]
    assert f"# d1: destroy, action i1, parents none, cycle 0\n# idea: {d1.idea}\nD1_SOURCE = " in text
    tricky_text = module_text([tricky_member("d9")], [cvrp_members[1][0]], None, {"problem": "tsp"})
    assert "# d9: destroy, action m1, parents d0, d1, cycle 4\n# idea: Remove a prefix. Second line.\n" \
        in tricky_text


def test_module_attributes(cvrp_module, cvrp_members):
    destroy, repair = cvrp_members
    m = cvrp_module
    assert m.PROBLEM == "cvrp"
    assert [op.name for op in m.DESTROY] == ["d0", "d1"]
    assert [op.name for op in m.REPAIR] == ["r0", "r1"]
    assert all(op.kind == "destroy" for op in m.DESTROY) and all(op.kind == "repair" for op in m.REPAIR)
    assert m.BEST == (m.BEST_DESTROY, m.BEST_REPAIR)
    assert m.BEST_DESTROY is m.DESTROY[1] and m.BEST_REPAIR is m.REPAIR[0]
    assert [op.source for op in m.DESTROY + m.REPAIR] == [x.source for x in destroy + repair]
    assert m.META["problem"] == "cvrp" and m.META["seed"] == 7
    assert m.META["glns_version"] == glns.__version__
    # each source ran in its own namespace: both entry functions are called `destroy`
    assert m.DESTROY[0].func is not m.DESTROY[1].func
    assert m.DESTROY[0].func.__name__ == m.DESTROY[1].func.__name__ == "destroy"


def test_tricky_sources_round_trip_by_importing(tmp_path):
    tricky = tricky_member("d9")
    repair = corpus_member("tsp", "repair", 0, "r0")
    mod = load_module(export_module(tmp_path / "t.py", [tricky], [repair], (tricky, repair),
                                    {"problem": "tsp"}))
    assert mod.BEST_DESTROY.source == tricky.source
    assert mod.D9_SOURCE == tricky.source
    res = glns.solve(make_problem("tsp", 12, 1, 0), mod, iterations=20, seed=2)
    assert sorted(res.solution) == list(range(12))


def test_best_pair_outside_the_populations_is_kept(tmp_path, cvrp_members):
    destroy, repair = cvrp_members
    old_d = corpus_member("cvrp", "destroy", 2, "d_old", cycle=1)
    old_r = corpus_member("cvrp", "repair", 2, "r_old", cycle=1)
    mod = load_module(export_module(tmp_path / "m.py", destroy, repair, (old_d, old_r), {"problem": "cvrp"}))
    assert [op.name for op in mod.DESTROY] == ["d0", "d1"]
    assert (mod.BEST_DESTROY.name, mod.BEST_REPAIR.name) == ("d_old", "r_old")
    assert mod.BEST_DESTROY.source == old_d.source


def test_meta_is_json_data_and_unknown_keys_are_shown(tmp_path, cvrp_members):
    destroy, repair = cvrp_members
    meta = {"problem": "CVRP", "notes": ("a", "b"), "flag": True, "none": None, "quote": "x'''y\\"}
    mod = load_module(export_module(tmp_path / "m.py", destroy, repair, None, meta))
    assert mod.META == {"problem": "cvrp", "notes": ["a", "b"], "flag": True, "none": None,
                        "quote": "x'''y\\", "glns_version": glns.__version__}
    assert 'notes: ["a", "b"]' in mod.__doc__


@pytest.mark.parametrize("meta, message", [
    ({}, "meta['problem']"),
    ({"problem": "pdptw"}, "meta['problem']"),
    ({"problem": "tsp", "x": float("nan")}, "JSON-able"),
    ({"problem": "tsp", "x": object()}, "JSON-able"),
])
def test_module_text_refuses_bad_meta(cvrp_members, meta, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        module_text(*cvrp_members, None, meta)


def test_module_text_refuses_inconsistent_members(cvrp_members):
    destroy, repair = cvrp_members
    with pytest.raises(ValueError, match="'r0' is a repair operator, expected destroy"):
        module_text(repair, repair, None, {"problem": "cvrp"})
    with pytest.raises(ValueError, match="best pair: 'd1' is a destroy operator, expected repair"):
        module_text(destroy, repair, (destroy[0], destroy[1]), {"problem": "cvrp"})
    clash = Member("d0", "destroy", destroy[1].source, "destroy", None, "m1")
    with pytest.raises(ValueError, match="share the id 'd0'"):
        module_text(destroy + [clash], repair, None, {"problem": "cvrp"})
    with pytest.raises(TypeError, match="expected a Member"):
        module_text(["random_removal"], repair, None, {"problem": "cvrp"})


# ------------------------------------------------------------------ files


def test_export_is_atomic_and_overwrites(tmp_path, cvrp_members):
    path = tmp_path / "sub" / "ops.py"
    export_module(path, *cvrp_members, None, {"problem": "cvrp", "cycle": 1})
    export_module(path, *cvrp_members, None, {"problem": "cvrp", "cycle": 2})
    assert [p.name for p in path.parent.iterdir()] == ["ops.py"]  # no temporary file left
    assert load_module(path).META["cycle"] == 2


def test_atomic_write_keeps_the_old_file_on_failure(tmp_path, monkeypatch):
    path = atomic_write(tmp_path / "f.txt", "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr("os.replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_load_module_gives_fresh_modules(tmp_path, cvrp_members):
    path = export_module(tmp_path / "ops.py", *cvrp_members, None, {"problem": "cvrp"})
    a, b = load_module(path), load_module(path)
    assert a is not b and a.__name__ != b.__name__
    assert a.__name__ not in sys.modules and b.__name__ not in sys.modules
    with pytest.raises(FileNotFoundError):
        load_module(tmp_path / "missing.py")


# ------------------------------------------------------------------ glns.solve with a module


@pytest.mark.parametrize("problem_kind", ["tsp", "cvrp", "ovrp"])
def test_solve_with_module_matches_the_same_operators(tmp_path, problem_kind):
    problem = make_problem(problem_kind, 20, 5, capacity=30)
    destroy = [corpus_member(problem_kind, "destroy", i, f"d{i}") for i in range(2)]
    repair = [corpus_member(problem_kind, "repair", i, f"r{i}") for i in range(2)]
    mod = load_module(export_module(tmp_path / "ops.py", destroy, repair, (destroy[1], repair[1]),
                                    {"problem": problem_kind}))
    same_d = [operators.from_source(m.source, "destroy", name=m.id, function=m.function) for m in destroy]
    same_r = [operators.from_source(m.source, "repair", name=m.id, function=m.function) for m in repair]

    best = glns.solve(problem, mod, iterations=50, seed=1)
    same_result(best, glns.solve(problem, [same_d[1]], [same_r[1]], iterations=50, seed=1))
    assert [s.name for s in best.destroy_stats] == ["d1"] and [s.name for s in best.repair_stats] == ["r1"]

    populations = glns.solve(problem, mod.DESTROY, mod.REPAIR, iterations=50, seed=1)
    same_result(populations, glns.solve(problem, same_d, same_r, iterations=50, seed=1))
    assert [s.name for s in populations.destroy_stats] == ["d0", "d1"]


def test_solve_without_best_pair_runs_the_populations(cvrp, tmp_path, cvrp_members):
    mod = load_module(export_module(tmp_path / "ops.py", *cvrp_members, None, {"problem": "cvrp"}))
    assert mod.BEST == (None, None)
    res = glns.solve(cvrp, mod, iterations=30, seed=3)
    same_result(res, glns.solve(cvrp, mod.DESTROY, mod.REPAIR, iterations=30, seed=3))
    assert [s.name for s in res.destroy_stats] == ["d0", "d1"]


def test_module_with_native_member(cvrp, tmp_path, cvrp_members):
    seed_d = native_member("cvrp", "worst_removal", "d_seed")
    seed_r = native_member("cvrp", "greedy_insertion", "r_seed")
    destroy, repair = cvrp_members
    mod = load_module(export_module(tmp_path / "ops.py", [seed_d] + destroy, [seed_r] + repair,
                                    (seed_d, repair[0]), {"problem": "cvrp"}))
    op = mod.DESTROY[0]
    assert op == operators.Operator(name="d_seed", kind="destroy", native_name="worst_removal",
                                    params=operators.native("worst_removal").params)
    assert mod.REPAIR[0].is_native and mod.REPAIR[0].name == "r_seed"
    assert mod.D_SEED_SOURCE == seed_d.source  # the readable twin is still in the file
    assert "# runs natively as worst_removal" in inspect.getsource(mod)
    res = glns.solve(cvrp, mod, iterations=40, seed=4)
    same_result(res, glns.solve(cvrp, [op], [mod.REPAIR[1]], iterations=40, seed=4))
    assert res.destroy_stats[0].name == "d_seed"


# ------------------------------------------------------------------ refusals


def test_module_with_repair_argument_is_refused(cvrp, cvrp_module):
    with pytest.raises(OperatorError, match="explicit repair argument"):
        glns.solve(cvrp, cvrp_module, "greedy_insertion", iterations=5)
    with pytest.raises(OperatorError, match="passed as repair"):
        glns.solve(cvrp, "random_removal", cvrp_module, iterations=5)


def test_module_without_attributes_is_refused(cvrp):
    bare = types.ModuleType("not_ops")
    with pytest.raises(OperatorError, match=r"'not_ops' is not an exported G-LNS operator module: "
                                            r"it has no PROBLEM, DESTROY, REPAIR"):
        glns.solve(cvrp, bare, iterations=5)
    half = types.ModuleType("half")
    half.PROBLEM, half.DESTROY, half.REPAIR = "cvrp", ["random_removal"], ["greedy_insertion"]
    half.BEST_DESTROY, half.BEST_REPAIR = "random_removal", None
    with pytest.raises(OperatorError, match="incomplete best pair"):
        glns.solve(cvrp, half, iterations=5)
    half.BEST_DESTROY = None  # no best pair: the populations run
    assert glns.solve(cvrp, half, iterations=5).destroy_stats[0].name == "random_removal"


@pytest.mark.parametrize("used_on", ["tsp", "ovrp"])
def test_problem_mismatch_is_refused(cvrp_module, used_on):
    problem = make_problem(used_on, 10, 1, capacity=30)
    with pytest.raises(OperatorError, match=f"operators evolved for CVRP used on a {used_on.upper()}"):
        glns.solve(problem, cvrp_module, iterations=5)


def test_tsp_module_refused_on_cvrp(tmp_path, cvrp):
    d, r = corpus_member("tsp", "destroy", 0, "d0"), corpus_member("tsp", "repair", 0, "r0")
    mod = load_module(export_module(tmp_path / "tsp_ops.py", [d], [r], (d, r), {"problem": "tsp"}))
    with pytest.raises(OperatorError, match="operators evolved for TSP used on a CVRP"):
        glns.solve(cvrp, mod, iterations=5)


# ------------------------------------------------------------------ sandbox evaluation


def test_evaluate_accepts_a_module(cvrp, cvrp_module):
    with WorkerPool(workers=1, memory_mb=512) as pool:
        via_module = evaluate([cvrp], cvrp_module, None, pool=pool, iterations=20, seeds=[5])
        direct = evaluate([cvrp], [cvrp_module.BEST_DESTROY], [cvrp_module.BEST_REPAIR], pool=pool,
                          iterations=20, seeds=[5])
    assert via_module[0].ok and direct[0].ok
    assert via_module[0].result.cost == direct[0].result.cost
    assert via_module[0].result.solution == direct[0].result.solution
    with pytest.raises(OperatorError, match="evolved for CVRP used on a TSP"):
        evaluate([make_problem("tsp", 10, 1, 0)], cvrp_module, None, iterations=5)

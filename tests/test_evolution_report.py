"""The run report: per-cycle summary table and convergence plot."""

from __future__ import annotations

import builtins

import pytest

from glns.evolution.population import Member
from glns.evolution.report import PLOT_HINT, cycle_best, plot_convergence, summary_table


def entry(cycle, episodes, seconds, admitted, rejected, calls, failures, tokens, validation, best):
    return {"cycle": cycle, "episodes": episodes, "seconds": seconds, "admitted": admitted,
            "rejected": rejected, "llm_calls": calls, "llm_failures": failures, "tokens": tokens,
            "destroy": ["d0", "d1"], "repair": ["r0", "r1"], "fitness": {"d0": 1.0, "r0": 2.0},
            "validation": [{"destroy": d, "repair": r, "score": s} for d, r, s in validation],
            "best": None if best is None else dict(zip(("destroy", "repair", "score", "cycle"), best))}


HISTORY = [
    entry(1, 10, 12.5, 4, 1, 5, 0, 1200, [("d0", "r0", 11.5), ("d1", "r0", 10.25)], ("d1", "r0", 10.25, 1)),
    entry(2, 20, 75.0, 7, 3, 11, 2, 2900, [], ("d1", "r0", 10.25, 1)),
    entry(3, 30, 3725.0, 9, 4, 15, 2, 4100, [("d3", "r2", 9.875), ("d0", "r2", 12.0)], ("d3", "r2", 9.875, 3)),
]
MEMBERS = {
    "d3": Member("d3", "destroy", "def destroy(x, k, p): ...", "destroy", "Remove a\nradial cluster.",
                 "c1", ("d0", "d1"), 3),
    "r2": Member("r2", "repair", "def repair(p, r, d): ...", "repair", "Regret insertion.", "m1", ("r0",), 2),
}


def test_cycle_best_is_the_lowest_validated_score():
    assert cycle_best(HISTORY[0]) == 10.25
    assert cycle_best(HISTORY[1]) is None
    assert cycle_best(HISTORY[2]) == 9.875


def test_summary_table_rows_hold_the_figures():
    lines = summary_table(HISTORY).splitlines()
    header, rule, rows = lines[0], lines[1], lines[2:5]
    for column in ("cycle", "episodes", "admitted", "rejected", "LLM calls", "tokens", "cycle best",
                   "best so far", "best pair", "elapsed"):
        assert column in header
    assert set(rule) <= {"-", " "}
    assert rows[0].split() == ["1", "10", "4", "1", "5", "1200", "10.2500", "10.2500", "d1", "+", "r0", "12.5s"]
    assert rows[1].split() == ["2", "20", "7", "3", "11", "(2", "failed)", "2900", "-", "10.2500",
                               "d1", "+", "r0", "1m15s"]
    assert rows[2].split() == ["3", "30", "9", "4", "15", "(2", "failed)", "4100", "9.8750", "9.8750",
                               "d3", "+", "r2", "1h02m05s"]
    # columns line up: the pair column starts under its header
    assert rows[0].index("d1 + r0") == rows[1].index("d1 + r0") == rows[2].index("d3 + r2") \
        == header.index("best pair")
    assert rows[0].index("10.2500") + len("10.2500") == header.index("cycle best") + len("cycle best")
    assert lines[5:] == ["", "Best pair: d3 + r2, validation score 9.8750 (cycle 3)"]


def test_summary_table_with_members_shows_the_ideas():
    tail = summary_table(HISTORY, MEMBERS).splitlines()[-2:]
    assert tail == ["  d3 (destroy, c1 from d0, d1, cycle 3): Remove a radial cluster.",
                    "  r2 (repair, m1 from r0, cycle 2): Regret insertion."]
    partial = summary_table(HISTORY, {"d3": MEMBERS["d3"]}).splitlines()[-1]
    assert partial == "  r2: (not among the given members)"


def test_summary_table_without_cycles_or_best_pair():
    assert summary_table([]).splitlines()[-1] == "(no cycle finished yet)"
    no_best = [entry(1, 10, 3.0, 2, 0, 2, 0, 100, [], None)]
    text = summary_table(no_best, MEMBERS)
    assert text.splitlines()[2].split()[6:9] == ["-", "-", "-"]
    assert text.endswith("No pair validated yet.")


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = plot_convergence(HISTORY, tmp_path / "plots" / "convergence.png", title="CVRP run")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000
    assert [p.name for p in path.parent.iterdir()] == ["convergence.png"]  # no temporary left


def test_plot_format_follows_the_suffix_and_handles_gaps(tmp_path):
    pytest.importorskip("matplotlib")
    # the first cycle has no best pair yet and no validation: nothing drawn there, no error
    history = [entry(1, 10, 1.0, 1, 0, 1, 0, 10, [], None)] + HISTORY[1:]
    svg = plot_convergence(history, tmp_path / "c.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_plot_draws_the_step_line_and_markers(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes

    calls = {}

    def spy(name):
        real = getattr(Axes, name)

        def wrapper(self, *args, **kwargs):
            calls[name] = (args, kwargs)
            return real(self, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(Axes, "step", spy("step"))
    monkeypatch.setattr(Axes, "plot", spy("plot"))
    plot_convergence(HISTORY, tmp_path / "c.png")
    (x, y), kw = calls["step"]
    assert list(x) == [1, 2, 3] and list(y) == [10.25, 10.25, 9.875] and kw["where"] == "post"
    (x, y), kw = calls["plot"]
    assert list(x) == [1, 2, 3] and y[0] == 10.25 and y[1] != y[1] and y[2] == 9.875  # NaN gap
    assert kw["marker"] == "o" and kw["linestyle"] == "none"


def test_plot_refuses_an_empty_history(tmp_path):
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="no finished cycle"):
        plot_convergence([], tmp_path / "c.png")


def test_plot_without_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(ImportError, match=r"pip install 'glns\[plot\]'") as info:
        plot_convergence(HISTORY, tmp_path / "c.png")
    assert info.value.msg == PLOT_HINT
    assert not (tmp_path / "c.png").exists()

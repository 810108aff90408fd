"""The lineage of an evolution run: glns.evolution.lineage (reading, text, DOT),
glns.plot.lineage (the figure) and `glns plot lineage`.

One real offline run per module (3 cycles, then resumed for a 4th) checks the reading against
the run's own files; a synthetic log of 20 cycles x 3 new operators per kind (~125 operators)
checks that the figure still builds and labels every operator at that size.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

import pytest

from glns import cli
from glns.evolution.lineage import lineage_from_events, lineage_text, read_lineage
from glns.evolution.rundir import read_events
from offline_runs import small_evolution_config

PNG = b"\x89PNG\r\n\x1a\n"
ACTION_PARENTS = {"seed": 0, "i1": 0, "i2": 0, "m1": 1, "m2": 1, "c1": 2, "c2": 2}

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False
needs_mpl = pytest.mark.skipif(not HAVE_MPL, reason="needs matplotlib")


# ---------------------------------------------------------------------------- a real run
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A small offline run: 3 cycles of 2 episodes, then resumed and extended to a 4th."""
    from glns.evolution import Evolution
    from glns.llm import LLMConfig
    from glns.offline_llm import OfflineLLMServer

    path = tmp_path_factory.mktemp("lineage") / "run"
    # the shared small run's settings; seed 1 draws every action
    cfg = small_evolution_config(generations=6, workers=1, seed=1)
    with OfflineLLMServer(seed=11, bad_rate=0.25) as server:
        llm = LLMConfig(base_url=server.base_url, model="offline", max_retries=2, backoff_base=0.01,
                        backoff_max=0.05, timeout=60)
        Evolution.start(path, cfg, llm).run()
        Evolution.resume(path, llm, generations=8).run()
    return path


def events_of(path: Path, name: str) -> list[dict]:
    return [e for e in read_events(path / "events.jsonl") if e["event"] == name]


def test_every_admitted_operator_is_a_node(run_dir):
    lineage = read_lineage(run_dir)
    admitted = events_of(run_dir, "admitted")
    assert list(lineage.nodes) == [e["id"] for e in admitted]
    for e in admitted:
        n = lineage.nodes[e["id"]]
        assert (n.kind, n.action, list(n.parents), n.cycle) == (e["kind"], e["action"], e["parents"], e["cycle"])
        assert len(n.parents) == ACTION_PARENTS[n.action]
        assert n.model == e.get("model")   # logged by newer controllers
    assert {n.action for n in lineage.nodes.values()} >= {"seed", "i1", "i2", "m1", "c1"}
    assert (lineage.cycle, lineage.finished_cycle, lineage.problem) == (4, 4, "cvrp")


def test_every_parent_edge_points_to_an_earlier_operator_alive_then(run_dir):
    lineage = read_lineage(run_dir)
    order = list(lineage.nodes)
    edges = {(e.parent, e.child): e.action for e in lineage.edges}
    assert len(edges) == len(lineage.edges) == sum(len(n.parents) for n in lineage.nodes.values())
    for n in lineage.nodes.values():
        for p in n.parents:
            assert edges[(p, n.id)] == n.action
            parent = lineage.nodes[p]
            assert order.index(p) < order.index(n.id) and parent.cycle <= n.cycle
            # parents are survivors of the prune that opened the child's cycle
            assert parent.pruned is None or parent.pruned > n.cycle
    # the two halves of every joint crossover are paired: same parents and cycle, one of each kind
    c2 = [n for n in lineage.nodes.values() if n.action == "c2"]
    assert len(lineage.pairs) * 2 == len(c2)
    for d, r in lineage.pairs:
        nd, nr = lineage.nodes[d], lineage.nodes[r]
        assert (nd.kind, nr.kind) == ("destroy", "repair")
        assert nd.parents == nr.parents and nd.cycle == nr.cycle
        assert lineage.sibling(d) == r and lineage.sibling(r) == d


def test_pruned_operators_carry_the_cycle_that_dropped_them_and_their_fitness(run_dir):
    lineage = read_lineage(run_dir)
    pruned = events_of(run_dir, "pruned")
    assert len(pruned) == 2 * 3   # cycles 2, 3 and 4, both kinds
    dropped = {i: e["cycle"] for e in pruned for i in e["dropped"]}
    assert {n.id: n.pruned for n in lineage.nodes.values() if not n.alive} == dropped
    # the F a dropped operator had when it was dropped (that of the cycle before)
    for e in pruned:
        for i in e["dropped"]:
            assert (lineage.nodes[i].fitness, lineage.nodes[i].fitness_cycle) == (e["fitness"][i], e["cycle"] - 1)
    # the live ones are the final populations, with the F of the last cycle
    last = json.loads((run_dir / "populations" / "cycle_004.json").read_text())
    alive = [m["id"] for m in last["destroy"] + last["repair"]]
    assert sorted(n.id for n in lineage.nodes.values() if n.alive) == sorted(alive)
    for i in alive:
        assert (lineage.nodes[i].fitness, lineage.nodes[i].fitness_cycle) == (last["scores"]["fitness"][i], 4)


def test_best_pair_and_validation_scores(run_dir):
    lineage = read_lineage(run_dir)
    best = json.loads((run_dir / "checkpoint.json").read_text())["best"]
    assert lineage.best == (best["destroy"], best["repair"])
    assert (lineage.best_score, lineage.best_cycle) == (pytest.approx(best["score"]), best["cycle"])
    assert {n.id for n in lineage.nodes.values() if n.best} == {best["destroy"], best["repair"]}
    scores: dict[str, list[float]] = {}
    for e in events_of(run_dir, "validation"):
        for i in (e["destroy"], e["repair"]):
            scores.setdefault(i, []).append(float(e["score"]))
    assert {n.id: n.validation for n in lineage.nodes.values() if n.validation is not None} == \
        {i: min(s) for i, s in scores.items()}
    assert lineage.nodes[best["destroy"]].validation == pytest.approx(best["score"])


def test_a_resumed_run_reads_only_the_kept_events(run_dir, tmp_path):
    assert len(events_of(run_dir, "resumed")) == 1
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    # what a resume cut off, and a population file whose cycle never finished, do not count
    ghost = {"event": "admitted", "id": "d99", "kind": "destroy", "action": "m1", "parents": ["d0"], "cycle": 5}
    with open(copy / "events.abandoned.jsonl", "a") as f:
        f.write(json.dumps(ghost) + "\n" + json.dumps({"event": "pruned", "cycle": 5, "kind": "destroy",
                                                       "dropped": list(read_lineage(copy).nodes)[:2]}) + "\n")
    stale = json.loads((copy / "populations" / "cycle_004.json").read_text())
    stale["cycle"] = 5
    stale["scores"]["fitness"] = {k: -1.0 for k in stale["scores"]["fitness"]}
    (copy / "populations" / "cycle_005.json").write_text(json.dumps(stale))
    before, after = read_lineage(run_dir), read_lineage(copy)
    assert after.nodes.keys() == before.nodes.keys() and "d99" not in after.nodes
    assert [(n.pruned, n.fitness) for n in after.nodes.values()] == \
        [(n.pruned, n.fitness) for n in before.nodes.values()]


def test_a_run_in_progress(run_dir, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    lines = (copy / "events.jsonl").read_text().splitlines(keepends=True)
    # cut the log after the first operator admitted in cycle 4: cycle 4 is under way
    cut = next(k for k, line in enumerate(lines)
               if json.loads(line)["event"] == "admitted" and json.loads(line)["cycle"] == 4)
    (copy / "events.jsonl").write_text("".join(lines[: cut + 1]) + '{"event": "episo')   # torn line
    lineage = read_lineage(copy)
    assert (lineage.cycle, lineage.finished_cycle) == (4, 3)
    new = [n for n in lineage.nodes.values() if n.cycle == 4]
    assert len(new) == 1 and new[0].fitness is None and new[0].alive
    # populations/cycle_004.json is on disk, but its cycle is not finished in this log
    assert max(n.fitness_cycle for n in lineage.nodes.values() if n.fitness_cycle is not None) == 3
    assert "cycles 1-3 finished, cycle 4 in progress" in lineage_text(lineage)


def test_text_view_has_a_row_per_operator(run_dir):
    lineage = read_lineage(run_dir)
    text = lineage_text(lineage)
    rows = {line.split()[1] if line.startswith("*") else line.split()[0]: line
            for line in text.splitlines()[2:] if line.strip() and line.split()[0] in ("*", *lineage.nodes)}
    assert rows.keys() == lineage.nodes.keys()
    for n in lineage.nodes.values():
        cells = rows[n.id].split()
        assert cells[0] == ("*" if n.best else n.id)
        assert ("alive" if n.alive else str(n.pruned)) in cells
        assert (n.fitness is None) or f"{n.fitness:.1f}" in cells
    assert text.count("\n* ") == 2 and f"best pair {lineage.best[0]} + {lineage.best[1]}" in text


def test_dot_names_every_operator_edge_and_pair(run_dir):
    lineage = read_lineage(run_dir)
    dot = lineage.to_dot()
    assert dot.startswith("digraph lineage {") and dot.rstrip().endswith("}")
    for n in lineage.nodes.values():
        assert f'"{n.id}" [label="{n.id}' in dot
    for e in lineage.edges:
        assert f'"{e.parent}" -> "{e.child}" [label="{e.action}"' in dot
    for d, r in lineage.pairs:
        assert f'"{d}" -> "{r}" [dir=none' in dot
    assert dot.count("penwidth=3") == 2   # the best pair


@needs_mpl
def test_cli_writes_the_figure_the_text_and_the_dot(run_dir, tmp_path, capsys):
    out = tmp_path / "lineage.png"
    assert cli.main(["plot", "lineage", str(run_dir), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {out}"
    assert out.read_bytes().startswith(PNG) and out.stat().st_size > 20_000
    assert cli.main(["plot", "lineage", str(run_dir), "--text", "--dot", str(tmp_path / "l.dot")]) == 0
    printed = capsys.readouterr().out
    assert printed == lineage_text(read_lineage(run_dir)) + f"\nwrote {tmp_path / 'l.dot'}\n"
    assert (tmp_path / "l.dot").read_text() == read_lineage(run_dir).to_dot()


@needs_mpl
def test_figure_of_the_real_run_draws_every_operator(run_dir):
    from glns.plot.lineage import lineage_figure

    lineage = read_lineage(run_dir)
    (ax,) = lineage_figure(run_dir).axes
    labels = {t.get_text() for t in ax.texts}
    assert set(lineage.nodes) <= labels
    assert {t.get_text() for t in ax.texts if t.get_fontweight() == "bold"} == set(lineage.best)


@pytest.mark.parametrize("setup, message", [
    ("none", "is not a glns evolution run directory (no config.json)"),
    ("empty", "the run has no admitted operators yet"),
    ("nothing", "glns plot lineage needs -o FILE, --text or --dot FILE"),
])
def test_cli_errors(tmp_path, capsys, setup, message):
    if setup != "none":
        (tmp_path / "config.json").write_text('{"evolution": {"problem": "tsp"}}')
        (tmp_path / "events.jsonl").write_text(json.dumps({"event": "run_started"}) + "\n")
    args = ["plot", "lineage", str(tmp_path)] + ([] if setup == "nothing" else ["--text"])
    assert cli.main(args) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------- synthetic
def synthetic_events(cycles: int = 20, new: int = 3, population: int = 5, seed: int = 0,
                     models: tuple[str, ...] = ()) -> tuple[list[dict], list[dict]]:
    """The events and population records of a made-up run: each cycle prunes `new` operators
    per kind and refills them by m1/m2/c1/c2 (c2 adds one of each kind)."""
    rng = random.Random(seed)
    events: list[dict] = []
    records: list[dict] = []
    pops: dict[str, list[str]] = {"destroy": [], "repair": []}
    count = {"destroy": 0, "repair": 0}

    def admit(kind: str, action: str, parents: list[str], cycle: int) -> None:
        i = f"{kind[0]}{count[kind]}"
        count[kind] += 1
        pops[kind].append(i)
        e = {"event": "admitted", "id": i, "kind": kind, "action": action, "parents": parents, "cycle": cycle}
        if models and action != "seed":
            e["model"] = rng.choice(models)
        events.append(e)

    best = None
    for kind, n in (("destroy", 2), ("repair", 1)):
        for _ in range(n):
            admit(kind, "seed", [], 0)
    for c in range(1, cycles + 1):
        events.append({"event": "cycle_started", "cycle": c})
        if c == 1:
            for kind, action in (("destroy", "i1"), ("repair", "i2")):
                while len(pops[kind]) < population:
                    admit(kind, action, [], c)
        else:
            for kind in ("destroy", "repair"):
                fitness = records[-1]["scores"]["fitness"]
                ranked = sorted(pops[kind], key=lambda i: -fitness[i])
                pops[kind] = ranked[: population - new]
                events.append({"event": "pruned", "cycle": c, "kind": kind, "dropped": ranked[population - new:],
                               "kept": pops[kind], "fitness": {i: fitness[i] for i in ranked}})
            survivors = {k: list(v) for k, v in pops.items()}
            while len(pops["destroy"]) < population or len(pops["repair"]) < population:
                short = [k for k in pops if len(pops[k]) < population]
                if len(short) == 2 and rng.random() < 0.2:
                    parents = [rng.choice(survivors["destroy"]), rng.choice(survivors["repair"])]
                    admit("destroy", "c2", parents, c)
                    admit("repair", "c2", parents, c)
                    continue
                kind = rng.choice(short)
                if rng.random() < 0.55:
                    admit(kind, rng.choice(["m1", "m2"]), [rng.choice(survivors[kind])], c)
                else:
                    admit(kind, "c1", rng.sample(survivors[kind], 2), c)
        fitness = {i: round(rng.uniform(80, 160), 1) for k in pops for i in pops[k]}
        d, r = rng.choice(pops["destroy"]), rng.choice(pops["repair"])
        score = round(6.0 - 0.05 * c + rng.uniform(0, 0.5), 4)
        events.append({"event": "validation", "cycle": c, "destroy": d, "repair": r, "score": score})
        if best is None or score < best["score"]:
            best = {"destroy": d, "repair": r, "score": score, "cycle": c}
        records.append({"cycle": c, "destroy": [{"id": i} for i in pops["destroy"]],
                        "repair": [{"id": i} for i in pops["repair"]], "scores": {"fitness": fitness}})
        events.append({"event": "cycle_finished", "cycle": c, "best": dict(best)})
    return events, records


def test_synthetic_run_reads_back():
    events, records = synthetic_events()
    lineage = lineage_from_events(events, records, problem="cvrp")
    assert len(lineage.nodes) == 2 + 1 + 3 + 4 + 19 * 3 * 2 == 124
    assert all(len(n.parents) == ACTION_PARENTS[n.action] for n in lineage.nodes.values())
    # population 5: five of each kind are alive at the end
    assert sum(n.alive for n in lineage.of_kind("destroy")) == sum(n.alive for n in lineage.of_kind("repair")) == 5
    assert lineage.pairs and all(lineage.nodes[d].parents == lineage.nodes[r].parents for d, r in lineage.pairs)
    with pytest.raises(ValueError, match="no admitted operators"):
        lineage_from_events([e for e in events if e["event"] != "admitted"])


@needs_mpl
def test_synthetic_125_operator_figure_labels_every_operator(tmp_path):
    from glns.plot._mpl import save_figure
    from glns.plot.lineage import lane_positions, lineage_figure

    events, records = synthetic_events(models=("deepseek-chat", "gpt-4o-mini"))
    lineage = lineage_from_events(events, records, problem="cvrp")
    fig = lineage_figure(lineage)
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    # every operator is labelled with its id and, written by one of two LLMs, its model
    for n in lineage.nodes.values():
        assert (f"{n.id} · {n.model}" if n.model else n.id) in texts
    # lanes: one per operator, destroy above repair, never shared
    y = lane_positions(lineage)
    assert len(set(y.values())) == len(lineage.nodes)
    assert max(y[n.id] for n in lineage.of_kind("destroy")) < min(y[n.id] for n in lineage.of_kind("repair"))
    # a legend entry per action, and the best pair
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"seed", "i1/i2 initialisation", "m1 logic mutation", "m2 parameter mutation",
            "c1 homogeneous crossover", "c2 joint crossover"} <= set(legend)
    assert any(t.startswith(f"best pair {lineage.best[0]} + {lineage.best[1]}") for t in legend)
    # labels stay at a readable size and the lanes at least that far apart
    height = fig.get_size_inches()[1]
    assert min(t.get_fontsize() for t in ax.texts) >= 5 and height / (len(lineage.nodes) + 2) >= 0.1
    path = save_figure(fig, tmp_path / "lineage.png")
    assert path.read_bytes().startswith(PNG)


def test_without_matplotlib_the_figure_names_the_extra_and_text_still_works(monkeypatch, tmp_path, capsys):
    events, records = synthetic_events(cycles=3)
    lineage = lineage_from_events(events, records)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    from glns.plot.lineage import lineage_figure

    with pytest.raises(ImportError, match=r"pip install 'glns\[plot\]'"):
        lineage_figure(lineage)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    assert cli.main(["plot", "lineage", str(run), "-o", str(tmp_path / "l.png")]) == 2
    assert "pip install 'glns[plot]'" in capsys.readouterr().err
    assert cli.main(["plot", "lineage", str(run), "--text"]) == 0
    assert capsys.readouterr().out.startswith("Lineage of the run")

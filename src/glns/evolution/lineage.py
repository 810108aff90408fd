"""The family tree of an evolution run's operators, read from its run directory.

:func:`read_lineage` reads ``events.jsonl`` (the ``admitted``, ``pruned``, ``validation`` and
``cycle_finished`` events) and the population files of the finished cycles; it works on a
finished run, a run in progress and a resumed one. Only ``events.jsonl`` counts: a resume
moves the events of the abandoned cycle to ``events.abandoned.jsonl``, and a population file
written just before a kill (its ``cycle_finished`` never logged) is ignored.

:func:`lineage_text` is a plain-text table for terminals; :meth:`Lineage.to_dot` is Graphviz
DOT text; ``glns.plot.lineage`` draws it. No matplotlib here.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from glns.evolution.rundir import RunDirectory, read_events

__all__ = ["ACTION_COLOURS", "ACTION_NAMES", "OTHER_COLOUR", "Node", "Edge", "Lineage", "read_lineage",
           "lineage_from_events", "lineage_header", "lineage_text"]

KINDS = ("destroy", "repair")

#: what each action means (docs/evolution.md); the order of legends
ACTION_NAMES = {"seed": "seed", "i1": "i1/i2 initialisation", "i2": "i1/i2 initialisation",
                "m1": "m1 logic mutation", "m2": "m2 parameter mutation",
                "c1": "c1 homogeneous crossover", "c2": "c2 joint crossover"}

#: one colour per action (i1 and i2 are the same action for the two kinds), shared by the
#: figure and the DOT text; actions added later get OTHER_COLOUR
ACTION_COLOURS = {"seed": "#7f7f7f", "i1": "#1f77b4", "i2": "#1f77b4", "m1": "#2ca02c",
                  "m2": "#17becf", "c1": "#ff7f0e", "c2": "#d62728"}
OTHER_COLOUR = "#8c564b"


@dataclass(frozen=True)
class Node:
    """One admitted operator.

    cycle: the cycle it was admitted in (0 for the seeds); pruned: the cycle whose prune
    dropped it (it was last evaluated in cycle pruned - 1), None while it is in a population;
    fitness: its global fitness F in fitness_cycle, the last finished cycle it was in;
    validation: the best (lowest) validation score of a pair it was in; best: in the run's
    best pair; model: the LLM that wrote it, when the event log says.
    """

    id: str
    kind: str
    action: str
    parents: tuple[str, ...]
    cycle: int
    pruned: int | None = None
    fitness: float | None = None
    fitness_cycle: int | None = None
    validation: float | None = None
    best: bool = False
    model: str | None = None
    idea: str = ""

    @property
    def alive(self) -> bool:
        return self.pruned is None


@dataclass(frozen=True)
class Edge:
    """Parent -> child; action is the child's (m1/m2: one parent; c1: parent 1 the
    inspiration, parent 2 the base; c2: the destroy and the repair parent)."""

    parent: str
    child: str
    action: str


@dataclass(frozen=True)
class Lineage:
    """The operators of a run (`nodes`, in admission order), their parent edges, the c2
    siblings (`pairs`: destroy id, repair id, created together), the best pair so far, and
    how far the run got: `cycle` started, `finished_cycle` finished (0: none yet)."""

    nodes: dict[str, Node]
    edges: tuple[Edge, ...]
    pairs: tuple[tuple[str, str], ...] = ()
    best: tuple[str, str] | None = None
    best_score: float | None = None
    best_cycle: int | None = None
    cycle: int = 0
    finished_cycle: int = 0
    problem: str | None = None
    path: Path | None = None

    def of_kind(self, kind: str) -> list[Node]:
        """The nodes of one population kind, in admission order."""
        return [n for n in self.nodes.values() if n.kind == kind]

    def sibling(self, node_id: str) -> str | None:
        """The other half of a c2 pair, if `node_id` is one."""
        for d, r in self.pairs:
            if node_id in (d, r):
                return r if node_id == d else d
        return None

    @property
    def models(self) -> list[str]:
        """The distinct LLMs named by the admissions, in order of appearance."""
        return list(dict.fromkeys(n.model for n in self.nodes.values() if n.model))

    def to_dot(self) -> str:
        """Graphviz DOT text: one box (destroy) or ellipse (repair) per operator, filled with
        its action's colour, dashed when pruned, bold when in the best pair; edges parent ->
        child (dashed for c1, bold for c2), the c2 siblings joined by an undirected bold edge;
        operators admitted in one cycle share a rank. Render with ``dot -Tsvg``."""
        return _dot(self)


# ---------------------------------------------------------------------------- reading
def _score(value: Any) -> float | None:
    """A finite score, or None (JSON keeps inf as the string "inf")."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _populations(path: Path, upto: int) -> list[dict[str, Any]]:
    """The population records of cycles 1..upto (files of unfinished cycles are ignored)."""
    out = []
    for f in sorted((path / "populations").glob("cycle_*.json")):
        try:
            rec = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue   # a torn or unreadable file adds nothing the events do not say
        if isinstance(rec, dict) and int(rec.get("cycle", upto + 1)) <= upto:
            out.append(rec)
    return out


def read_lineage(run_dir: str | os.PathLike) -> Lineage:
    """The lineage of the evolution run in `run_dir`. Raises ValueError when the directory
    is not a glns evolution run or no operator has been admitted yet."""
    path = Path(run_dir)
    if not (path / RunDirectory.CONFIG).is_file():
        raise ValueError(f"{path} is not a glns evolution run directory (no {RunDirectory.CONFIG})")
    try:
        config = json.loads((path / RunDirectory.CONFIG).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path / RunDirectory.CONFIG} is not valid JSON: {exc.msg}") from None
    events = read_events(path / RunDirectory.EVENTS)
    finished = max((int(e["cycle"]) for e in events if e.get("event") == "cycle_finished"), default=0)
    problem = (config.get("evolution") or {}).get("problem") if isinstance(config, dict) else None
    return lineage_from_events(events, _populations(path, finished), problem=problem, path=path)


def lineage_from_events(events: Iterable[Mapping[str, Any]],
                        populations: Iterable[Mapping[str, Any]] = (), *,
                        problem: str | None = None, path: Path | None = None) -> Lineage:
    """Build the lineage from the events of a run log and its population records (the
    contents of ``populations/cycle_NNN.json`` of finished cycles). Raises ValueError when
    the events admit no operator."""
    admitted: dict[str, Mapping[str, Any]] = {}
    pruned: dict[str, int] = {}
    fitness: dict[str, tuple[int, float]] = {}   # id -> (cycle of F, F)
    validation: dict[str, float] = {}
    best: Mapping[str, Any] | None = None
    started = finished = 0

    def note_fitness(cycle: int, values: Mapping[str, Any]) -> None:
        for k, v in values.items():
            if k not in fitness or fitness[k][0] <= cycle:
                fitness[k] = (cycle, float(v))

    for e in events:
        kind = e.get("event")
        if kind == "admitted":
            admitted[str(e["id"])] = e   # ids are never reused; the last admission wins
        elif kind == "pruned":
            for i in e.get("dropped", ()):
                pruned[str(i)] = int(e["cycle"])
            # F of the cycle before the prune, for the dropped and the kept
            note_fitness(int(e["cycle"]) - 1, e.get("fitness") or {})
        elif kind == "validation":
            score = _score(e.get("score"))
            for i in (e.get("destroy"), e.get("repair")):
                if score is not None and i is not None:
                    validation[str(i)] = min(score, validation.get(str(i), math.inf))
        elif kind == "cycle_started":
            started = max(started, int(e["cycle"]))
        elif kind == "cycle_finished":
            finished = max(finished, int(e["cycle"]))
            best = e.get("best") or best
    for rec in populations:
        note_fitness(int(rec["cycle"]), (rec.get("scores") or {}).get("fitness") or {})
    if not admitted:
        where = f"{path}: " if path is not None else ""
        raise ValueError(f"{where}the run has no admitted operators yet")

    best_pair = (str(best["destroy"]), str(best["repair"])) if best else None
    nodes = {}
    for i, e in admitted.items():
        f = fitness.get(i)
        nodes[i] = Node(id=i, kind=str(e["kind"]), action=str(e.get("action") or "?"),
                        parents=tuple(str(p) for p in e.get("parents") or ()),
                        cycle=int(e.get("cycle", 0)), pruned=pruned.get(i),
                        fitness=f[1] if f else None, fitness_cycle=f[0] if f else None,
                        validation=validation.get(i), best=best_pair is not None and i in best_pair,
                        model=e.get("model") or None, idea=" ".join(str(e.get("idea") or "").split()))
    # edges only between known operators (a parent is always admitted before its child)
    edges = tuple(Edge(p, n.id, n.action) for n in nodes.values() for p in n.parents if p in nodes)
    return Lineage(nodes=nodes, edges=edges, pairs=_c2_pairs(nodes.values()), best=best_pair,
                   best_score=_score(best.get("score")) if best else None,
                   best_cycle=int(best["cycle"]) if best and best.get("cycle") is not None else None,
                   cycle=max(started, finished, max(n.cycle for n in nodes.values())),
                   finished_cycle=finished, problem=problem, path=path)


def _c2_pairs(nodes: Iterable[Node]) -> tuple[tuple[str, str], ...]:
    """The c2 siblings: a destroy and a repair child of the same parents in the same cycle,
    matched in admission order (the two halves need not be logged next to each other)."""
    waiting: dict[tuple[int, tuple[str, ...]], dict[str, list[str]]] = {}
    for n in nodes:
        if n.action == "c2":
            waiting.setdefault((n.cycle, n.parents), {k: [] for k in KINDS})[n.kind].append(n.id)
    return tuple(pair for halves in waiting.values()
                 for pair in zip(halves["destroy"], halves["repair"]))


# ---------------------------------------------------------------------------- text
def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _status(lineage: Lineage) -> str:
    if lineage.cycle > lineage.finished_cycle:
        done = f"cycles 1-{lineage.finished_cycle} finished" if lineage.finished_cycle else "no cycle finished"
        return f"{done}, cycle {lineage.cycle} in progress"
    return f"cycles 1-{lineage.finished_cycle} finished"


def lineage_header(lineage: Lineage) -> str:
    """One line: the run, how many operators, how far it got, the best pair."""
    counts = ", ".join(f"{len(lineage.of_kind(k))} {k}" for k in KINDS)
    what = f"{lineage.problem} run" if lineage.problem else "run"
    where = f" {lineage.path}" if lineage.path is not None else ""
    line = f"Lineage of the {what}{where}: {len(lineage.nodes)} operators ({counts}), {_status(lineage)}"
    if lineage.best:
        line += (f"; best pair {lineage.best[0]} + {lineage.best[1]}, validation "
                 f"{_num(lineage.best_score)} (cycle {lineage.best_cycle})")
    return line


def _parents_cell(lineage: Lineage, n: Node) -> str:
    cell = ", ".join(n.parents) or "-"
    sibling = lineage.sibling(n.id)
    return f"{cell} (pair {sibling})" if sibling else cell


def lineage_text(lineage: Lineage) -> str:
    """A plain-text view: a header line, then per kind one row per operator in admission
    order: id (``*`` marks the best pair), action, parents (and the c2 sibling), the cycle
    admitted, the cycle pruned (or ``alive``), F and its cycle, the best validation score of
    a pair it was in, and the LLM model when the log names one."""
    with_model = bool(lineage.models)
    head = ["", "id", "action", "parents", "admitted", "pruned", "F (cycle)", "validation"]
    head += ["model"] if with_model else []
    lines = [lineage_header(lineage),
             ("F: global fitness in the last finished cycle the operator was in (higher is better); "
              "validation: best score of a validated pair it was in (lower is better); * best pair")]
    for kind in KINDS:
        rows = [head]
        for n in lineage.of_kind(kind):
            f = "-" if n.fitness is None else f"{_num(n.fitness, 1)} ({n.fitness_cycle})"
            row = ["*" if n.best else "", n.id, n.action, _parents_cell(lineage, n), str(n.cycle),
                   "alive" if n.alive else str(n.pruned), f, _num(n.validation)]
            rows.append(row + ([n.model or "-"] if with_model else []))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines += ["", f"{kind} ({len(rows) - 1})"]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- DOT
def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dot(lineage: Lineage) -> str:
    out = ["digraph lineage {",
           f"  graph [rankdir=LR, fontname=Helvetica, label={_quote(lineage_header(lineage))}];",
           "  node [style=filled, fontname=Helvetica, fontsize=10];",
           "  edge [arrowsize=0.6];"]
    for n in lineage.nodes.values():
        label = "\n".join([n.id] + ([n.model] if n.model else [])
                          + ([f"F {_num(n.fitness, 1)}"] if n.fitness is not None else []))
        style = "filled" + (",dashed" if not n.alive else "") + (",bold" if n.best else "")
        tip = f"{n.action}, cycle {n.cycle}" + ("" if n.alive else f", pruned in {n.pruned}")
        out.append(f"  {_quote(n.id)} [label={_quote(label)}, shape={'box' if n.kind == 'destroy' else 'ellipse'}, "
                   f"fillcolor={_quote(ACTION_COLOURS.get(n.action, OTHER_COLOUR))}, style={_quote(style)}, "
                   f"penwidth={3 if n.best else 1}, tooltip={_quote(tip + (': ' + n.idea if n.idea else ''))}];")
    for e in lineage.edges:
        style = {"c1": "dashed", "c2": "bold"}.get(e.action, "solid")
        out.append(f"  {_quote(e.parent)} -> {_quote(e.child)} [label={_quote(e.action)}, style={style}, "
                   f"color={_quote(ACTION_COLOURS.get(e.action, OTHER_COLOUR))}];")
    for d, r in lineage.pairs:
        out.append(f"  {_quote(d)} -> {_quote(r)} [dir=none, style=bold, penwidth=2, constraint=false, "
                   f"color={_quote(ACTION_COLOURS['c2'])}];")
    for c in sorted({n.cycle for n in lineage.nodes.values()}):
        ids = "; ".join(_quote(n.id) for n in lineage.nodes.values() if n.cycle == c)
        out.append(f"  {{ rank=same; {ids}; }}")
    out.append("}")
    return "\n".join(out) + "\n"

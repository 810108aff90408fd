"""The family tree of an evolution run's operators as a figure (``glns plot lineage``).

x is the cycle; the destroy operators fill the upper band and the repair operators the lower
one, one lane per operator in admission order. Each operator is a dot at the cycle it was
admitted in (its colour: the action that made it), then a line for as long as it stayed in
its population: a pruned one fades and ends with a cross at the cycle that dropped it, a live
one runs to the right edge. Curves lead from the parents: solid for a mutation, dashed for a
homogeneous crossover; the two children of a joint crossover (c2) are joined by a bracket
across the bands and each is linked to the parent of its own kind. The best pair has a gold
halo. Labels: the id next to the dot (and the model, when several LLMs wrote operators), the
last known fitness F at the end of the line.
"""

from __future__ import annotations

import os
from typing import Any

from glns.evolution.lineage import (ACTION_COLOURS, ACTION_NAMES, OTHER_COLOUR, Lineage, Node,
                                    read_lineage)
from glns.plot._mpl import new_figure

__all__ = ["lineage_figure", "lane_positions"]

#: empty lanes between the destroy and the repair band
GAP = 1.5
#: height of one lane and width of one cycle in inches while the figure stays within the caps
LANE_IN, CYCLE_IN = 0.17, 0.8
MAX_HEIGHT_IN, MAX_WIDTH_IN = 60.0, 40.0
#: labels smaller than this (points) would not be readable: they are left out
MIN_FONT = 3.5
BEST_COLOUR = "#ffbf00"


def lane_positions(lineage: Lineage) -> dict[str, float]:
    """The y of every operator's lane: destroy lanes 0, 1, ... in admission order, then the
    repair lanes after a gap (the axis is inverted, so destroy is on top)."""
    destroy, repair = lineage.of_kind("destroy"), lineage.of_kind("repair")
    y = {n.id: float(i) for i, n in enumerate(destroy)}
    y.update({n.id: len(destroy) + GAP + i for i, n in enumerate(repair)})
    return y


def _colour(action: str) -> str:
    return ACTION_COLOURS.get(action, OTHER_COLOUR)


def _end(n: Node, last: int) -> float:
    """Where the lane line ends: the cycle that dropped it, or past the last cycle."""
    return float(n.pruned) if n.pruned is not None else last + 0.45


def _curve(ax: Any, x0: float, y0: float, x1: float, y1: float, **style: Any) -> None:
    """A cubic curve that leaves (x0, y0) and enters (x1, y1) horizontally."""
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path

    bend = 0.55 * (x1 - x0)
    path = Path([(x0, y0), (x0 + bend, y0), (x1 - bend, y1), (x1, y1)],
                [Path.MOVETO, Path.CURVE4, Path.CURVE4, Path.CURVE4])
    ax.add_patch(PathPatch(path, fill=False, **style))


def _draw_edges(ax: Any, lineage: Lineage, y: dict[str, float]) -> None:
    nodes = lineage.nodes
    for e in lineage.edges:
        child, parent = nodes[e.child], nodes[e.parent]
        # a c2 child with its sibling drawn is linked to its own kind's parent only; the
        # bracket to the sibling stands for the cross-band half
        if e.action == "c2" and lineage.sibling(child.id) and parent.kind != child.kind:
            continue
        x1 = child.cycle - 0.08
        x0 = max(child.cycle - 0.55, parent.cycle + 0.05)
        style = {"c1": (0, (4, 2)), "c2": (0, (1, 1.5))}.get(e.action, "solid")
        _curve(ax, x0, y[parent.id], x1, y[child.id], edgecolor=_colour(e.action), linestyle=style,
               linewidth=1.0 if e.action != "c2" else 1.3, alpha=0.8, zorder=3)
    per_cycle: dict[int, int] = {}
    for d, r in lineage.pairs:
        c = nodes[d].cycle
        # pairs of one cycle get spines side by side, so that no two brackets merge
        k = per_cycle[c] = per_cycle.get(c, -1) + 1
        spine = c - 0.15 - 0.07 * k
        ax.plot([c - 0.06, spine, spine, c - 0.06], [y[d], y[d], y[r], y[r]], color=_colour("c2"),
                linewidth=1.8, alpha=0.75, solid_joinstyle="miter", zorder=3.5)


def _text_width(text: str, font: float, unit_in: float) -> float:
    """An estimate of the width of `text` in x units (0.55 em per character, DejaVu Sans)."""
    return len(text) * font * 0.55 / 72 / unit_in


def _draw_nodes(ax: Any, lineage: Lineage, y: dict[str, float], font: float, marker: float,
                unit_in: float) -> float:
    """Lane lines, dots, crosses and labels; returns the right end of the rightmost label."""
    several_models = len(lineage.models) > 1
    right = float(lineage.cycle)
    for n in lineage.nodes.values():
        colour, yy, end = _colour(n.action), y[n.id], _end(n, lineage.cycle)
        alpha = 1.0 if n.alive else 0.45
        if n.best:
            ax.plot([n.cycle, end], [yy, yy], color=BEST_COLOUR, linewidth=marker * 0.9,
                    alpha=0.45, solid_capstyle="round", zorder=1)
            ax.plot([n.cycle], [yy], "o", color=BEST_COLOUR, markersize=marker * 2.1, zorder=4)
        ax.plot([n.cycle, end], [yy, yy], color=colour, linewidth=1.4 if n.alive else 1.0,
                alpha=0.85 if n.alive else 0.4, zorder=2)
        ax.plot([n.cycle], [yy], "o", markersize=marker, markerfacecolor=colour, alpha=alpha,
                markeredgecolor="black" if n.alive else colour, markeredgewidth=0.6, zorder=5)
        if n.pruned is not None:
            # above the labels: a label too long for its lane line must not hide the cross
            ax.plot([end], [yy], "x", color="0.35", markersize=marker * 0.8, markeredgewidth=1.0, zorder=7)
        if font < MIN_FONT:
            continue
        name = _label(n, several_models)
        ax.text(n.cycle + 0.1, yy, name, fontsize=font, va="center", ha="left", zorder=6,
                fontweight="bold" if n.best else "normal", color="black" if n.alive else "0.3",
                bbox={"boxstyle": "square,pad=0.05", "facecolor": "white", "edgecolor": "none",
                      "alpha": 0.8})
        right = max(right, n.cycle + 0.1 + _text_width(name, font, unit_in))
        if n.fitness is not None:
            # after the line's end, or after the id label where that runs past the end (the
            # lane is the operator's own, so nothing else is drawn there)
            x = max(end + (0.12 if n.pruned is not None else 0.06),
                    n.cycle + 0.18 + _text_width(name, font, unit_in))
            f = f"{n.fitness:.1f}"
            ax.text(x, yy, f, fontsize=font * 0.9, va="center", ha="left", color="0.25", zorder=6)
            right = max(right, x + _text_width(f, font * 0.9, unit_in))
    return right


def _label(n: Node, with_model: bool) -> str:
    """The id, and the model that wrote the operator when the run used several."""
    return n.id + (f" · {_short(n.model)}" if with_model and n.model else "")


def _short(model: str, limit: int = 24) -> str:
    """A model name for a label: without a provider prefix, at most `limit` characters."""
    model = model.rsplit("/", 1)[-1]
    return model if len(model) <= limit else model[: limit - 1] + "…"


def _legend(fig: Any, lineage: Lineage, marker: float) -> None:
    from matplotlib.lines import Line2D

    handles, seen = [], set()
    for n in lineage.nodes.values():
        label = ACTION_NAMES.get(n.action, n.action)
        if label not in seen:
            seen.add(label)
            handles.append(Line2D([], [], marker="o", linestyle="none", markersize=marker,
                                  markerfacecolor=_colour(n.action), markeredgecolor="black",
                                  markeredgewidth=0.6, label=label))
    order = list(dict.fromkeys(ACTION_NAMES.values()))
    handles.sort(key=lambda h: order.index(h.get_label()) if h.get_label() in order else len(order))
    grey = "0.35"
    handles += [
        Line2D([], [], color=grey, marker="o", markerfacecolor=grey, markeredgecolor="black",
               linewidth=1.4, markersize=marker, label="in the population at the end"),
        Line2D([], [], color=grey, marker="x", alpha=0.6, linewidth=1.0, markersize=marker,
               label="pruned (x: the cycle that dropped it)"),
        Line2D([], [], color=grey, linewidth=1.0, label="mutation: parent → child"),
        Line2D([], [], color=grey, linewidth=1.0, linestyle=(0, (4, 2)), label="c1: both parents → child"),
        Line2D([], [], color=grey, linewidth=1.3, linestyle=(0, (1, 1.5)),
               label="c2: parent of the same kind → child"),
        Line2D([], [], color=_colour("c2"), linewidth=1.8, label="c2 pair: the two children of one request"),
    ]
    if lineage.best:
        d, r = lineage.best
        score = f": {lineage.best_score:.4f}" if lineage.best_score is not None else ""
        handles.append(Line2D([], [], marker="o", linestyle="none", markersize=marker * 2.1,
                              color=BEST_COLOUR, label=f"best pair {d} + {r}{score} (cycle {lineage.best_cycle})"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 3),
               fontsize="small", frameon=False)


def _title(lineage: Lineage) -> str:
    what = f"{lineage.problem.upper()} run" if lineage.problem else "run"
    name = f" {lineage.path.name}" if lineage.path is not None else ""
    progress = (f"cycle {lineage.cycle} in progress" if lineage.cycle > lineage.finished_cycle
                else f"{lineage.finished_cycle} cycles")
    title = f"Operator lineage of the {what}{name}: {len(lineage.nodes)} operators, {progress}"
    if len(lineage.models) == 1:
        title += f" (written by {lineage.models[0]})"
    return title


def lineage_figure(source: Lineage | str | os.PathLike, title: str | None = None) -> Any:
    """Draw the lineage of an evolution run (a :class:`~glns.evolution.lineage.Lineage` or a
    run directory, read with :func:`~glns.evolution.lineage.read_lineage`): see the module
    docstring for what is drawn. Returns a matplotlib Figure; ImportError without matplotlib,
    ValueError for a directory that is not a run or has no admitted operator."""
    lineage = source if isinstance(source, Lineage) else read_lineage(source)
    y = lane_positions(lineage)
    rows = len(lineage.nodes) + GAP
    # a tall run keeps its lanes apart by shrinking them (and the labels) past the height cap
    lane = min(LANE_IN, (MAX_HEIGHT_IN - 2.5) / rows)
    font = min(7.0, lane * 72 * 0.6)
    marker = min(6.0, lane * 72 * 0.45)
    # a cycle is wide enough for the longest label to end before a one-cycle line does
    several_models = len(lineage.models) > 1
    longest = max(len(_label(n, several_models)) for n in lineage.nodes.values())
    cycle_in = max(CYCLE_IN, longest * font * 0.55 / 72 + 0.3)
    width = min(MAX_WIDTH_IN, max(8.0, 1.5 + cycle_in * (lineage.cycle + 2)))
    fig = new_figure(width, 2.5 + lane * rows)
    fig.set_layout_engine("constrained")
    ax = fig.add_subplot()

    for c in range(0, lineage.cycle + 1, 2):   # stripes make the cycles easy to follow
        ax.axvspan(c - 0.5, c + 0.5, color="0.95", zorder=0, linewidth=0)
    n_destroy = len(lineage.of_kind("destroy"))
    ax.axhline(n_destroy - 1 + (GAP + 1) / 2, color="0.5", linewidth=0.8, zorder=0.5)
    _draw_edges(ax, lineage, y)
    # inches per cycle on the x axis, for fitting labels (the axes take all but ~1.3 in)
    unit_in = (width - 1.3) / (lineage.cycle + 1.9)
    right = _draw_nodes(ax, lineage, y, font, marker, unit_in)

    ax.set_xlim(-0.6, max(lineage.cycle + 1.3, right + 0.1))
    ax.set_ylim(len(lineage.nodes) + GAP - 0.4, -0.6)
    ticks = range(0, lineage.cycle + 1, 1 if lineage.cycle <= 30 else 5)
    ax.set_xticks(list(ticks), [str(c) if c else "seeds" for c in ticks], fontsize="small")
    ax.set_xlabel("cycle admitted → cycle pruned (x) or end of the run")
    n_repair = len(lineage.nodes) - n_destroy
    centres = [(n_destroy - 1) / 2, n_destroy + GAP + (n_repair - 1) / 2]
    ax.set_yticks(centres, [f"destroy\n({n_destroy})", f"repair\n({n_repair})"])
    ax.tick_params(axis="y", length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    _legend(fig, lineage, marker)
    fig.suptitle(title if title is not None else _title(lineage), fontsize="large")
    return fig

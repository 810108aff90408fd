"""What an evolution run did, for people: a per-cycle summary table and a convergence plot.

Both read the controller's history, one dict per finished cycle::

    {"cycle": 1, "episodes": 10, "seconds": 41.2, "admitted": 7, "rejected": 2,
     "llm_calls": 9, "llm_failures": 0, "tokens": 15230,
     "destroy": ["d0", ...], "repair": ["r0", ...], "fitness": {"d0": 3.5, ...},
     "validation": [{"destroy": "d0", "repair": "r0", "score": 10.8}, ...],
     "best": {"destroy": "d0", "repair": "r0", "score": 10.8, "cycle": 1} or None}

Counts, tokens and seconds are cumulative; ``validation`` lists the pairs validated in that
cycle and ``best`` is the best pair so far. Scores are mean validation costs: lower is better.
The plot needs matplotlib (the optional extra ``plot``); the table needs nothing.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from glns.evolution.export import atomic_write
from glns.evolution.population import Member

__all__ = ["summary_table", "plot_convergence", "cycle_best", "text_table", "PLOT_HINT"]

#: what to do when matplotlib is missing
PLOT_HINT = "the convergence plot needs matplotlib: pip install 'glns[plot]'"

_COLUMNS = ("cycle", "episodes", "admitted", "rejected", "LLM calls", "tokens", "cycle best",
            "best so far", "best pair", "elapsed")


def text_table(rows: Sequence[Sequence[str]], left: Sequence[int] = (0,)) -> list[str]:
    """Rows (the first is the header) as aligned text columns under a dashed rule; the
    columns in `left` are left-aligned, the others (numbers) right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def cycle_best(entry: Mapping[str, Any]) -> float | None:
    """The lowest validation score among the pairs validated in this cycle (None: none)."""
    scores = [float(v["score"]) for v in entry.get("validation") or ()]
    scores = [s for s in scores if math.isfinite(s)]
    return min(scores) if scores else None


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _elapsed(seconds: float) -> str:
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _row(entry: Mapping[str, Any]) -> tuple[str, ...]:
    best = entry.get("best")
    calls = f"{int(entry.get('llm_calls', 0))}"
    if entry.get("llm_failures"):
        calls += f" ({int(entry['llm_failures'])} failed)"
    return (str(entry["cycle"]), str(entry.get("episodes", "-")), str(entry.get("admitted", 0)),
            str(entry.get("rejected", 0)), calls, str(entry.get("tokens", 0)),
            _score(cycle_best(entry)), _score(float(best["score"]) if best else None),
            f"{best['destroy']} + {best['repair']}" if best else "-",
            _elapsed(entry.get("seconds", 0.0)))


def _member_line(member_id: str, members: Mapping[str, Member] | None) -> str:
    m = members.get(member_id) if members else None
    if m is None:
        return f"  {member_id}: (not among the given members)"
    parents = f" from {', '.join(m.parents)}" if m.parents else ""
    idea = " ".join((m.idea or "(no idea recorded)").split())
    return f"  {m.id} ({m.kind}, {m.action}{parents}, cycle {m.cycle}): {idea}"


def summary_table(history: Sequence[Mapping[str, Any]],
                  members: Mapping[str, Member] | None = None) -> str:
    """A plain-text table, one row per cycle: episodes, admitted and rejected operators, LLM
    calls (and failures), tokens, the cycle's best validation score, the best-so-far score and
    pair, elapsed time; then the final best pair, with the ideas of its two members when
    `members` (id -> Member) is given."""
    # numbers right-aligned, the pair left-aligned
    lines = text_table([_COLUMNS] + [_row(e) for e in history], left=(_COLUMNS.index("best pair"),))
    if not history:
        return "\n".join(lines + ["(no cycle finished yet)"])
    best = history[-1].get("best")
    if not best:
        lines += ["", "No pair validated yet."]
    else:
        lines += ["", f"Best pair: {best['destroy']} + {best['repair']}, validation score "
                      f"{float(best['score']):.4f} (cycle {best.get('cycle', '?')})"]
        if members is not None:
            lines += [_member_line(best["destroy"], members), _member_line(best["repair"], members)]
    return "\n".join(lines)


def _curves(history: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[float], list[float]]:
    cycles = [int(e["cycle"]) for e in history]
    nan = float("nan")
    best = [float(e["best"]["score"]) if e.get("best") else nan for e in history]
    found = [cycle_best(e) for e in history]
    return cycles, best, [nan if s is None else s for s in found]


def plot_convergence(history: Sequence[Mapping[str, Any]], path: str | os.PathLike,
                     title: str = "") -> Path:
    """Plot the best-so-far validation score per cycle (step line) and each cycle's best
    validated score (markers) to `path` (format from its suffix, e.g. .png, .svg, .pdf).

    Drawn with matplotlib's Agg canvas directly, without pyplot, so it needs no display and
    leaves the caller's matplotlib backend alone. The file is written atomically. Raises
    ImportError when matplotlib is missing and ValueError when the history is empty.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(PLOT_HINT) from exc
    if not history:
        raise ValueError("nothing to plot: the history has no finished cycle")

    cycles, best, found = _curves(history)
    fig = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.step(cycles, best, where="post", color="C0", linewidth=2, label="best so far")
    ax.plot(cycles, found, linestyle="none", marker="o", color="C1", label="best validated this cycle")
    ax.set_xlabel("cycle")
    ax.set_ylabel("mean validation cost")
    ax.set_xticks(cycles if len(cycles) <= 20 else cycles[::math.ceil(len(cycles) / 20)])
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    fig.tight_layout()

    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=path.suffix.lstrip(".").lower() or "png")
    return atomic_write(path, buffer.getvalue())

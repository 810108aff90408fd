"""``glns bench compare DIR_A DIR_B``: two result directories side by side, instance by instance.

The check it makes: with B the longer budget (``--time-per-100 24`` against 2.4 on the same
instances), no instance where a solver's run in B is worse than its run in A. Runs are matched
by (solver, group, instance); only instances both directories ran count. A run that failed in
B where A's succeeded counts as worse. Exit status 0 when B is never worse, 1 otherwise.
"""

from __future__ import annotations

import sys
from typing import Any, Mapping, Sequence

import numpy as np

from glns.benchmark import report

__all__ = ["compare_runs", "compare_markdown", "cmd_compare"]


def _by_key(doc: Mapping[str, Any]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    return {(r["solver"], r["group"], r["instance"]): r for r in doc["runs"]}


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def compare_runs(doc_a: Mapping[str, Any], doc_b: Mapping[str, Any],
                 tolerance: float = 1e-9) -> list[dict[str, Any]]:
    """One row per solver both records ran: the instances both ran (``common``), how many B
    did better, equal (relative difference within ``tolerance``) or worse than A, the mean gap
    of each over the common instances (where both have a reference), and ``worse``: the
    matched pairs of runs where B is worse or failed and A did not."""
    a, b = _by_key(doc_a), _by_key(doc_b)
    rows: dict[str, dict[str, Any]] = {}
    for key in (k for k in a if k in b):
        ra, rb = a[key], b[key]
        row = rows.setdefault(key[0], {"solver": key[0], "common": 0, "better": 0, "equal": 0,
                                       "worse": [], "gaps_a": [], "gaps_b": []})
        row["common"] += 1
        ca, cb = ra["cost"], rb["cost"]
        if ca is None and cb is None:
            continue
        if ca is not None and cb is not None:
            row["gaps_a"].append(ra["gap"])
            row["gaps_b"].append(rb["gap"])
        if cb is None or (ca is not None and cb > ca + tolerance * abs(ca)):
            row["worse"].append((ra, rb))
        elif ca is None or cb < ca - tolerance * abs(ca):
            row["better"] += 1
        else:
            row["equal"] += 1
    for row in rows.values():
        both = [(x, y) for x, y in zip(row.pop("gaps_a"), row.pop("gaps_b")) if x is not None and y is not None]
        row["mean_gap_a"] = _mean([x for x, _ in both])
        row["mean_gap_b"] = _mean([y for _, y in both])
    return list(rows.values())


def _budget(doc: Mapping[str, Any]) -> str:
    """A record's budgets in a few words, for the header."""
    s = doc.get("settings", {})
    if s.get("time_per_100") is not None:
        return f"{s['time_per_100']:g} s per 100 customers"
    glns = f"glns {s['glns_time_limit']:g} s" if s.get("glns_time_limit") else f"glns {s.get('iterations')} iterations"
    return f"{glns}, baselines {s.get('time_limit'):g} s"


def _cost(x: float | None) -> str:
    return "failed" if x is None else f"{x:.6g}"


def compare_markdown(rows: Sequence[Mapping[str, Any]], where_a: str, doc_a: Mapping[str, Any],
                     where_b: str, doc_b: Mapping[str, Any]) -> str:
    """The comparison as Markdown: the budgets, a table per solver, the instances B is worse on."""
    head = f"A: {where_a} ({_budget(doc_a)})\nB: {where_b} ({_budget(doc_b)})\n\n"
    if not rows:
        return head + "No (solver, instance) pair ran in both.\n"
    table = [[r["solver"], str(r["common"]), str(len(r["worse"])), str(r["better"]), str(r["equal"]),
              f"{report._gap(r['mean_gap_a'])} %", f"{report._gap(r['mean_gap_b'])} %"] for r in rows]
    out = head + report._table(["solver", "instances in both", "B worse", "B better", "equal",
                                "mean gap A", "mean gap B"], table) + "\n"
    worse = [(r["solver"], ra, rb) for r in rows for ra, rb in r["worse"]]
    if not worse:
        return out + "\nB is worse than A on no instance.\n"
    lines = [[solver, ra["group"], ra["instance"], _cost(ra["cost"]), _cost(rb["cost"]),
              f"{report._gap(ra['gap'])} %", f"{report._gap(rb['gap'])} %"] for solver, ra, rb in worse]
    return (out + f"\nB is worse than A on {len(worse)} run(s):\n\n"
            + report._table(["solver", "group", "instance", "cost A", "cost B", "gap A", "gap B"], lines) + "\n")


def cmd_compare(paths: Sequence[str], tolerance: float = 1e-9) -> int:
    """Print the comparison of two result directories; 0 when B is never worse, else 1."""
    if len(paths) != 2:
        raise ValueError(f"glns bench compare takes two result directories (A, then B), got {len(paths)}")
    doc_a, doc_b = (report.read_results(p) for p in paths)
    rows = compare_runs(doc_a, doc_b, tolerance)
    print(compare_markdown(rows, paths[0], doc_a, paths[1], doc_b), end="")
    if not rows:
        print("glns bench compare: the two records share no run", file=sys.stderr)
    return 1 if any(r["worse"] for r in rows) else 0

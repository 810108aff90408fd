"""Where a run's LLM budget went, for people: tokens and cost per cycle and per action type,
and per model the admission rate and the fitness its operators earned.

Reads the history records of the controller (cumulative ``tokens``, ``cost``, ``by_action``,
``by_model`` per finished cycle) and the run's members (which model wrote each operator).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from glns.evolution.population import Member
from glns.evolution.report import text_table

__all__ = ["usage_tables", "model_contributions"]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return text_table([tuple(header)] + [tuple(r) for r in rows])


def _rate(admitted: float, rejected: float) -> str:
    answers = admitted + rejected
    return f"{100.0 * admitted / answers:.0f} %" if answers else "-"


def _money(value: float) -> str:
    return f"{value:.4f}"


def model_contributions(history: Sequence[Mapping[str, Any]],
                        members: Mapping[str, Member]) -> dict[str, dict[str, float]]:
    """Per model: operators admitted, fitness F its operators earned over all cycles (and the
    share of all F earned by LLM-written operators), operators in the final populations."""
    out: dict[str, dict[str, float]] = {}
    for m in members.values():
        if m.model is not None:
            out.setdefault(m.model, {"operators": 0, "fitness": 0.0, "final": 0})["operators"] += 1
    for record in history:
        for op_id, f in (record.get("fitness") or {}).items():
            m = members.get(op_id)
            if m is not None and m.model is not None:
                out[m.model]["fitness"] += float(f)
    if history:
        for op_id in list(history[-1].get("destroy", ())) + list(history[-1].get("repair", ())):
            m = members.get(op_id)
            if m is not None and m.model is not None:
                out[m.model]["final"] += 1
    total = sum(v["fitness"] for v in out.values())
    for v in out.values():
        v["fitness_share"] = v["fitness"] / total if total > 0 else 0.0
    return out


def usage_tables(history: Sequence[Mapping[str, Any]], members: Mapping[str, Member]) -> str:
    """Three plain-text tables: per cycle, per action type, per model."""
    if not history:
        return ""
    lines = ["LLM usage per cycle"]
    rows, before = [], {"tokens": 0, "cost": 0.0, "llm_calls": 0}
    for r in history:
        rows.append((str(r["cycle"]), str(int(r.get("llm_calls", 0)) - before["llm_calls"]),
                     str(int(r.get("tokens", 0)) - before["tokens"]),
                     _money(float(r.get("cost", 0.0)) - before["cost"]),
                     f"{float((r.get('timing') or {}).get('refill', 0.0)):.1f}",
                     f"{float((r.get('timing') or {}).get('episodes', 0.0)):.1f}"))
        before = {"tokens": int(r.get("tokens", 0)), "cost": float(r.get("cost", 0.0)),
                  "llm_calls": int(r.get("llm_calls", 0))}
    lines += _table(("cycle", "LLM calls", "tokens", "cost USD", "refill s", "episodes s"), rows)
    last = history[-1]
    by_action = last.get("by_action") or {}
    if by_action:
        lines += ["", "LLM usage per action type"]
        rows = [(a, str(int(v.get("calls", 0))), str(int(v.get("failures", 0))),
                 str(int(v.get("prompt_tokens", 0) + v.get("completion_tokens", 0))),
                 _money(float(v.get("cost", 0.0))), str(int(v.get("admitted", 0))),
                 str(int(v.get("rejected", 0))), str(int(v.get("duplicates", 0))),
                 _rate(v.get("admitted", 0), v.get("rejected", 0)))
                for a, v in sorted(by_action.items())]
        lines += _table(("action", "calls", "failed", "tokens", "cost USD", "admitted", "rejected",
                         "duplicates", "admission"), rows)
    by_model = last.get("by_model") or {}
    if by_model:
        contrib = model_contributions(history, members)
        lines += ["", "Models"]
        rows = []
        for name, v in sorted(by_model.items()):
            c = contrib.get(name, {"fitness": 0.0, "fitness_share": 0.0, "final": 0})
            rows.append((name, str(int(v.get("calls", 0))),
                         str(int(v.get("prompt_tokens", 0) + v.get("completion_tokens", 0))),
                         _money(float(v.get("cost", 0.0))), str(int(v.get("admitted", 0))),
                         _rate(v.get("admitted", 0), v.get("rejected", 0)),
                         f"{c['fitness']:.1f} ({100 * c['fitness_share']:.0f} %)", str(int(c["final"]))))
        lines += _table(("model", "calls", "tokens", "cost USD", "admitted", "admission",
                         "fitness F earned", "in final pops"), rows)
    return "\n".join(lines)

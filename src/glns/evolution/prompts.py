"""Prompt texts of the G-LNS actions (paper Appendix C; docs/method.md), in our own words.

Every prompt has the paper's parts, in this order: the marker lines of
:mod:`glns.llm.markers` (the offline test server answers by them; a real LLM reads them as the
task's headline), the task background, the problem and operator contract
(:func:`task_description`), the reference or parent operators as context (idea and fenced
code), the function to write with its inputs and outputs, and the logical constraints and
answer format: the idea in one sentence inside braces, then one python code block.

- :func:`init_prompt`: ``i1`` (destroy) / ``i2`` (repair), a new operator unlike the references;
- :func:`mutation_prompt`: ``m1`` logic evolution / ``m2`` parameter calibration of one parent;
- :func:`homogeneous_crossover_prompt`: ``c1``, the form of parent 2 with ideas of parent 1;
- :func:`joint_crossover_prompt`: ``c2``, a new destroy/repair pair made for each other;
- :func:`feedback_prompt`: the follow-up message after a rejected answer.

The texts are kept short (a real LLM bills per token): the operator contract is stated once,
in the task description, and the per-action parts refer to it.
"""

from __future__ import annotations

import re
from typing import Sequence

from glns.evolution.population import Member
from glns.problems import PROBLEM_KINDS, plural, problem_class
from glns.llm import markers
from glns.sandbox.check_types import CheckConfig
from glns.sandbox.evaluation import DEFAULT_OP_TIMEOUT

__all__ = ["SYSTEM_PROMPT", "task_description", "init_prompt", "mutation_prompt",
           "homogeneous_crossover_prompt", "joint_crossover_prompt", "feedback_prompt"]

PROBLEMS = tuple(PROBLEM_KINDS)
KINDS = ("destroy", "repair")
MUTATIONS = ("m1", "m2")

SYSTEM_PROMPT = (
    "You are an expert in heuristic optimisation who designs destroy and repair operators for "
    "adaptive large neighbourhood search (ALNS). You answer exactly in the format asked: the "
    "idea in one sentence inside braces, then one python code block, nothing else."
)

# what the pre-evaluation filter and the evaluation enforce (defaults; see glns.sandbox)
_CHECK = CheckConfig()

_SIGNATURE = {
    "destroy": "destroy(x, destroy_cnt, problem_data) -> (removed, partial)",
    "repair": "repair(partial, removed, problem_data) -> complete",
}

_FORMAT_RULE = (
    "Answer format: first the idea of your {what} in one sentence inside braces {{like this}}, "
    "then one ```python code block with {functions}. Define helper functions inside the main "
    "function{s}. Do not give any other explanations."
)

_ADVICE = {
    "m1": (
        "m1, logic evolution: invent new algorithmic mechanisms or formulas that replace "
        "components of the current logic (how nodes are scored, selected, ordered or placed). "
        "Change the algorithm itself, not just its numbers."
    ),
    "m2": (
        "m2, parameter calibration: keep the algorithm's structure and recalibrate its "
        "parameters (e.g. the degree of randomisation, greedy thresholds, noise levels, "
        "neighbourhood or candidate-list sizes, weights between criteria) to sharpen its "
        "behaviour."
    ),
}

_ROLE = {
    "destroy": "destroy (removal) operator",
    "repair": "repair (insertion) operator",
}


def _check_problem(problem: str) -> str:
    if not isinstance(problem, str) or problem.lower() not in PROBLEMS:
        raise ValueError(f"problem must be 'tsp', 'cvrp' or 'ovrp', got {problem!r}")
    return problem.lower()


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"operator kind must be 'destroy' or 'repair', got {kind!r}")
    return kind


def _check_member(member: Member, kind: str | None, role: str) -> None:
    """member must be a Member, and of `kind` unless kind is None."""
    if not isinstance(member, Member):
        raise ValueError(f"{role} must be a Member, got {type(member).__name__}")
    if kind is not None and member.kind != kind:
        raise ValueError(f"{role} {member.id!r} is a {member.kind} operator; this prompt needs a "
                         f"{kind} operator")


def task_description(problem: str, limits: CheckConfig | None = None) -> str:
    """The problem and the operator contract (docs/operator-contract.md) for `problem`.

    States the solution format and objective, both operator signatures, the ``problem_data``
    keys exactly as :meth:`glns.problems.Problem.problem_data` builds them, the validity rules,
    the enforced time limits and the modules an operator may use. limits: the filter's
    settings whose per-call limit and time-growth check are quoted (default ``CheckConfig()``
    with the evaluation's default per-call limit).
    """
    variant = problem_class(_check_problem(problem))
    nodes = plural(variant.node_word)
    vrp = variant.has_depot
    data = variant.data_description
    what = f"{variant.node_word} ids" + (" (never the depot)" if vrp else "")
    validity = (
        f"- Every {variant.node_word} appears exactly once in the output: in destroy, in removed or "
        f"partial; in repair, in complete. No duplicates, none missing"
        + (", no depot (0) in a route. Every route's total demand <= capacity. Empty routes "
           "are allowed and dropped." if vrp else ".")
        + (" Every route keeps every time window (service starts by the due time, the route is "
           "back by the depot's due time): check a position before you insert there; removing "
           "customers never needs a check." if variant.timed else "")
    )
    check = limits if limits is not None else _CHECK
    call_s = check.call_timeout if limits is not None else DEFAULT_OP_TIMEOUT
    growth = (f" one call with n = {check.growth_n} must finish within {check.growth_timeout:g} s "
              "or the operator is rejected.") if check.growth_n else ""
    return "\n".join([
        variant.description,
        "",
        "The LNS alternates two operators on the current solution x:",
        f"- {_SIGNATURE['destroy']}: removes destroy_cnt {nodes} from the complete solution x "
        f"(1 <= destroy_cnt <= number of {nodes}); removed is the list of removed {what}, "
        "partial is x without them, in the same format as x.",
        f"- {_SIGNATURE['repair']}: inserts every id of removed into partial and returns a "
        "complete feasible solution in the same format as x.",
        "problem_data is a dict:",
        data,
        "Rules:",
        "- Do not modify the inputs in place (copy x, partial or removed before changing them); "
        "problem_data and its arrays are read-only.",
        validity,
        f"- Each call has an enforced time limit ({call_s:g} s; past it the call "
        f"fails). Keep a call well under 0.1 s for n = 50 and the work at most about O(n^2):"
        + (growth or " it must scale to n = 200."),
        "- Modules available without import: numpy as np, random, math, copy, itertools, heapq, "
        "collections. Import nothing else; no file, network or console I/O.",
    ])


def _code_block(source: str) -> str:
    # a fence longer than any backtick run in the source, so the source cannot close it
    longest = max((len(m) for m in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{source.rstrip()}\n{fence}"


def _operator_text(label: str, member: Member) -> str:
    """A labelled operator: its idea (if any) on one line, then its code in a fenced block."""
    lines = [f"{label}:"]
    if member.idea:
        lines.append(f"Idea: {' '.join(member.idea.split())}")
    lines.append(f"Code (entry function {member.function}):" if member.function else "Code:")
    lines.append(_code_block(member.source))
    return "\n".join(lines)


def _write_rule(kind: str) -> str:
    return (f"Write the function `{kind}`, exactly {_SIGNATURE[kind]}, as specified in the "
            "task description.")


def _format_rule(kind: str) -> str:
    if kind == "joint":
        return _FORMAT_RULE.format(what="pair", functions="both functions, `destroy` first, "
                                   "then `repair`", s="s")
    return _FORMAT_RULE.format(what="operator", functions=f"the complete function `{kind}`", s="")


def _requirements(items: Sequence[str]) -> str:
    return "Requirements:\n" + "\n".join(f"{i}. {text}" for i, text in enumerate(items, 1))


def _assemble(problem: str, kind: str, background: str, context: Sequence[str],
              requirements: Sequence[str], limits: CheckConfig | None = None) -> str:
    parts = [markers.marker_lines(problem, kind), background, task_description(problem, limits),
             *context, _requirements(requirements)]
    return "\n\n".join(parts) + "\n"


def init_prompt(problem: str, kind: str, references: Sequence[Member], *,
        limits: CheckConfig | None = None) -> str:
    """Action ``i1`` (kind "destroy") or ``i2`` (kind "repair"): a new operator of `kind`,
    strictly different from the reference operators (all of that kind), whose ideas and code
    are shown."""
    problem, kind = _check_problem(problem), _check_kind(kind)
    for i, ref in enumerate(references, 1):
        _check_member(ref, kind, f"reference {i}")
    if kind == "destroy":
        background = (
            f"Task: design a new {_ROLE[kind]} for a large neighbourhood search (LNS). Each "
            f"iteration, destroy removes destroy_cnt {plural(problem_class(problem).node_word)} from the current solution "
            "and a repair operator re-inserts them. Which nodes are removed decides what can be "
            "rebuilt: a good destroy operator perturbs the solution so that repair can escape "
            "local optima and lower the total cost.")
    else:
        background = (
            f"Task: design a new {_ROLE[kind]} for a large neighbourhood search (LNS). Each "
            f"iteration, a destroy operator removes some {plural(problem_class(problem).node_word)} from the current "
            "solution, and repair must re-insert all of them, choosing their positions so that "
            "the rebuilt complete solution has a low total cost.")
    if references:
        context = [f"Existing {kind} operators (references):"] + [
            _operator_text(f"Reference {i}", ref) for i, ref in enumerate(references, 1)]
    else:
        context = [f"Existing {kind} operators (references): none yet."]
    return _assemble(problem, kind, background, context, [
        f"The logic must be strictly different from every reference {kind} operator, to add "
        "diversity to the population.",
        _write_rule(kind),
        _format_rule(kind),
    ], limits)


def mutation_prompt(problem: str, parent: Member, action: str, *,
        limits: CheckConfig | None = None) -> str:
    """Action ``m1`` (logic evolution) or ``m2`` (parameter calibration) of one parent operator:
    a refined operator of the parent's kind."""
    problem = _check_problem(problem)
    if action not in MUTATIONS:
        raise ValueError(f"mutation action must be 'm1' or 'm2', got {action!r}")
    _check_member(parent, None, "parent")
    kind = parent.kind
    background = (f"Task: improve an existing {_ROLE[kind]} of a large neighbourhood search "
                  "(LNS), following the strategy given below.")
    return _assemble(problem, kind, background, [
        _operator_text(f"Current {kind} operator", parent),
        f"Strategy: {_ADVICE[action]}",
    ], [
        "Refine the current operator strictly following the strategy.",
        _write_rule(kind),
        _format_rule(kind),
    ], limits)


def homogeneous_crossover_prompt(problem: str, parent1: Member, parent2: Member, *,
        limits: CheckConfig | None = None) -> str:
    """Action ``c1``: a new operator of ``parent2.kind`` with the structural form of parent 2
    (the base), inspired by the ideas of parent 1. Both parents must be of the same kind."""
    problem = _check_problem(problem)
    _check_member(parent2, None, "parent 2")
    kind = parent2.kind
    _check_member(parent1, kind, "parent 1")
    background = (
        f"Task: create a NEW {_ROLE[kind]} for a large neighbourhood search (LNS) by combining "
        "two parents: keep the structural form of Parent 2 (structural base) and bring in the "
        "ideas that make Parent 1 (inspiration) work well. The new operator should outperform "
        "both parents.")
    return _assemble(problem, kind, background, [
        _operator_text(f"Parent 1 (inspiration), a {kind} operator", parent1),
        _operator_text(f"Parent 2 (structural base), a {kind} operator", parent2),
    ], [
        "Find the ideas of Parent 1 that likely give it good performance, and build the new "
        "operator in a form similar to Parent 2 around them.",
        _write_rule(kind),
        _format_rule(kind),
    ], limits)


def joint_crossover_prompt(problem: str, destroy: Member, repair: Member, *,
        limits: CheckConfig | None = None) -> str:
    """Action ``c2``: the high-synergy pair (destroy, repair) evolved as one unit into a NEW
    destroy operator that creates specific structural defects and a NEW repair operator made to
    fix them; both functions in one code block (see :func:`glns.llm.parse_joint_answer`)."""
    problem = _check_problem(problem)
    _check_member(destroy, "destroy", "the destroy parent")
    _check_member(repair, "repair", "the repair parent")
    background = (
        "Task: synergistic joint crossover. The destroy/repair pair below works well together "
        "in a large neighbourhood search (LNS). Evolve it as a UNIFIED ENTITY into a new pair: "
        "a NEW destroy operator that creates specific structural defects in the solution, and "
        "a NEW repair operator tailored to reconstruct exactly those defects efficiently, so "
        "that the two perform better together than their parents.")
    return _assemble(problem, "joint", background, [
        _operator_text("Parent destroy operator", destroy),
        _operator_text("Parent repair operator", repair),
    ], [
        "Design a NEW destroy operator and a NEW repair operator made for each other; each must "
        "still be correct when paired with other operators of the population.",
        "Write BOTH functions, `destroy`, exactly " + _SIGNATURE["destroy"] + ", and `repair`, "
        "exactly " + _SIGNATURE["repair"] + ", as specified in the task description, in ONE "
        "code block.",
        _format_rule("joint"),
    ], limits)


def feedback_prompt(kind: str, error: str, warnings: Sequence[str] = ()) -> str:
    """The follow-up user message after a rejected answer (kind "destroy", "repair" or "joint").

    error: why it was rejected, verbatim (e.g. :attr:`glns.sandbox.Admission.error` or
    "answer has no python code block"); warnings: further remarks worth fixing (a single
    string counts as one warning).
    """
    if kind not in ("destroy", "repair", "joint"):
        raise ValueError(f"kind must be 'destroy', 'repair' or 'joint', got {kind!r}")
    if not isinstance(error, str) or not error.strip():
        raise ValueError(f"error must be a non-empty string, got {error!r}")
    if isinstance(warnings, str):
        warnings = (warnings,)
    what = "pair (both `destroy` and `repair`)" if kind == "joint" else f"`{kind}` operator"
    lines = [f"Your answer was rejected: {error.strip()}"]
    if warnings:
        lines.append("Also fix these warnings:")
        lines.extend(f"- {w.strip()}" for w in warnings)
    lines.append(f"Correct the {what} so that it passes, keeping the signatures and rules of "
                 "the task description.")
    lines.append(_format_rule(kind))
    return "\n".join(lines) + "\n"

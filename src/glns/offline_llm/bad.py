"""The offline LLM's deliberately bad answers: one named case per way generated code fails.

Every case is harmless when run without a sandbox: the memory hog asks for one 2 GiB list
(refused at once under a sandbox memory limit), the slow one sleeps, the forbidden import runs
the shell no-op ``true``, the mutating one only touches its own copies.

:data:`BAD_CASES` maps each name to a :class:`BadCase` saying what should stop it (``expect``):

- ``parse``: the answer parser (no code block);
- ``compile``: compiling the source (syntax error);
- ``signature``: the operator bridge (wrong number of arguments);
- ``timeout``: the per-call time limit (the in-process timer suffices);
- ``kill``: only killing the worker process (code swallows the timer's exception);
- ``exception``: the operator raises on every call;
- ``invalid``: the core's output check (wrong node set, wrong types, capacity);
- ``memory``: the sandbox memory limit;
- ``harmless``: the operator returns valid output; the sandbox may reject it by policy
  (forbidden import) and the core must be unaffected (mutation of its inputs).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from glns.offline_llm.corpus import HEADER, family_of, good_entries

__all__ = ["BadCase", "BAD_CASES", "bad_operator_source", "bad_answer_text"]


@dataclass(frozen=True)
class BadCase:
    name: str
    description: str
    expect: str
    vrp_only: bool = False


BAD_CASES: dict[str, BadCase] = {c.name: c for c in (
    BadCase("no_code_block", "the code is indented text, not a fenced code block", "parse"),
    BadCase("syntax_error", "the code block does not compile (missing colon)", "compile"),
    BadCase("wrong_signature", "destroy takes 2 arguments / repair requires a 4th", "signature"),
    BadCase("infinite_loop", "a convergence loop whose condition never becomes false", "timeout"),
    BadCase("swallowing_loop", "an endless loop inside try/bare except that swallows every "
            "exception, the time limit's included", "kill"),
    BadCase("raises", "reads a misspelled key / index past the end: raises on every call",
            "exception"),
    BadCase("duplicate_nodes", "the output holds one node twice", "invalid"),
    BadCase("drops_nodes", "the output misses one node", "invalid"),
    BadCase("wrong_types", "destroy returns a dict, repair forgets to return (None)", "invalid"),
    BadCase("invalid_solution", "TSP: 1-based ids / the start city repeated to close the tour; "
            "VRP: routes written with the depot", "invalid"),
    BadCase("ignores_capacity", "VRP: puts all customers into one route, which is invalid "
            "when their total demand exceeds the capacity", "invalid", vrp_only=True),
    BadCase("memory_hog", "allocates a 2 GiB list on every call, then answers validly", "memory"),
    BadCase("mutates_problem_data", "unlocks and zeroes the distance matrix, changes capacity "
            "and clears its input, then answers validly from copies", "harmless"),
    BadCase("very_slow", "sleeps 20 s on every call, then answers validly", "timeout"),
    BadCase("forbidden_import", "imports os and subprocess and runs os.system('true'), then "
            "answers validly", "harmless"),
)}

# Valid bodies the misbehaving operators end with (random removal / trivial insertion).
_VALID = {
    ("tsp", "destroy"): """\
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    gone = set(removed)
    return removed, [c for c in tour if c not in gone]
""",
    ("vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    return removed, [[c for c in r if c not in gone] for r in routes]
""",
    ("tsp", "repair"): """\
    return list(partial) + list(removed)
""",
    ("vrp", "repair"): """\
    return [list(r) for r in partial] + [[c] for c in removed]
""",
}

_SIGNATURE = {"destroy": "destroy(x, destroy_cnt, problem_data)",
              "repair": "repair(partial, removed, problem_data)"}

# Per case: body lines put before the valid body ({valid} marks where it goes), or a whole
# body for (family, kind) when the case needs one.
_PREFIX = {
    "infinite_loop": """\
    gap = 0.0
    while gap >= 0.0:  # "iterate until no improvement": gap is never negative
        gap = abs(random.random() - 0.5)
{valid}""",
    "swallowing_loop": """\
    attempts = 0
    while True:
        try:
            attempts += 1
            while attempts > 0:  # "retry until a good candidate is found"
                attempts = attempts + 1 - 1
        except:
            continue
{valid}""",
    "memory_hog": """\
    n = len(problem_data["distance_matrix"])
    table = [0.0] * (2 ** 28)  # "precomputed" scores: a 2 GiB list
    table[n] = 1.0
{valid}""",
    "very_slow": """\
    import time
    time.sleep(20)  # "wait for the cache to warm up"
{valid}""",
    "forbidden_import": """\
    import os
    import subprocess
    os.system("true")
    _ = subprocess.__name__, os.environ.get("HOME")
{valid}""",
}

_WHOLE = {
    ("raises", "tsp", "destroy"): """\
    tour = list(x)
    start = random.randrange(len(tour))
    removed = [tour[start + i] for i in range(destroy_cnt + len(tour))]  # runs past the end
    gone = set(removed)
    return removed, [c for c in tour if c not in gone]
""",
    ("raises", "tsp", "repair"): """\
    d = problem_data["dist_matrix"]  # misspelled key: KeyError
    tour = list(partial)
    for c in removed:
        tour.insert(int(np.argmin(d[c])), c)
    return tour
""",
    ("raises", "vrp", "destroy"): """\
    q = problem_data["demand"]  # misspelled key: KeyError
    routes = [list(r) for r in x]
    removed = sorted((c for r in routes for c in r), key=lambda c: -q[c])[:destroy_cnt]
    gone = set(removed)
    return removed, [[c for c in r if c not in gone] for r in routes]
""",
    ("raises", "vrp", "repair"): """\
    q = problem_data["demands"]
    cap = problem_data["capacity"]
    routes = [list(r) for r in partial]
    for c in removed:
        loads = [sum(q[v] for v in r) for r in routes]
        best = min(range(len(routes) + 1), key=lambda i: loads[i])  # IndexError at the end
        routes[best].append(c) if best < len(routes) and loads[best] + q[c] <= cap else routes.append([c])
    return routes
""",
    ("duplicate_nodes", "tsp", "destroy"): """\
    tour = list(x)
    k = max(1, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    removed.append(tour[0])  # tour[0] twice, or both removed and kept
    gone = set(removed[:-1])
    return removed, [c for c in tour if c not in gone]
""",
    ("duplicate_nodes", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(1, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    removed.append(customers[0])  # customers[0] twice, or both removed and kept
    gone = set(removed[:-1])
    return removed, [[c for c in r if c not in gone] for r in routes]
""",
    ("duplicate_nodes", "tsp", "repair"): """\
    tour = list(partial) + list(removed)
    tour.append(tour[0])
    return tour
""",
    ("duplicate_nodes", "vrp", "repair"): """\
    routes = [list(r) for r in partial] + [[c] for c in removed]
    first = next(c for r in routes for c in r)
    routes.append([first])
    return routes
""",
    ("drops_nodes", "tsp", "destroy"): """\
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    gone = set(removed)
    partial = [c for c in tour if c not in gone]
    if partial:
        partial.pop()  # lost: neither removed nor kept
    else:
        removed.pop()
    return removed, partial
""",
    ("drops_nodes", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    partial = [[c for c in r if c not in gone] for r in routes]
    partial = [r for r in partial if r]
    if partial:
        partial[-1].pop()  # lost: neither removed nor kept
    else:
        removed.pop()
    return removed, partial
""",
    ("drops_nodes", "tsp", "repair"): """\
    tour = list(partial) + list(removed)
    tour.pop()  # the last city is lost
    return tour
""",
    ("drops_nodes", "vrp", "repair"): """\
    routes = [list(r) for r in partial if r] + [[c] for c in removed]
    routes.pop()  # the last route is lost
    return routes
""",
    ("wrong_types", "tsp", "destroy"): """\
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    gone = set(removed)
    return {"removed": removed, "partial": [c for c in tour if c not in gone]}
""",
    ("wrong_types", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    return {"removed": removed, "partial": [[c for c in r if c not in gone] for r in routes]}
""",
    ("wrong_types", "tsp", "repair"): """\
    tour = list(partial)
    for c in removed:
        tour.append(c)
""",
    ("wrong_types", "vrp", "repair"): """\
    routes = [list(r) for r in partial]
    for c in removed:
        routes.append([c])
""",
    ("invalid_solution", "tsp", "destroy"): """\
    tour = list(x)
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    gone = set(removed)
    return removed, [c + 1 for c in tour if c not in gone]  # "1-based city ids"
""",
    ("invalid_solution", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    return removed, [[0] + [c for c in r if c not in gone] + [0] for r in routes]  # with depot
""",
    ("invalid_solution", "tsp", "repair"): """\
    tour = list(partial) + list(removed)
    return tour + tour[:1]  # "close the tour" by repeating the start city
""",
    ("invalid_solution", "vrp", "repair"): """\
    routes = [list(r) for r in partial] + [[c] for c in removed]
    return [[0] + r + [0] for r in routes if r]  # routes written with the depot
""",
    ("ignores_capacity", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    return removed, [[c for c in customers if c not in gone]]  # one route for all kept
""",
    ("ignores_capacity", "vrp", "repair"): """\
    return [[c for r in partial for c in r] + list(removed)]  # one route for everybody
""",
    ("mutates_problem_data", "tsp", "destroy"): """\
    tour = list(x)
    x.clear()  # the caller's list
    d = problem_data["distance_matrix"]
    try:
        d.flags.writeable = True
        d[:] = 0.0
    except ValueError:
        pass
    problem_data["distance_matrix"] = None
    k = max(0, min(int(destroy_cnt), len(tour)))
    removed = random.sample(tour, k)
    gone = set(removed)
    return removed, [c for c in tour if c not in gone]
""",
    ("mutates_problem_data", "vrp", "destroy"): """\
    routes = [list(r) for r in x]
    x.clear()  # the caller's list
    d = problem_data["distance_matrix"]
    try:
        d.flags.writeable = True
        d[:] = 0.0
    except ValueError:
        pass
    problem_data["capacity"] = 10 ** 9
    customers = [c for r in routes for c in r]
    k = max(0, min(int(destroy_cnt), len(customers)))
    removed = random.sample(customers, k)
    gone = set(removed)
    return removed, [[c for c in r if c not in gone] for r in routes]
""",
    ("mutates_problem_data", "tsp", "repair"): """\
    tour = list(partial) + list(removed)
    removed.clear()  # the caller's list
    d = problem_data["distance_matrix"]
    try:
        d.flags.writeable = True
        d *= 0.0
    except ValueError:
        pass
    problem_data.clear()
    return tour
""",
    ("mutates_problem_data", "vrp", "repair"): """\
    routes = [list(r) for r in partial] + [[c] for c in removed]
    removed.clear()  # the caller's list
    q = problem_data["demands"]
    try:
        q.flags.writeable = True
        q[:] = 0
    except ValueError:
        pass
    problem_data["capacity"] = 10 ** 9
    return routes
""",
}

_WRONG_SIGNATURE = {"destroy": "destroy(x, destroy_cnt)", "repair": "repair(partial, removed, problem_data, rng)"}


def bad_operator_source(case: str, family: str, kind: str, name: str | None = None) -> str:
    """Source of the misbehaving operator of `case` ('tsp'/'vrp' family, kind).

    name: the function name (default the kind). Not defined for parse/compile cases nor
    for VRP-only cases in the TSP family (ValueError).
    """
    if case not in BAD_CASES:
        raise ValueError(f"unknown bad case {case!r}; known: {', '.join(BAD_CASES)}")
    if BAD_CASES[case].vrp_only and family != "vrp":
        raise ValueError(f"bad case {case!r} needs a CVRP or OVRP prompt")
    if case in ("no_code_block", "syntax_error"):
        raise ValueError(f"bad case {case!r} is a whole answer, not an operator")
    valid = _VALID[(family, kind)]
    signature = (_WRONG_SIGNATURE if case == "wrong_signature" else _SIGNATURE)[kind]
    signature = signature.replace(kind, name or kind, 1)
    if case == "wrong_signature":
        body = valid
    elif case in _PREFIX:
        body = _PREFIX[case].format(valid=valid)
    else:
        body = _WHOLE[(case, family, kind)]
    return f"{HEADER}\n\ndef {signature}:\n{body}"


def bad_answer_text(case: str, problem: str, kind: str, rng: random.Random) -> str:
    """A full answer text (idea + block) for `case`; kind 'destroy', 'repair' or 'joint'.

    For 'joint', one half (chosen by rng) misbehaves and the other is a good corpus operator.
    """
    # (VRPTW answers misbehave the way VRP ones do: the VRP templates, whose windows they break)
    family = {"vrptw": "vrp"}.get(family_of(problem), family_of(problem))
    idea = "{A new operator that %s.}" % ("removes well-chosen elements" if kind == "destroy"
                                           else "reinserts the removed elements cheaply"
                                           if kind == "repair" else "works as a coupled pair")
    one = "repair" if kind == "repair" else "destroy"   # a joint answer's whole-answer cases: destroy
    if case == "no_code_block":
        indented = "\n".join("    " + line for line in
                             [f"def {_SIGNATURE[one]}:"] + _VALID[(family, one)].splitlines())
        return (f"{idea}\n\nThe implementation keeps the structure of the reference and changes "
                f"the selection rule:\n\n{indented}\n")
    if case == "syntax_error":
        code = f"{HEADER}\n\ndef {_SIGNATURE[one]}\n" + _VALID[(family, one)]
        return f"{idea}\n\n```python\n{code}```\n"
    if kind != "joint":
        return f"{idea}\n\n```python\n{bad_operator_source(case, family, kind)}```\n"
    bad_kind = rng.choice(("destroy", "repair"))
    good_kind = "repair" if bad_kind == "destroy" else "destroy"
    good = rng.choice(good_entries(problem, good_kind))
    functions = {bad_kind: bad_operator_source(case, family, bad_kind)[len(HEADER):].strip(),
                 good_kind: good.function_source(good_kind).strip()}
    code = f"{HEADER}\n\n{functions['destroy']}\n\n\n{functions['repair']}\n"
    return f"{idea}\n\n```python\n{code}```\n"

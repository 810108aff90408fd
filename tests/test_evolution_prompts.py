"""Prompt assembly of the G-LNS actions: every prompt carries its required parts, arguments are
validated, and an answer to each prompt (from the offline LLM) parses into an operator."""

from __future__ import annotations

import inspect
import re

import pytest

from glns import operators
from glns.evolution import prompts
from glns.evolution.population import Member
from glns.evolution.prompts import (
    SYSTEM_PROMPT, feedback_prompt, homogeneous_crossover_prompt, init_prompt,
    joint_crossover_prompt, mutation_prompt, task_description,
)
from glns.llm import markers, parse_answer, parse_joint_answer
from glns.offline_llm import OfflineLLM, parse_model
from glns.operators.seeds import tsp as tsp_seeds, vrp as vrp_seeds
from glns.sandbox.admission import CheckConfig
from glns.sandbox.evaluation import DEFAULT_OP_TIMEOUT
from conftest import make_problem

PROBLEMS = ("tsp", "cvrp", "ovrp")
SIGNATURE = {"destroy": "destroy(x, destroy_cnt, problem_data) -> (removed, partial)",
             "repair": "repair(partial, removed, problem_data) -> complete"}
FORMAT_WORDS = ("one sentence inside braces", "```python code block",
                "Define helper functions inside the main function", "Do not give any other explanations")


def seed_member(id: str, problem: str, name: str, action: str = "seed") -> Member:
    """A member made from a seed operator: the readable source the controller shows the LLM."""
    module = tsp_seeds if problem == "tsp" else vrp_seeds
    func = getattr(module, name)
    kind = "repair" if "insertion" in name else "destroy"
    return Member(id=id, kind=kind, source=inspect.getsource(module), function=name,
                  idea=inspect.getdoc(func).splitlines()[0], action=action)


def marked(id: str, kind: str, idea: str | None = None) -> Member:
    """A member whose idea and code carry unique tokens, to find them in a prompt."""
    func = "destroy_" + id if kind == "destroy" else "repair_" + id
    args = "x, destroy_cnt, problem_data" if kind == "destroy" else "partial, removed, problem_data"
    source = f"def {func}({args}):\n    token = 'CODE-{id}'\n    return None\n"
    return Member(id=id, kind=kind, source=source, function=func,
                  idea=idea if idea is not None else f"Idea token IDEA-{id}.", action="i1")


def all_prompts(problem: str) -> dict[str, tuple[str, str]]:
    """action -> (prompt, kind asked for) for every action on problem."""
    d1, d2, r1, r2 = marked("d1", "destroy"), marked("d2", "destroy"), marked("r1", "repair"), marked("r2", "repair")
    return {
        "i1": (init_prompt(problem, "destroy", [d1, d2]), "destroy"),
        "i2": (init_prompt(problem, "repair", [r1]), "repair"),
        "m1": (mutation_prompt(problem, d1, "m1"), "destroy"),
        "m2": (mutation_prompt(problem, r1, "m2"), "repair"),
        "c1": (homogeneous_crossover_prompt(problem, r1, r2), "repair"),
        "c1d": (homogeneous_crossover_prompt(problem, d2, d1), "destroy"),
        "c2": (joint_crossover_prompt(problem, d1, r2), "joint"),
    }


def block(member: Member) -> str:
    return f"```python\n{member.source.rstrip()}\n```"


# ------------------------------------------------------------------------ required parts
@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_prompt_has_markers_task_function_and_format(problem):
    desc = task_description(problem)
    for action, (text, kind) in all_prompts(problem).items():
        assert markers.detect(text) == (problem, kind), action
        assert text.startswith(markers.marker_lines(problem, kind) + "\n"), action
        assert text.count(desc) == 1, action
        names = ("destroy", "repair") if kind == "joint" else (kind,)
        for name in names:
            assert f"Write the function `{name}`" in text or f"`{name}`, exactly" in text, action
            assert f"exactly {SIGNATURE[name]}" in text, action
        for words in FORMAT_WORDS:
            assert words in text, (action, words)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_prompts_repeat_no_paragraph(problem):
    for action, (text, _) in all_prompts(problem).items():
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        assert len(paragraphs) == len(set(paragraphs)), action
        lines = [ln for ln in text.splitlines() if len(ln) > 40]
        assert len(lines) == len(set(lines)), action


@pytest.mark.parametrize("problem", PROBLEMS)
def test_task_description_states_the_contract(problem):
    desc = task_description(problem)
    for words in (SIGNATURE["destroy"], SIGNATURE["repair"], "read-only", "Do not modify the inputs",
                  "exactly once", "numpy as np, random, math, copy, itertools, heapq, collections",
                  "Import nothing else", "no file, network or console I/O",
                  f"time limit ({DEFAULT_OP_TIMEOUT:g} s", "O(n^2)"):
        assert words in desc, words
    check = CheckConfig()
    assert f"n = {check.growth_n} must finish within {check.growth_timeout:g} s" in desc
    # the keys listed are exactly those of the problem_data operators receive
    listed = set(re.findall(r'^- "(\w+)":', desc, re.MULTILINE))
    assert listed == set(make_problem(problem, 5, 1, 30).problem_data())


def test_task_description_per_problem():
    tsp, cvrp, ovrp = (task_description(p) for p in PROBLEMS)
    assert "no depot" in tsp and "0..n-1" in tsp and "closing edge" in tsp
    assert "capacity" not in tsp and "demands" not in tsp and "route" not in tsp
    for vrp in (cvrp, ovrp):
        assert "Node 0 is the depot" in vrp and "1..n" in vrp and "the depot is not written" in vrp
        assert "must not exceed the capacity" in vrp and "Empty routes are allowed and dropped" in vrp
        assert "demands[0] = 0" in vrp and '"capacity": int' in vrp and '"depot_idx": 0' in vrp
    assert "returns to the depot" in cvrp and '"open_routes": False' in cvrp and "open" not in cvrp.replace("open_routes", "")
    assert "Routes are open" in ovrp and "NO return to the depot" in ovrp and '"open_routes": True' in ovrp
    assert "last customer -> depot edge is not counted" in ovrp
    assert task_description("CVRP") == cvrp


def test_system_prompt_asks_for_the_format():
    assert "braces" in SYSTEM_PROMPT and "python code block" in SYSTEM_PROMPT
    assert "large neighbourhood search" in SYSTEM_PROMPT


@pytest.mark.parametrize("problem", PROBLEMS)
def test_init_prompt_shows_references_and_asks_for_difference(problem):
    refs = [seed_member("d0", problem, "random_removal"), seed_member("d1", problem, "worst_removal")]
    text = init_prompt(problem, "destroy", refs)
    for i, ref in enumerate(refs, 1):
        assert f"Reference {i}:\nIdea: {ref.idea}\nCode (entry function {ref.function}):\n{block(ref)}" in text
    assert "strictly different from every reference destroy operator" in text
    repair = init_prompt(problem, "repair", [seed_member("r0", problem, "greedy_insertion")])
    assert "design a new repair (insertion) operator" in repair and "re-insert all of them" in repair
    assert "design a new destroy (removal) operator" in text
    empty = init_prompt(problem, "repair", [])
    assert "references): none yet." in empty and "```python\n" not in empty.split("Requirements:")[0]


def test_idea_and_code_are_apart_and_none_idea_is_omitted():
    m = marked("d7", "destroy", idea="Pick a {random} arc and remove its neighbours.")
    text = mutation_prompt("tsp", m, "m1")
    idea_line = "Idea: Pick a {random} arc and remove its neighbours."
    assert idea_line in text and text.index(idea_line) < text.index(block(m))
    assert idea_line not in block(m)
    bare = Member(id="d8", kind="destroy", source=m.source, function=m.function, idea=None, action="i1")
    text = mutation_prompt("tsp", bare, "m1")
    assert "Current destroy operator:\nCode (entry function destroy_d7):\n" + block(m) in text
    assert "Idea:" not in text


def test_code_with_backticks_gets_a_longer_fence():
    src = "def destroy(x, destroy_cnt, problem_data):\n    s = '```'\n    return [], x\n"
    m = Member(id="d1", kind="destroy", source=src, function="destroy", idea="x", action="i1")
    text = mutation_prompt("tsp", m, "m2")
    assert "````python\n" + src.rstrip() + "\n````" in text


@pytest.mark.parametrize("problem", PROBLEMS)
def test_mutation_advice_differs(problem):
    parent = seed_member("d1", problem, "worst_removal")
    m1, m2 = mutation_prompt(problem, parent, "m1"), mutation_prompt(problem, parent, "m2")
    assert m1 != m2
    assert "logic evolution" in m1 and "new algorithmic mechanisms or formulas" in m1
    assert "parameter calibration" not in m1
    assert "parameter calibration" in m2 and "degree of randomisation" in m2 and "greedy thresholds" in m2
    assert "logic evolution" not in m2
    for text in (m1, m2):
        assert block(parent) in text and parent.idea in text
        assert "strictly following the strategy" in text
    repair = mutation_prompt(problem, seed_member("r1", problem, "greedy_insertion"), "m1")
    assert markers.detect(repair) == (problem, "repair") and "Write the function `repair`" in repair


@pytest.mark.parametrize("problem", PROBLEMS)
def test_homogeneous_crossover_names_parent_roles(problem):
    p1, p2 = marked("d1", "destroy"), marked("d2", "destroy")
    text = homogeneous_crossover_prompt(problem, p1, p2)
    head1 = text.index("Parent 1 (inspiration), a destroy operator:")
    head2 = text.index("Parent 2 (structural base), a destroy operator:")
    assert head1 < text.index("IDEA-d1") < text.index(block(p1)) < head2
    assert head2 < text.index("IDEA-d2") < text.index(block(p2)) < text.index("Requirements:")
    assert "form similar to Parent 2" in text and "ideas of Parent 1" in text
    assert "outperform both parents" in text
    # the child has parent 2's kind
    r = homogeneous_crossover_prompt(problem, marked("r1", "repair"), marked("r2", "repair"))
    assert markers.detect(r) == (problem, "repair")


@pytest.mark.parametrize("problem", PROBLEMS)
def test_joint_crossover_asks_for_both(problem):
    d, r = marked("d1", "destroy"), marked("r1", "repair")
    text = joint_crossover_prompt(problem, d, r)
    assert markers.detect(text) == (problem, "joint")
    assert text.index("Parent destroy operator:") < text.index(block(d)) \
        < text.index("Parent repair operator:") < text.index(block(r))
    assert "IDEA-d1" in text and "IDEA-r1" in text
    for words in ("UNIFIED ENTITY", "NEW destroy operator", "NEW repair operator", "structural defects",
                  "BOTH functions", "ONE code block", "`destroy` first, then `repair`",
                  "inside the main functions"):
        assert words in text, words


def test_feedback_prompt():
    err = "destroy on CVRP n=10 (instance 2): customer 3 appears twice in the output"
    text = feedback_prompt("destroy", err, ["removed 2 customers but destroy_cnt was 3"])
    assert text.startswith(f"Your answer was rejected: {err}\n")
    assert "- removed 2 customers but destroy_cnt was 3" in text
    assert "`destroy` operator" in text and "the complete function `destroy`" in text
    for words in FORMAT_WORDS:
        assert words in text
    assert "warning" not in feedback_prompt("repair", "answer has no python code block")
    assert "- one warning" in feedback_prompt("repair", "boom", "one warning")
    joint = feedback_prompt("joint", "answer has no python code block")
    assert "both `destroy` and `repair`" in joint and "both functions" in joint
    assert "Problem:" not in joint  # a follow-up: the markers are in the first message


# --------------------------------------------------------------------------- bad arguments
def test_bad_arguments_raise():
    d, r = marked("d1", "destroy"), marked("r1", "repair")
    cases = [
        (lambda: task_description("vrp"), "problem must be"),
        (lambda: task_description(None), "problem must be"),
        (lambda: init_prompt("tsp", "remove", [d]), "operator kind must be"),
        (lambda: init_prompt("tsp", "destroy", [d, r]), "reference 2 'r1' is a repair operator"),
        (lambda: init_prompt("tsp", "destroy", ["def destroy(): pass"]), "reference 1 must be a Member"),
        (lambda: init_prompt("knapsack", "destroy", [d]), "problem must be"),
        (lambda: mutation_prompt("tsp", d, "m3"), "mutation action must be 'm1' or 'm2'"),
        (lambda: mutation_prompt("tsp", "code", "m1"), "parent must be a Member"),
        (lambda: homogeneous_crossover_prompt("cvrp", d, r), "parent 1 'd1' is a destroy operator"),
        (lambda: joint_crossover_prompt("ovrp", r, d), "the destroy parent 'r1' is a repair operator"),
        (lambda: joint_crossover_prompt("ovrp", d, d), "the repair parent 'd1' is a destroy operator"),
        (lambda: feedback_prompt("both", "x"), "kind must be"),
        (lambda: feedback_prompt("destroy", "  "), "error must be a non-empty string"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)):
            call()


# ------------------------------------------------------------------- round trip via the offline LLM
@pytest.mark.parametrize("problem", PROBLEMS)
def test_offline_answers_parse_into_operators(problem):
    llm, good = OfflineLLM(), parse_model("offline:good")
    for seed in (1, 2):
        for action, (text, kind) in all_prompts(problem).items():
            messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
            answer = llm.answer(messages, good, request_seed=seed)
            assert (answer.problem, answer.kind) == (problem, kind), action
            if kind == "joint":
                parsed = parse_joint_answer(answer.text)
                d = operators.from_source(parsed.destroy, "destroy", function=parsed.destroy_name)
                r = operators.from_source(parsed.repair, "repair", function=parsed.repair_name)
                assert (d.kind, r.kind) == ("destroy", "repair")
            else:
                parsed = parse_answer(answer.text)
                op = operators.from_source(parsed.code, kind)
                assert op.kind == kind and op.func is not None
            assert parsed.idea, action


def test_feedback_conversation_keeps_what_was_asked():
    """After a rejection the whole conversation still asks for the same problem and kind."""
    prompt = joint_crossover_prompt("ovrp", marked("d1", "destroy"), marked("r1", "repair"))
    messages = [{"role": "user", "content": prompt},
                {"role": "assistant", "content": "{An idea.} but no code"},
                {"role": "user", "content": feedback_prompt("joint", "answer has no python code block")}]
    answer = OfflineLLM().answer(messages, parse_model("offline:good"), request_seed=3)
    assert (answer.problem, answer.kind) == ("ovrp", "joint")
    parse_joint_answer(answer.text)


def test_public_api():
    assert set(prompts.__all__) == {"SYSTEM_PROMPT", "task_description", "init_prompt", "mutation_prompt",
                                    "homogeneous_crossover_prompt", "joint_crossover_prompt", "feedback_prompt"}


def test_prompts_quote_the_limits_the_run_enforces():
    from glns.evolution.seeds import seed_members
    from glns.sandbox import CheckConfig

    d, r = seed_members("cvrp")
    limits = CheckConfig(call_timeout=0.25, growth_n=400, growth_timeout=5.0)
    for text in (prompts.init_prompt("cvrp", "destroy", d, limits=limits),
                 prompts.mutation_prompt("cvrp", r[0], "m2", limits=limits),
                 prompts.homogeneous_crossover_prompt("cvrp", d[0], d[1], limits=limits),
                 prompts.joint_crossover_prompt("cvrp", d[0], r[0], limits=limits)):
        assert "time limit (0.25 s;" in text and "n = 400 must finish within 5 s" in text
    no_growth = prompts.task_description("tsp", CheckConfig(growth_n=None))
    assert "must finish within" not in no_growth and "scale to n = 200" in no_growth

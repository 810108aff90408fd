"""code_fingerprint: renamed, re-commented and re-formatted copies of an operator match; any
change of behaviour (constant, operator, called function, argument order) does not."""

from __future__ import annotations

import ast
import random

import pytest

from glns.evolution.fingerprint import code_fingerprint, normalised_source
from glns.evolution.generate import source_key
from glns.evolution.seeds import SEED_NAMES, seed_source
from glns.llm import parse_answer
from glns.offline_llm.bad import bad_answer_text
from glns.offline_llm.corpus import GOOD

CORPUS = [e for entries in GOOD.values() for e in entries]
SEEDS = sorted({seed_source(p, name) for p in ("tsp", "cvrp") for names in SEED_NAMES.values()
                for name in names})


class _RenameEverything(ast.NodeTransformer):
    """Gives every name the code binds a new one (one mapping for the whole module, blind to
    scopes, which is still a faithful renaming when all bound names are renamed) and a new
    docstring to every function."""

    def __init__(self, bound: set[str]) -> None:
        self.new = {name: f"renamed{i}_{name[::-1]}" for i, name in enumerate(sorted(bound))}

    def _rename(self, node: ast.AST, attr: str) -> ast.AST:
        name = getattr(node, attr)
        if name is not None:
            setattr(node, attr, self.new.get(name, name))
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self._rename(node, "id")

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return self._rename(node, "arg")

    def visit_alias(self, node: ast.alias) -> ast.AST:
        return self._rename(node, "asname")

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        return self._rename(node, "name")

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        return self._rename(node, "name")

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.AST:
        return self._rename(node, "name")

    def visit_MatchMapping(self, node: ast.MatchMapping) -> ast.AST:
        return self._rename(node, "rest")

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._rename(node, "name")

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self.new.get(n, n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body[0] = ast.Expr(ast.Constant("Another description of what this does."))
        return self._rename(node, "name")


def _bound_names(tree: ast.AST) -> set[str]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs,
                               ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.alias) and node.asname:
            out.add(node.asname)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    # names bound in a class body are attributes (self.step): a renaming keeps them
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt]
            out -= {getattr(t, "id", getattr(t, "name", None)) for t in targets}
    return out


def renamed_copy(source: str) -> str:
    """Every bound name renamed, other docstrings, other layout, comments and blank lines."""
    tree = ast.parse(source)
    text = ast.unparse(_RenameEverything(_bound_names(tree)).visit(tree))
    lines = []
    for i, line in enumerate(text.splitlines()):
        lines += ["", f"# note {i}: nothing to see"] if i % 3 == 0 else []
        lines.append(line + "   ")
    return "\n".join(lines) + "\n\n\n"


# -- the same operator ---------------------------------------------------------------------

ORIGINAL = '''
import numpy as np


def destroy(x, destroy_cnt, problem_data):
    """Remove the nodes farthest from a random centre."""
    d = np.asarray(problem_data["distance_matrix"])
    centre = x[0]  # a fixed centre
    order = np.argsort(-d[centre, x])
    k = min(destroy_cnt, len(x))
    removed = [x[i] for i in order[:k]]
    return removed, [c for c in x if c not in removed]
'''

RENAMED = '''
import numpy as xp
def remove_far(solution, count, data):
    # no docstring, other names, other layout
    dist = xp.asarray(data["distance_matrix"])

    mid = solution[0]
    idx = xp.argsort(-dist[mid, solution])
    n = min(count,
            len(solution))
    out = [solution[j] for j in idx[:n]]   # the far ones
    return (out, [node for node in solution if node not in out])
'''


def test_renamed_and_reformatted_copy_has_the_same_fingerprint():
    assert code_fingerprint(ORIGINAL) == code_fingerprint(RENAMED)
    assert normalised_source(ORIGINAL) == normalised_source(RENAMED)
    assert code_fingerprint(ORIGINAL) != source_key(ORIGINAL)  # not the text hash
    fp = code_fingerprint(ORIGINAL)
    assert len(fp) == 16 and int(fp, 16) >= 0


@pytest.mark.parametrize("old,new", [
    ("k = min(destroy_cnt, len(x))", "k = min(destroy_cnt + 1, len(x))"),   # constant added
    ("order[:k]", "order[:k - 1]"),
    ("np.argsort(-d[centre, x])", "np.argsort(d[centre, x])"),             # unary operator
    ("centre = x[0]", "centre = x[-1]"),
    ("np.argsort", "np.argpartition"),                                     # attribute
    ("min(destroy_cnt, len(x))", "min(len(x), destroy_cnt)"),              # argument order
    ("min(destroy_cnt, len(x))", "max(destroy_cnt, len(x))"),              # builtin
    ("not in removed]", "in removed]"),
    ("import numpy as np", "import numpy.ma as np"),                        # imported module
])
def test_a_change_of_behaviour_changes_the_fingerprint(old, new):
    assert old in ORIGINAL
    assert code_fingerprint(ORIGINAL) != code_fingerprint(ORIGINAL.replace(old, new))


@pytest.mark.parametrize("a,b", [
    ("def f(x):\n    return x * 0.3\n", "def f(x):\n    return x * 0.5\n"),
    ("def f(a, b):\n    return a < b\n", "def f(a, b):\n    return a <= b\n"),
    ("import numpy as np\ndef f(v):\n    return np.argmax(v)\n",
     "import numpy as np\ndef f(v):\n    return np.argmin(v)\n"),
    ("def f(dx, dy):\n    return g(dx, dy)\n", "def f(dx, dy):\n    return g(dy, dx)\n"),
    ("def f(x):\n    return len(x)\n", "def f(x):\n    return sum(x)\n"),
    ("from math import sqrt\ndef f(x):\n    return sqrt(x)\n",
     "from math import floor\ndef f(x):\n    return floor(x)\n"),
    ("import numpy as np\ndef f(x):\n    return np.sum(x)\n",
     "import torch as np\ndef f(x):\n    return np.sum(x)\n"),
    ("def f(x):\n    return sorted(x, key=abs)\n", "def f(x):\n    return sorted(x, cmp=abs)\n"),
    ("def f(x):\n    return x.append(1)\n", "def f(x):\n    return x.extend(1)\n"),
])
def test_small_differences_are_seen(a, b):
    assert code_fingerprint(a) != code_fingerprint(b)


@pytest.mark.parametrize("a,b", [
    ("def f(x):\n    len = 3\n    return len + x\n", "def g(y):\n    n = 3\n    return n + y\n"),
    ("import numpy as np\nr = np.zeros(3)\n", "import numpy as numeric\nout = numeric.zeros(3)\n"),
    # one name in two scopes, or two names: the same variables
    ("def f(a):\n    return [i for i in a], [i for i in a]\n",
     "def f(a):\n    return [i for i in a], [j for j in a]\n"),
    ("def f(a):\n    g = lambda c: c + 1\n    return [g(c) for c in a]\n",
     "def f(a):\n    g = lambda t: t + 1\n    return [g(c) for c in a]\n"),
    ('def f(x):\n    """Doc."""\n    "a bare string"\n    return x\n', "def f(x):\n    return x\n"),
])
def test_equivalent_names_and_strings_match(a, b):
    assert code_fingerprint(a) == code_fingerprint(b)


def test_builtins_modules_and_attributes_stay_in_the_normalised_code():
    text = normalised_source("import math\nimport numpy as np\nfrom random import shuffle\n"
                             "def f(route, k):\n    shuffle(route)\n"
                             "    return np.argsort(route)[:len(route) - k], math.pi\n")
    for kept in ("import math", "import numpy as _v0", "from random import shuffle",
                 "shuffle(_v2)", "_v0.argsort(_v2)", "len(_v2)", "math.pi", "def _v1(_v2, _v3)"):
        assert kept in text, (kept, text)
    for gone in ("route", " k", "np."):
        assert gone not in text


EVERY_BINDING = '''
import numpy as np
from math import hypot as distance
import os.path

TOTAL = 0


class Counter:
    step = 1

    def bump(self, by=TOTAL):
        return self.step + by


def operator(route, count, data, *extra, scale=0.5, **options):
    global TOTAL
    TOTAL += 1
    best = None

    def inner():
        nonlocal best
        best = [w for w in route if (last := w) > count]
        return last

    try:
        inner()
    except (KeyError, ValueError) as problem:
        print(problem)
    match data:
        case {"distance_matrix": matrix, **others}:
            pass
        case [first, *rest] as whole:
            pass
        case _:
            pass
    with open(os.path.join("a", "b")) as handle:
        del handle
    for i, (a, b) in enumerate(zip(route, route[1:])):
        best = distance(a, b) * scale + i
    key = lambda c, k=count: (np.abs(c - k), c)
    return sorted(route, key=key), Counter().bump(), best, extra, options
'''


def test_every_kind_of_binding_is_renamed_consistently():
    copy = renamed_copy(EVERY_BINDING)
    assert "renamed" in copy and "# note" in copy
    assert code_fingerprint(copy) == code_fingerprint(EVERY_BINDING)
    text = normalised_source(EVERY_BINDING)
    compile(text, "<normalised>", "exec")
    names = {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}
    assert names & _bound_names(ast.parse(EVERY_BINDING)) == set()
    for kept in ("import os.path", "from math import hypot as", "os.path.join", ".step + ",
                 ".bump()", "step = 1", "def bump(", "key=", "enumerate(", "print(", "KeyError"):
        assert kept in text, kept


def test_code_that_does_not_parse_gets_the_text_hash():
    text = bad_answer_text("syntax_error", "cvrp", "destroy", random.Random(0))
    broken = parse_answer(text).code
    with pytest.raises(SyntaxError):
        ast.parse(broken)
    assert code_fingerprint(broken) == source_key(broken)
    assert code_fingerprint(broken + "\n\n   \n") == code_fingerprint(broken)
    for text in ("def (:", "x = '\0'", "(" * 10_000, "if x:\n  \tdef", "f(**)"):
        assert code_fingerprint(text) == source_key(text)
        assert normalised_source(text) == text.strip()
    assert code_fingerprint("def (:") != code_fingerprint("def ):")


# -- the project's operators -----------------------------------------------------------------

@pytest.mark.parametrize("source", [e.source() for e in CORPUS] + SEEDS,
                         ids=[e.name for e in CORPUS] + [f"seed{i}" for i in range(len(SEEDS))])
def test_renamed_copy_of_a_real_operator_matches(source):
    copy = renamed_copy(source)
    assert source_key(copy) != source_key(source)
    assert code_fingerprint(copy) == code_fingerprint(source)
    compile(normalised_source(source), "<normalised>", "exec")


def test_the_offline_llm_renamed_answers_match_their_entry():
    for e in CORPUS:
        assert code_fingerprint(e.source(e.kind)) == code_fingerprint(e.source())


def test_distinct_operators_have_distinct_fingerprints():
    """No over-normalisation: every distinct operator of the corpus and the seeds stays apart."""
    sources = sorted({e.source() for e in CORPUS} | set(SEEDS))
    assert len(sources) == len(CORPUS) + len(SEEDS)
    prints = {code_fingerprint(s): s for s in sources}
    assert len(prints) == len(sources)
    assert len({normalised_source(s) for s in sources}) == len(sources)

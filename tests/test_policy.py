"""The static policy check of operator code (glns.policy): escapes it refuses, code it lets
through, and every operator the project ships."""

from __future__ import annotations

import inspect

import pytest

from glns.policy import IMPLICIT_MODULES, policy_violation

NP = "import numpy as np\n"
NO_IO = "NumPy's file/memory-map/ctypes API; operators may not do I/O"
PRIVATE = "operators may not use names starting with '_'"
REFLECTION = "operators may not reach attributes by a string nor list namespaces"
ONLY = "operators may only import numpy, random"

# (source, what the message must hold)
ESCAPES = [
    ("import random\nrandom._os.system('touch x')\n", f"uses '._os' (line 2); {PRIVATE}"),
    ("import collections\ncollections._sys\n", f"uses '._sys' (line 2); {PRIVATE}"),
    ("x = (1).__class__\n", f"uses '.__class__' (line 1); {PRIVATE}"),
    ("from random import _os\n", f"imports '_os' from 'random' (line 1); {PRIVATE}"),
    ("import numpy._core as c\n", f"imports 'numpy._core' (line 1); {PRIVATE}"),
    ("from numpy._core import multiarray\n", f"imports from 'numpy._core' (line 1); {PRIVATE}"),
    ("def f(x):\n    match x:\n        case object(_os=o):\n            return o\n",
     f"uses '._os' (line 3); {PRIVATE}"),
    (NP + "a = np.zeros(3)\nnp.save('x.npy', a)\n", f"uses '.save' (line 3), {NO_IO}"),
    (NP + "np.zeros(3).tofile('x')\n", f"uses '.tofile' (line 2), {NO_IO}"),
    (NP + "np.memmap('x', mode='w+', shape=(3,))\n", f"uses '.memmap' (line 2), {NO_IO}"),
    (NP + "np.fromfile('/etc/hostname', dtype=np.uint8)\n",
     f"uses '.fromfile' (line 2), {NO_IO}"),
    (NP + "np.ctypeslib\n", f"uses '.ctypeslib' (line 2), {NO_IO}"),
    ("def f(arr):\n    return arr.ctypes.data\n", f"uses '.ctypes' (line 2), {NO_IO}"),
    ("from numpy import save\n", f"imports 'save' from 'numpy' (line 1), {NO_IO}"),
    ("from numpy.lib.format import open_memmap\n",
     f"imports 'open_memmap' from 'numpy.lib.format' (line 1), {NO_IO}"),
    ("import numpy.ctypeslib\n", f"imports 'numpy.ctypeslib' (line 1), {NO_IO}"),
    ("x = np.testing\n", f"uses '.testing' (line 1), {NO_IO}"),
    # unpickles what a file-like object of the operator's own hands it: any code
    ("x = np.lib.format.read_array(f, allow_pickle=True)\n",
     f"uses '.read_array' (line 1), {NO_IO}"),
    ("from numpy import *\n", f"imports '*' from 'numpy' (line 1), which binds"),
    ("import dataclasses\ndataclasses.sys.modules['os'].system('id')\n",
     f"reaches module 'sys' through 'dataclasses.sys' (line 2); {ONLY}"),
    ("import typing\nx = typing.sys\n",
     f"reaches module 'sys' through 'typing.sys' (line 2); {ONLY}"),
    ("import enum\nb = enum.bltns\n", "reaches module 'builtins' through 'enum.bltns' (line 2)"),
    ("from numpy import matrixlib as m\nm.defmatrix.sys.modules\n",
     "reaches module 'sys' through 'm.defmatrix.sys' (line 2)"),
    ("def f():\n    return np.matrixlib.defmatrix.N.builtins\n",      # np without importing it
     "reaches module 'builtins' through 'np.matrixlib.defmatrix.N.builtins' (line 2)"),
    ("from typing import sys\n", f"imports module 'sys' from 'typing' (line 1); {ONLY}"),
    ("import random\ngetattr(random, '_o' + 's')\n", f"uses 'getattr' (line 2); {REFLECTION}"),
    ("x = vars()\n", f"uses 'vars' (line 1); {REFLECTION}"),
    ("g = globals\n", f"uses 'globals' (line 1); {REFLECTION}"),
    ("import operator, random\noperator.attrgetter('_os')(random)\n",
     f"uses '.attrgetter' (line 2); {REFLECTION}"),
    ("import operator\nf = operator.methodcaller('system', 'id')\n",
     f"uses '.methodcaller' (line 2); {REFLECTION}"),
    ("from operator import attrgetter\n",
     f"imports 'attrgetter' from 'operator' (line 1); {REFLECTION}"),
    ("from operator import *\n", "imports '*' from 'operator' (line 1), which binds 'attrgetter'"),
    # both evaluate strings (annotations, forward references) as code
    ("import typing\ndef f(x: 'int'): pass\ntyping.get_type_hints(f)\n",
     "uses '.get_type_hints' (line 3), which operators may not use"),
    ("from functools import singledispatch\n",
     "imports 'singledispatch' from 'functools' (line 1)"),
]

BENIGN = [
    NP + "x = np.random.rand(3)\ny = np.linalg.norm(x)\nr = np.random.default_rng(1).integers(5)\n",
    "import collections.abc\nok = isinstance([], collections.abc.Sequence)\n",
    "from collections import abc, defaultdict, deque\nd = defaultdict(list)\nq = deque()\n",
    "import collections\nd = collections.defaultdict(int)\nc = collections.Counter('ab')\n",
    "import math\nh = math.hypot(3, 4)\n",
    "import numpy.random as npr\nx = npr.rand(2)\n",
    "from numpy import random as r, linalg\nx = linalg.norm(r.rand(2))\n",
    "class Candidate:\n    def __init__(self, cost):\n        self.cost = cost\n\n"
    "    def __lt__(self, other):\n        return self.cost < other.cost\n",
    "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n",
    "from __future__ import annotations\nfrom dataclasses import dataclass, field\n"
    "from typing import List\n\n@dataclass\nclass Route:\n"
    "    nodes: List[int] = field(default_factory=list)\n",
    "from math import *\nx = sqrt(2) + pi\n",
    "import functools, heapq, itertools, bisect, statistics, operator\n"
    "s = functools.reduce(operator.add, itertools.chain([1], [2]))\n"
    "i = bisect.bisect_left([1, 2], 2)\nm = statistics.mean([1, 2])\n"
    "h = heapq.nsmallest(1, [3, 1])\n"
    "k = operator.itemgetter(1)\n",
    # a VRP's load is no NumPy call, only .load is refused
    "def repair(partial, removed, problem_data):\n    load = [0] * len(partial)\n"
    "    saved = sum(load)\n    return partial\n",
    NP + "d = np.asarray([[0.0]])\nn = d.shape[0]\nt = d.T\nflat = d.ravel().tolist()\n",
]


@pytest.mark.parametrize("source, expected", ESCAPES)
def test_escapes_are_refused_with_a_precise_message(source, expected):
    why = policy_violation(source)
    assert why is not None and expected in why, why


@pytest.mark.parametrize("source", BENIGN)
def test_benign_code_passes(source):
    assert policy_violation(source) is None


def test_verdicts_are_stable_across_calls():
    """The module resolution is cached; a second call gives the same answers."""
    for source, expected in ESCAPES[:25]:
        assert policy_violation(source) == policy_violation(source)
    assert policy_violation(BENIGN[0]) is None and policy_violation(BENIGN[0]) is None


def test_allowed_imports_still_decide_which_modules_a_chain_may_reach():
    assert policy_violation(NP + "x = np.random.rand(3)\n", ("numpy",)) is None
    why = policy_violation("import typing\nx = typing.sys\n", ("typing", "sys"))
    assert why is None
    assert "imports 'random'" in policy_violation("import random\n", ("numpy",))


def test_implicit_modules_are_the_operator_globals():
    from glns.operators.bridge import OPERATOR_GLOBALS

    assert {k: v.__name__ for k, v in OPERATOR_GLOBALS.items()} == IMPLICIT_MODULES


def _shipped_sources() -> list[tuple[str, str]]:
    """Every operator source the project ships: the offline LLM's corpus (as answered, and
    renamed), the paper-style operators, and the seed operators (their modules and the
    self-contained seed members)."""
    from glns.evolution.seeds import SEED_NAMES, seed_source
    from glns.offline_llm import paper_style
    from glns.offline_llm.corpus import GOOD
    from glns.operators import seeds

    out = []
    for (_, kind), entries in GOOD.items():
        for e in entries:
            out += [(e.name, e.source()), (f"{e.name} as {kind}", e.source(kind))]
    for family, kinds in paper_style.SOURCES.items():
        for kind, sources in kinds.items():
            out += [(f"paper_style/{family}/{kind}/{i}", s) for i, s in enumerate(sources)]
    for problem in ("tsp", "cvrp", "ovrp"):
        for names in SEED_NAMES.values():
            out += [(f"seed/{problem}/{name}", seed_source(problem, name)) for name in names]
    out += [(m.__name__, inspect.getsource(m)) for m in (seeds.tsp, seeds.vrp)]
    return out


def test_every_shipped_operator_passes():
    shipped = _shipped_sources()
    assert len(shipped) > 80
    refused = {name: why for name, src in shipped if (why := policy_violation(src)) is not None}
    assert refused == {}


def test_the_bad_answers_meant_to_break_the_policy_still_do():
    """bad.py's forbidden_import is the only case the policy stops; the others must reach the
    check they are written for (time limit, memory limit, output check ...)."""
    from glns.offline_llm.bad import BAD_CASES, bad_operator_source

    for case in BAD_CASES.values():
        if case.expect in ("parse", "compile"):
            continue
        for family in ("tsp", "vrp"):
            if case.vrp_only and family == "tsp":
                continue
            for kind in ("destroy", "repair"):
                why = policy_violation(bad_operator_source(case.name, family, kind))
                if case.name == "forbidden_import":
                    assert why is not None and "imports 'os'" in why
                else:
                    assert why is None, (case.name, family, kind, why)


@pytest.mark.parametrize("code,fragment", [
    ("def g():\n    yield 1\ndef destroy(x, k, d):\n    f = g()\n    return f.gi_frame.f_back, x\n", "f_back"),
    ("def destroy(x, k, d):\n    try:\n        1 / 0\n    except Exception as e:\n        return e.tb_frame, x\n", "tb_frame"),
    ("import numpy as np\ndef destroy(x, k, d):\n    return np.lib.stride_tricks.as_strided(x), x\n", "as_strided"),
])
def test_frames_and_raw_memory_are_refused(code, fragment):
    why = policy_violation(code)
    assert why is not None and fragment in why, why

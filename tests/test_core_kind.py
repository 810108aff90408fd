"""The core derives its problem-kind facts in one place (src/glns/_core/_kind.pxd).

Every registered variant's facts in the core must be the class attributes of its Python
class, and no core source outside _kind.pxd may compare kind codes.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from glns._core._instance import CoreInstance
from glns.problems import PROBLEM_KINDS

from conftest import make_problem

_CORE = Path(__file__).resolve().parents[1] / "src" / "glns" / "_core"


@pytest.mark.parametrize("kind", sorted(PROBLEM_KINDS))
def test_core_facts_are_the_variant_class_attributes(kind):
    cls = PROBLEM_KINDS[kind]
    problem = make_problem(kind, 12, 3, 30)
    core = CoreInstance(cls.core_code, problem.distances, problem.demands, problem.capacity,
                        **problem.core_extras())
    assert core.kind == cls.core_code
    assert core.timed is cls.timed
    assert core.has_depot is cls.has_depot
    assert core.closed_routes is cls.closed_routes
    assert core.capacitated is cls.capacitated
    assert core.first == cls.first_node
    assert core.n_customers == problem.n_nodes - cls.first_node


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown problem kind 99"):
        CoreInstance(99, np.zeros((3, 3)))


def test_kind_codes_are_compared_only_in_the_kind_module():
    comparisons = {}
    for path in sorted(_CORE.glob("*.p*")):
        if path.suffix not in (".pyx", ".pxd") or path.name in ("_kind.pxd", "_types.pxd"):
            continue
        hits = [line.strip() for line in path.read_text().splitlines()
                if re.search(r"\bKIND_[A-Z]+\b", line.split("#")[0])]
        if hits:
            comparisons[path.name] = hits
    assert comparisons == {}

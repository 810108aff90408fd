"""Compile time of one operator and the time of a cache hit.

Cold: ``glns.compiler.compile_source`` into an empty cache directory (child process, Cython,
C compiler, store); hit: the same call when the entry exists (policy check, integrity check of
the cached module, no process); load: ``load_module`` of a cached module in a fresh process is
not measured here (it is a dlopen, about a millisecond).

    python -m pytest bench/test_compile_speed.py --benchmark-columns=median,iqr,rounds -q -s
"""

from __future__ import annotations

import shutil
import tempfile

import pytest

from glns import compiler
from glns.offline_llm import paper_style
from glns.offline_llm.corpus import good_entries

pytestmark = pytest.mark.skipif(compiler.unavailable_reason() is not None,
                                reason=f"cannot compile here: {compiler.unavailable_reason()}")

OPERATORS = {
    "corpus cvrp regret2_insertion": good_entries("cvrp", "repair")[1].source(),
    "corpus tsp segment_removal": good_entries("tsp", "destroy")[0].source(),
    "paper-style shaw_related_removal": paper_style.SOURCES["vrp"]["destroy"][2],
    "paper-style greedy_insertion_two_opt": paper_style.SOURCES["vrp"]["repair"][4],
}


@pytest.mark.parametrize("name", list(OPERATORS))
def test_cold_compile(benchmark, name):
    benchmark.group = "compile one operator, empty cache"
    dirs: list[str] = []

    def fresh():
        dirs.append(tempfile.mkdtemp(prefix="glns-bench-cache-"))
        return (OPERATORS[name],), {"cache_dir": dirs[-1]}

    try:
        out = benchmark.pedantic(compiler.compile_source, setup=fresh, rounds=3, iterations=1)
    finally:
        for d in dirs:
            shutil.rmtree(d, ignore_errors=True)
    assert out.status == "compiled", out.reason
    print(f"\n{name}: cold compile median {benchmark.stats.stats.median:.2f} s "
          f"({len(OPERATORS[name].splitlines())} source lines)")


@pytest.mark.parametrize("name", list(OPERATORS))
def test_cache_hit(benchmark, name, tmp_path):
    benchmark.group = "compile one operator, cache hit"
    first = compiler.compile_source(OPERATORS[name], cache_dir=tmp_path)
    assert first.ok, first.reason
    out = benchmark.pedantic(compiler.compile_source, args=(OPERATORS[name],),
                             kwargs={"cache_dir": tmp_path}, rounds=50, iterations=1)
    assert out.status == "cached"
    print(f"\n{name}: cache hit median {1000 * benchmark.stats.stats.median:.2f} ms")

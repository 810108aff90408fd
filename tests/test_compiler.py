"""glns.compiler: Cython compilation of operator source, its cache, policy and signal checks.

Compiling takes ~2-4 s per module, so compiled modules are shared through module-scoped
fixtures, and tests that only need to know whether a build *would* start replace the child
process with a recorder. Every cache lives under pytest's tmp dirs.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from glns import compiler, datasets
from glns.compiler import cache as ccache, toolchain, transform
from glns.exceptions import OperatorError
from glns.offline_llm.corpus import entry, good_entries
from glns.operators import bridge
from glns.reference import random_solution
from glns.rng import SplitMix64

TINY = "def destroy(x, destroy_cnt, problem_data):\n    return list(x)[:destroy_cnt], []\n"

#: functions to probe signal handling, recursion and globals; np is not imported on purpose
PROBE = textwrap.dedent('''
    def spin():
        while True:
            pass

    def spin_in_comprehension():
        return [i for i in itertools.count() if i < 0]

    def rec(n):
        return rec(n + 1)

    def depth(n):
        return 0 if n == 0 else depth(n - 1) + 1

    def uses_np(n):
        return int(np.arange(n).sum())

    def pops():
        xs = [3, 1, 2]
        xs.remove(1)
        return xs.pop(), xs
''')


@pytest.fixture(scope="module")
def toolchain_ok():
    pytest.importorskip("Cython")
    why = compiler.unavailable_reason()
    if why is not None:
        pytest.skip(why)


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("op-cache")


@pytest.fixture(scope="module")
def build(toolchain_ok, shared_cache):
    """compile_source into the shared cache, each source once per test module."""
    done: dict[str, compiler.CompileOutcome] = {}

    def _build(source: str) -> compiler.CompileOutcome:
        if source not in done:
            out = compiler.compile_source(source, cache_dir=shared_cache)
            assert out.status == "compiled", out
            done[source] = out
        return done[source]

    return _build


@pytest.fixture(scope="module")
def tiny(build) -> compiler.CompileOutcome:
    """TINY, compiled before any test replaces the build process."""
    return build(TINY)


@pytest.fixture
def no_child(monkeypatch):
    """Fail the test if a build process is started."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a child process was started: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)


@pytest.fixture
def spawns(monkeypatch) -> list:
    """Record build-process starts instead of running them (the build then reports an
    unstartable process): proves a build was attempted, in no time."""
    calls: list = []

    def record(command, *args, **kwargs):
        calls.append(command)
        raise OSError("build process disabled by the test")

    monkeypatch.setattr(subprocess, "Popen", record)
    return calls


def _seed(s: int) -> None:
    random.seed(s)
    np.random.seed(s)


# -- compiled code behaves like interpreted code ------------------------------------------------

@pytest.mark.parametrize("name", [good_entries("cvrp", "destroy")[0].name, "vrp/small_route_removal",
                                  good_entries("cvrp", "repair")[0].name])
def test_compiled_corpus_operator_matches_interpreted(build, name):
    e = entry(name)
    source = e.source()
    out = build(source)
    assert out.ok and Path(out.path).is_file() and out.module_name.startswith("glns_op_")
    compiled = getattr(compiler.load_module(out, bridge.OPERATOR_GLOBALS), e.func.__name__)
    interpreted = bridge.compile_source(source, e.kind, e.func.__name__)
    assert bridge.third_argument_convention(compiled) == bridge.third_argument_convention(interpreted)
    destroy = bridge.compile_source(good_entries("cvrp", "destroy")[0].source(), "destroy")
    for seed in range(4):
        problem = datasets.generate_cvrp(30, seed)
        data = problem.problem_data()
        solution = random_solution(problem, SplitMix64(seed))
        if e.kind == "destroy":
            args = (solution, 8, data)
        else:
            _seed(seed)
            removed, partial = destroy(solution, 8, data)
            args = (partial, removed, data)
        results = []
        for func in (interpreted, compiled):
            _seed(seed)
            results.append((func(*copy.deepcopy(args)), random.getstate(), np.random.get_state()[1].sum()))
        assert results[0][0] == results[1][0]
        assert results[0][1] == results[1][1] and results[0][2] == results[1][2]  # same draws


def test_load_module_prefills_globals_and_loads_once(build):
    out = build(PROBE)
    module = compiler.load_module(out, bridge.OPERATOR_GLOBALS)
    assert module.uses_np(5) == 10  # np comes from the globals, not an import
    assert module.pops() == (2, [3])  # list methods (a Cython option here segfaults on them)
    assert compiler.load_module(out) is module


def test_load_module_errors_are_operator_errors(build, tmp_path):
    out = build("def destroy(a, b, c):\n    return a\n\nraise ValueError('boom at import')\n")
    with pytest.raises(OperatorError, match="ValueError when loaded: boom at import"):
        compiler.load_module(out)
    with pytest.raises(OperatorError, match="boom at import"):  # again, not a re-init crash
        compiler.load_module(out)
    rejected = compiler.compile_source("import os\n", cache_dir=tmp_path)
    with pytest.raises(OperatorError, match="not compiled \\(rejected\\)"):
        compiler.load_module(rejected)


def test_time_limit_interrupts_compiled_infinite_loops(build):
    from glns._core._alns import OperatorTimeout

    module = compiler.load_module(build(PROBE), bridge.OPERATOR_GLOBALS)
    for func in (module.spin, module.spin_in_comprehension):
        started = time.perf_counter()
        with pytest.raises(OperatorTimeout):
            with bridge.time_limit(0.2):
                func()
        assert time.perf_counter() - started < 2.0


def test_infinite_recursion_raises_recursion_error(build, shared_cache):
    # in a child: were the guard missing, this would crash with a C stack overflow
    script = textwrap.dedent(f"""
        import sys
        from glns import compiler
        out = compiler.compile_source({PROBE!r}, cache_dir={str(shared_cache)!r})
        assert out.status == "cached", out
        m = compiler.load_module(out)
        try:
            m.rec(0)
        except RecursionError as exc:
            print("infinite:", exc)
        print("depth 300:", m.depth(300))
        sys.setrecursionlimit(200)
        try:
            m.depth(300)
        except RecursionError:
            print("limit 200 honoured")
    """)
    build(PROBE)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "infinite: maximum recursion depth exceeded" in proc.stdout
    assert "depth 300: 300" in proc.stdout and "limit 200 honoured" in proc.stdout


# -- the cache -----------------------------------------------------------------------------------

def test_second_compile_is_a_cache_hit_without_a_child(tiny, shared_cache, no_child):
    first = tiny
    again = compiler.compile_source(TINY, cache_dir=shared_cache)
    assert again.status == "cached" and again.path == first.path and again.key == first.key
    assert again.seconds < 0.5
    meta = json.loads((Path(first.path).parent / "meta.json").read_text())
    assert meta["key"] == first.key and meta["size"] == Path(first.path).stat().st_size
    assert Path(first.path).parent == shared_cache / first.key[:2] / first.key


def test_changed_source_or_cython_version_misses(tiny, shared_cache, monkeypatch, spawns):
    key = compiler.cache_key(TINY)
    assert compiler.cache_key(TINY + "\n") != key
    assert compiler.cache_key(TINY, signal_checks=False) != key
    assert compiler.compile_source(TINY + "\n", cache_dir=shared_cache).status == "unavailable"
    assert len(spawns) == 1  # a miss: a build was started
    monkeypatch.setattr(toolchain, "cython_version", lambda: "0.0.0-test")
    assert compiler.cache_key(TINY) != key
    compiler.compile_source(TINY, cache_dir=shared_cache)
    assert len(spawns) == 2


def _corrupt_truncate_so(entry: Path, so: Path) -> None:
    so.write_bytes(so.read_bytes()[:1000])


def _corrupt_meta(entry: Path, so: Path) -> None:
    (entry / "meta.json").write_text("{not json")


@pytest.mark.parametrize("corrupt", [_corrupt_truncate_so, _corrupt_meta])
def test_corrupt_entries_are_detected_and_rebuilt(tiny, shared_cache, tmp_path, corrupt):
    first = tiny
    root = tmp_path / "cache"
    shutil.copytree(shared_cache, root)
    so = root / Path(first.path).relative_to(shared_cache)
    corrupt(so.parent, so)
    out = compiler.compile_source(TINY, cache_dir=root)
    assert out.status == "compiled", out
    assert compiler.compile_source(TINY, cache_dir=root).status == "cached"
    assert so.read_bytes() == Path(first.path).read_bytes()


def test_a_second_builder_waits_for_the_first(tiny, tmp_path, no_child):
    first = tiny
    key = first.key
    root = tmp_path / "cache"
    with ccache.key_lock(root, key, 1.0) as locked:
        assert locked
        out = compiler.compile_source(TINY, cache_dir=root, timeout=0.3)  # gives up waiting
        assert out.status == "timeout" and "another process" in out.reason
        results = []
        waiter = threading.Thread(target=lambda: results.append(
            compiler.compile_source(TINY, cache_dir=root, timeout=30)))
        waiter.start()
        time.sleep(0.2)  # the waiter is blocked on the lock; "the other builder" finishes:
        ccache.entry_dir(root, key).parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(Path(first.path).parent, ccache.entry_dir(root, key))
    waiter.join(30)
    assert results and results[0].status == "cached"  # found after the wait, no build


def test_clear_cache_and_cache_dir(tiny, shared_cache, tmp_path, monkeypatch):
    first = tiny
    root = tmp_path / "cache"
    shutil.copytree(shared_cache, root)
    n = sum(1 for shard in root.iterdir() if len(shard.name) == 2 for e in shard.iterdir() if e.is_dir())
    assert compiler.clear_cache(root) == n >= 1
    assert compiler.clear_cache(root) == 0 and not (root / first.key[:2]).exists()
    assert compiler.clear_cache(tmp_path / "missing") == 0
    monkeypatch.delenv("GLNS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compiler.cache_dir() == tmp_path / "xdg" / "glns" / "operators"
    monkeypatch.setenv("GLNS_CACHE_DIR", str(tmp_path / "mine"))
    assert compiler.cache_dir() == tmp_path / "mine"


# -- what is refused, and the ways a build fails -------------------------------------------------

@pytest.mark.parametrize("source, reason", [
    ("# cython: boundscheck=False\n" + TINY, "directive comment"),
    ("#CYTHON :wraparound=False\n" + TINY, "directive comment"),
    (TINY + "x = 1  # distutils: libraries = m\n", "directive comment"),
    ("from libc.math cimport sqrt\n" + TINY, "syntax error"),
    ("cimport = 3\n" + TINY, "'cimport'"),
    ("include('evil.pxi')\n" + TINY, "'include' statement"),
    ("import os\n" + TINY, "imports 'os'"),
    ("import cython\n" + TINY, "imports 'cython'"),
    ("from cython.cimports.libc import math\n" + TINY, "imports from 'cython.cimports.libc'"),
    (TINY + "def g():\n    return open('/etc/passwd').read()\n", "uses 'open'"),
    ("def f(:\n", "syntax error at line 1"),
])
def test_policy_rejections_build_nothing(tmp_path, no_child, source, reason):
    assert reason in compiler.compile_violation(source)
    out = compiler.compile_source(source, cache_dir=tmp_path / "cache")
    assert out.status == "rejected" and reason in out.reason and not out.ok and out.path is None
    assert not (tmp_path / "cache").exists()


def test_plain_operator_code_is_accepted():
    assert compiler.compile_violation(TINY + "include = [1]\nincluded = include\n") is None
    for e in good_entries("cvrp", "destroy") + good_entries("tsp", "repair"):
        assert compiler.compile_violation(e.source()) is None
    import inspect

    from glns.operators import seeds

    for module in (seeds.tsp, seeds.vrp):
        assert compiler.compile_violation(inspect.getsource(module)) is None


def test_non_str_source_raises(tmp_path):
    with pytest.raises(TypeError):
        compiler.compile_source(b"def f(): pass", cache_dir=tmp_path)


def test_cython_error_is_failed_with_the_message(toolchain_ok, tmp_path):
    source = ("def destroy(x, n, data):\n    y = 1\n    def g():\n        return y\n"
              "    del y\n    return g, []\n")
    compile(source, "<valid python>", "exec")
    out = compiler.compile_source(source, cache_dir=tmp_path)
    assert out.status == "failed", out
    assert "can not delete variable 'y'" in out.reason and "del y" in out.reason


def test_c_compiler_error_is_failed(toolchain_ok, tmp_path, monkeypatch):
    if shutil.which("false") is None:
        pytest.skip("no 'false' command")
    monkeypatch.setenv("CC", "false")
    out = compiler.compile_source(TINY, cache_dir=tmp_path)
    assert out.status == "failed" and "C compiler failed" in out.reason


def test_missing_c_compiler_is_unavailable(tmp_path, monkeypatch, no_child):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert "/nonexistent/cc" in compiler.unavailable_reason() or "Cython" in compiler.unavailable_reason()
    out = compiler.compile_source(TINY, cache_dir=tmp_path)
    assert out.status == "unavailable" and out.reason
    monkeypatch.delenv("CC")
    assert "/nonexistent/cc" not in (compiler.unavailable_reason() or "")


def test_without_cython_the_package_imports_and_reports_unavailable(tmp_path):
    fake = tmp_path / "fake" / "Cython"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no Cython in this test')\n")
    script = textwrap.dedent(f"""
        import sys
        from glns import compiler
        assert "Cython" not in sys.modules  # importing the package needs no Cython
        out = compiler.compile_source({TINY!r}, cache_dir={str(tmp_path / 'c1')!r})
        print(out.status, "|", out.reason)
        # were Cython seen as present here, the build child finds it missing the same way
        from glns.compiler import toolchain
        toolchain.cython_version = lambda: "3.3.1"
        out = compiler.compile_source({TINY!r}, cache_dir={str(tmp_path / 'c2')!r})
        print(out.status, "|", out.reason)
    """)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("unavailable | Cython is not installed"), line


def test_timeout(toolchain_ok, tmp_path):
    out = compiler.compile_source(TINY + "\n# timeout test\n", cache_dir=tmp_path, timeout=0.01)
    assert out.status == "timeout" and "0.01" in out.reason and out.path is None
    assert not ccache.entry_dir(tmp_path, out.key).exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]  # work dir removed


# -- the source rewrite --------------------------------------------------------------------------

def test_transform_keeps_names_and_checks_every_loop():
    source = textwrap.dedent('''
        """doc"""
        from __future__ import annotations

        def destroy(x, n, data, _glns_tick=1):
            """keeps its docstring"""
            for i in range(3):
                while n:
                    n -= 1
            return [c for c in x if c], sorted(x, key=lambda c: -c)

        def gen():
            yield 1
    ''')
    out = transform.transform(source)
    tree = ast.parse(out)
    assert isinstance(tree.body[1], ast.ImportFrom) and tree.body[1].module == "__future__"
    assert tree.body[2].module == f"cython.cimports.{transform.RUNTIME_MODULE}"
    aliases = {a.name: a.asname for a in tree.body[2].names}
    assert aliases["tick"] == "_glns_tick1"  # the operator's own _glns_tick is left alone
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert set(funcs) == {"destroy", "gen"}
    assert ast.get_docstring(funcs["destroy"]) == "keeps its docstring"
    assert [a.arg for a in funcs["destroy"].args.args] == ["x", "n", "data", "_glns_tick"]
    assert out.count("_glns_tick1()") == 5  # for, while, comprehension, lambda, generator
    assert "_glns_enter()" in out and "_glns_leave()" in out
    assert transform.transform(source, signal_checks=False) == source
    assert transform.transform("# -*- coding: latin-1 -*-\nx = 1\n", signal_checks=False) == "#\nx = 1\n"


# -- element reads ---------------------------------------------------------------------------

ELEMENT_READS = '''
def reads(x, lst, order):
    def first():
        order.append("first")
        return 1

    def second():
        order.append("second")
        return -1

    out = [x[first(), second()], x[-1][0], x[1:3, 0].tolist(), x[[0, 1], [1, 1]].tolist(),
           lst[-1], lst[0], (4, 5)[1], {"k": 3}["k"], str(type(x[np.int64(1), 1])),
           x[1, 2] + x[2, 1], lst[True]]
    for bad in ((lst, 5), (x, (7, 0)), (x, (0, 2**70)), (x, (0.5, 1)), (lst, "a")):
        try:
            bad[0][bad[1]]
        except (IndexError, TypeError) as exc:
            out.append(f"{type(exc)}: {exc}")
    return out


def insertion(d, route, c):
    prev = np.array([0] + route)
    nxt = np.array(route + [0])
    delta = d[prev, c] + d[c, nxt] - d[prev, nxt]
    p = np.argmin(delta)
    rows = d[prev]
    return [prev.dtype.str, delta.tolist(), int(p), delta[p], d[prev, nxt].flags.writeable,
            d[prev, c].shape, rows[0][prev].tolist(), int(np.argmax(rows[:, 1]))]


def extremes(x):
    return int(np.argmin(x)), int(np.argmax(x))


def array_of(x):
    a = np.array(x)
    return a.dtype.str, a.tolist(), a.shape


def sums(a, b):
    out = []
    for value in (a + b, a - b, b - a):
        out.append((value.dtype.str, value.shape, value.tolist()) if isinstance(value, np.ndarray) else value)
    return out, a + 1, 2 - b


def ints(q, n):
    if q.ndim == 2:
        return [q[i, j] * q[-i, -j] for i in range(n) for j in range(n)]
    return [q[i] * q[-i] for i in range(n)]
'''


def test_element_reads_rewritten_outside_stores_and_annotations():
    out = transform.transform("def f(x: dict[str, int], d) -> list[int]:\n"
                              "    y: list[int] = [x['a'], d[1, 2], d[1:2], d[1, 2:3]]\n"
                              "    d[0][1] = d[2]\n    del d[0]\n    return y\n", signal_checks=False)
    assert "dict[str, int]" in out and "-> list[int]" in out and "y: list[int]" in out
    assert "_glns_at1(x, 'a')" in out and "_glns_at2(d, 1, 2)" in out
    assert "d[1:2]" in out and "d[1, 2:3]" in out
    assert "_glns_at1(d, 0)[1] = _glns_at1(d, 2)" in out and "del d[0]" in out
    assert out.startswith("from cython.cimports._glns_rt import at1 as _glns_at1, at2 as _glns_at2, "
                          "call1 as _glns_call1, plus as _glns_plus, minus as _glns_minus, "
                          "arrays as _glns_arrays\n_glns_arrays()\n")
    calls = transform.transform("def f(a, b, d):\n    return np.array(a), np.argmin(b), np.argmax(b, axis=0), "
                                "np.array(*a), np.sum(d), d.argmin(b)\n", signal_checks=False)
    assert "_glns_call1(np.array, a), _glns_call1(np.argmin, b), np.argmax(b, axis=0), np.array(*a), " \
        "np.sum(d), _glns_call1(d.argmin, b)" in calls   # (call1 calls any other function as it is)


def test_compiled_element_reads_equal_numpy_indexing(build):
    """The direct reads give the values NumPy's indexing gives (as Python numbers), in the same
    order of evaluation, and everything else (slices, index arrays, errors) is NumPy's own."""
    out = build(ELEMENT_READS)
    assert out.ok, out.reason
    module = compiler.load_module(out, bridge.OPERATOR_GLOBALS)
    plain = dict(bridge.OPERATOR_GLOBALS)
    exec(ELEMENT_READS, plain)
    x = np.arange(12.0).reshape(3, 4)
    sealed = np.frombuffer(x.tobytes()).reshape(3, 4)
    for arr in (x, sealed, np.asfortranarray(x), x[:, ::-1]):
        compiled_order, plain_order = [], []
        got = module.reads(arr, [1, 2, 3], compiled_order)
        want = plain["reads"](arr, [1, 2, 3], plain_order)
        assert got == want and compiled_order == plain_order == ["first", "second"]
        assert type(got[0]) is float and type(want[0]) is np.float64
    for q in (np.arange(1, 40, dtype=np.int64), np.arange(16, dtype=np.int64).reshape(4, 4),
              np.arange(1, 40, dtype=np.int32), np.linspace(0, 1, 40)):
        n = 4 if q.ndim == 2 else 39
        assert module.ints(q, n) == plain["ints"](q, n)


def test_compiled_small_array_paths_equal_numpy(build):
    """Advanced indexing with int64 index arrays, np.array of lists and argmin/argmax give
    what NumPy gives (arrays of the same dtype, shape and values; the same indices; NumPy's
    own errors and dtypes wherever the direct path does not apply)."""
    out = build(ELEMENT_READS)
    module = compiler.load_module(out, bridge.OPERATOR_GLOBALS)
    plain = dict(bridge.OPERATOR_GLOBALS)
    exec(ELEMENT_READS, plain)
    d = np.frombuffer(np.random.default_rng(1).random((20, 20)).tobytes()).reshape(20, 20)
    for args in ((d, [3, 5, 7], 4), (d, [], 2), (d, [-1, 19], -3), (d.T, [2, 2], 0),
                 (np.arange(400, dtype=np.int64).reshape(20, 20), [4, 1], 6)):
        assert module.insertion(*args) == plain["insertion"](*args)
    for bad in ((d, [3, 25], 1), (d, [3], 20), (d, [1.5], 1)):
        with pytest.raises(Exception) as compiled_error:
            module.insertion(*bad)
        with pytest.raises(Exception) as plain_error:
            plain["insertion"](*bad)
        assert str(compiled_error.value) == str(plain_error.value)
    for x in ([3.0, 1.0, 1.0, 5.0], [np.nan, 1.0], [1.0, np.nan, -5.0], [0.0, -0.0], [-0.0, 0.0],
              [5, 1, 1, 9], [2], [np.inf, -np.inf, np.inf]):
        arr = np.array(x)
        assert module.extremes(arr) == plain["extremes"](arr)
        assert module.extremes(arr[::-1]) == plain["extremes"](arr[::-1])
    for x in ([1, 2, 3], [1.0, 2.0], [1, 2.0], [2.0, 1], [2**63, 1], [True, 1], [], [np.int64(1), 2],
              [1, -2**63], [[1, 2], [3, 4]], (1, 2)):
        assert module.array_of(x) == plain["array_of"](x)
    with pytest.raises(ValueError):
        module.extremes(np.array([]))
    x, y = np.array([1.5, -0.0, np.inf, 1e308]), np.array([2.25, 0.0, np.inf, 1e308])
    for a, b in ((x, y), (x[::-1], y), (x, np.arange(4)), (x, y[:1]), (x, 2.0), ([1], [2]),
                 ("a", "b"), (3, 4.5), (x.reshape(2, 2), y.reshape(2, 2)), (np.array([]), np.array([]))):
        outcomes = []
        for sums in (module.sums, plain["sums"]):
            try:
                with np.errstate(all="ignore"):
                    outcomes.append(repr(sums(a, b)))
            except TypeError as exc:
                outcomes.append(f"TypeError: {exc}")
        assert outcomes[0] == outcomes[1]
    with pytest.raises(ValueError) as compiled_error:
        module.sums(x, y[:3])
    with pytest.raises(ValueError) as plain_error:
        plain["sums"](x, y[:3])
    assert str(compiled_error.value) == str(plain_error.value)

"""Instances: random generators, the paper's synthetic sets, and TSPLIB/CVRPLIB files.

- :func:`generate_tsp`, :func:`generate_cvrp`, :func:`generate_ovrp`: one random instance in
  the paper's recipe (unit square, integer demands 1..9, depot at (0.5, 0.5), capacity 50).
- :func:`paper_instances`: a bit-exact regeneration of the paper's train/validation/test sets
  (see ``data/synthetic/README.md`` of the shared benchmark data), and
  :func:`reference_objectives` with the per-instance reference objectives of the test sets.
- :func:`load_npz`: the ``.npz`` files of the shared synthetic data.
- :func:`read`, :func:`read_solution`, :func:`best_known`: TSPLIB ``.tsp`` / CVRPLIB ``.vrp``
  files (parsed by the optional dependency ``vrplib``), their ``.opt.tour`` / ``.sol``
  solutions, and best-known objective values; :func:`write_solution` writes a solution as a
  ``.sol`` / ``.tour`` file in the same numbering (docs/instance-files.md).
"""

from __future__ import annotations

import functools
import json
import operator
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, Mapping

import numpy as np

from glns.exceptions import InvalidInstanceError
from glns.problems import CVRP, OVRP, PROBLEM_KINDS, TSP, VRPTW, Problem, euclidean_distances, problem_class
from glns.solution_files import write_solution

__all__ = [
    "PAPER_PLAN",
    "generate",
    "generate_tsp",
    "generate_cvrp",
    "generate_ovrp",
    "paper_instances",
    "reference_objectives",
    "load_npz",
    "shared_data_dir",
    "read",
    "read_solution",
    "write_solution",
    "best_known",
]

#: the problems of the paper's synthetic sets (paper_instances, reference_objectives)
PROBLEMS = ("tsp", "cvrp", "ovrp")
SPLITS = ("train", "validation", "test")
PAPER_SEED = 1234
PAPER_CAPACITY = 50
DEPOT_XY = (0.5, 0.5)

#: The paper's draw order per problem: ``(split, ((n, count), ...))``, drawn from one stream
#: seeded with 1234. Every set must be drawn, stored or not, to reproduce the sets after it.
PAPER_PLAN: Mapping[str, tuple[tuple[str, tuple[tuple[int, int], ...]], ...]] = MappingProxyType({
    "tsp": (
        ("train", ((50, 10),)),
        ("validation", ((20, 64), (50, 64), (100, 64))),
        ("test", ((10, 64), (20, 64), (50, 64), (100, 64), (200, 64), (500, 64), (1000, 64))),
    ),
    "cvrp": (
        ("train", ((50, 16),)),
        ("validation", ((20, 64), (50, 64), (100, 64))),
        ("test", ((10, 64), (20, 64), (50, 64), (100, 64), (200, 64))),
    ),
    "ovrp": (
        ("train", ((20, 16), (50, 16))),
        ("validation", ((20, 16), (50, 16), (100, 16))),
        ("test", ((10, 64), (20, 64), (50, 64), (100, 64), (200, 64))),
    ),
})

_DATA = Path(__file__).resolve().parent / "data"
_CLASSES = {"tsp": TSP, "cvrp": CVRP, "ovrp": OVRP, "vrptw": VRPTW}
_VRPLIB_MISSING = ("reading TSPLIB/CVRPLIB files needs the optional dependency vrplib: "
                   "pip install 'glns[bench]' or pip install vrplib")
_ROUNDINGS = ("nint", "exact", "dimacs")


# ---------------------------------------------------------------------------------------------
# Random instances (the paper's per-instance recipe)


def _check_problem(problem: str) -> str:
    return problem_class(problem).kind


def _check_paper_problem(problem: str) -> str:
    kind = _check_problem(problem)
    if kind not in PROBLEMS:
        raise ValueError(f"the paper's sets have no {kind.upper()} instances; they have {', '.join(PROBLEMS)}")
    return kind


def _check_size(n: int) -> int:
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"n must be a positive number of cities/customers, got {n}")
    return n


def _draw_tsp(rs: np.random.RandomState, n: int) -> np.ndarray:
    return rs.rand(n, 2)


def _draw_vrp(rs: np.random.RandomState, n: int) -> tuple[np.ndarray, np.ndarray]:
    # customers first, then their demands; the depot is prepended afterwards (draws nothing)
    xy = rs.rand(n, 2)
    q = rs.randint(1, 10, size=n, dtype=np.int64)
    coords = np.concatenate([np.array([DEPOT_XY]), xy])
    demands = np.concatenate([np.zeros(1, dtype=np.int64), q])
    return coords, demands


def generate_tsp(n: int, seed: int) -> TSP:
    """A TSP with ``n`` cities uniform in the unit square: ``RandomState(seed).rand(n, 2)``."""
    n = _check_size(n)
    return TSP(_draw_tsp(np.random.RandomState(seed), n), name=f"tsp{n}_seed{seed}")


def _generate_vrp(kind: str, n: int, seed: int, capacity: int) -> CVRP:
    n = _check_size(n)
    coords, demands = _draw_vrp(np.random.RandomState(seed), n)
    return _CLASSES[kind](coords, demands, capacity, name=f"{kind}{n}_seed{seed}")


def generate_cvrp(n: int, seed: int, capacity: int = PAPER_CAPACITY) -> CVRP:
    """A CVRP with ``n`` customers, drawn with ``RandomState(seed)``.

    Customers ``rand(n, 2)``, then demands ``randint(1, 10, size=n)`` (1..9); the depot,
    node 0, sits at (0.5, 0.5) with demand 0.
    """
    return _generate_vrp("cvrp", n, seed, capacity)


def generate_ovrp(n: int, seed: int, capacity: int = PAPER_CAPACITY) -> OVRP:
    """An OVRP with ``n`` customers; the same recipe (and, for one seed, the same data) as
    :func:`generate_cvrp`."""
    return _generate_vrp("ovrp", n, seed, capacity)  # type: ignore[return-value]


#: VRPTW layouts of generate_vrptw, after Solomon's classes R (random), C (clustered), RC (mixed)
VRPTW_LAYOUTS = ("random", "clustered", "mixed")
#: VRPTW horizons: Solomon's class 1 (short: few customers per route, capacity 200) and class 2
#: (long: many customers per route, capacity 1000)
VRPTW_HORIZONS = {"short": (230.0, 200), "long": (1000.0, 1000)}
#: half-widths of the time windows (uniform in the range), per tightness
VRPTW_WINDOWS = {"tight": (5.0, 30.0), "wide": (30.0, 120.0)}


def generate_vrptw(n: int, seed: int, layout: str = "mixed", horizon: str = "short",
                   windows: str = "tight") -> VRPTW:
    """A VRPTW with ``n`` customers in the spirit of Solomon's classes, drawn with
    ``RandomState(seed)``.

    Customers lie in [0, 100]^2: uniform ("random"), around n/10 centres with a spread of 5
    ("clustered"), or half each ("mixed"); the depot is at (50, 50). Demands 1..30, service
    time 10. ``horizon``: "short" (230, capacity 200) or "long" (1000, capacity 1000), as
    Solomon's classes 1 and 2. Each window is centred uniformly where the customer can be
    served and returned from, with a half-width drawn from ``VRPTW_WINDOWS[windows]``; so every
    customer can be served by a route of its own. Travel time is the exact distance.
    """
    n = _check_size(n)
    if layout not in VRPTW_LAYOUTS:
        raise ValueError(f"layout must be one of {VRPTW_LAYOUTS}, got {layout!r}")
    if horizon not in VRPTW_HORIZONS or windows not in VRPTW_WINDOWS:
        raise ValueError(f"horizon must be one of {tuple(VRPTW_HORIZONS)} and windows one of "
                         f"{tuple(VRPTW_WINDOWS)}, got {horizon!r}, {windows!r}")
    rs = np.random.RandomState(seed)
    end, capacity = VRPTW_HORIZONS[horizon]
    service = 10.0
    uniform = rs.rand(n, 2) * 100.0
    centres = rs.rand(max(1, -(-n // 10)), 2) * 80.0 + 10.0
    around = centres[rs.randint(0, len(centres), size=n)] + rs.normal(0.0, 5.0, size=(n, 2))
    take = {"random": np.zeros(n, bool), "clustered": np.ones(n, bool),
            "mixed": np.arange(n) % 2 == 0}[layout]
    xy = np.clip(np.where(take[:, None], around, uniform), 0.0, 100.0)
    coords = np.concatenate([[[50.0, 50.0]], xy])
    demands = np.concatenate([[0], rs.randint(1, 31, size=n)]).astype(np.int64)
    reach = euclidean_distances(coords)[0, 1:]
    latest = end - service - reach                   # latest start that still gets back
    centre = reach + rs.rand(n) * np.maximum(latest - reach, 0.0)
    lo, hi = VRPTW_WINDOWS[windows]
    half = lo + rs.rand(n) * (hi - lo)
    ready = np.maximum(0.0, centre - half)
    due = np.maximum(np.minimum(latest, centre + half), reach)
    tw = np.concatenate([[[0.0, end]], np.column_stack([ready, due])])
    return VRPTW(coords, demands, capacity, tw, service,
                 name=f"vrptw{n}_{layout}_{horizon}_{windows}_seed{seed}")


#: the Solomon-like classes generate("vrptw", n, seed) cycles through by seed: (layout,
#: horizon, windows), so consecutive seeds (an evolution's training set) cover all twelve
VRPTW_CLASSES = tuple((layout, horizon, windows) for horizon in VRPTW_HORIZONS
                      for windows in VRPTW_WINDOWS for layout in VRPTW_LAYOUTS)


def generate(problem: str, n: int, seed: int, capacity: int | None = None) -> Problem:
    """A generated instance of kind `problem` ("tsp", "cvrp", "ovrp", "vrptw"):
    :func:`generate_tsp`, :func:`generate_cvrp`, :func:`generate_ovrp` (capacity None: the
    paper's; ignored by TSP) or :func:`generate_vrptw` of class ``VRPTW_CLASSES[seed % 12]``
    (capacity ignored)."""
    kind = _check_problem(problem)
    if kind == "tsp":
        return generate_tsp(n, seed)
    if kind == "vrptw":
        return generate_vrptw(n, seed, *VRPTW_CLASSES[seed % len(VRPTW_CLASSES)])
    return _generate_vrp(kind, n, seed, PAPER_CAPACITY if capacity is None else capacity)


# ---------------------------------------------------------------------------------------------
# The paper's synthetic sets


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@functools.lru_cache(maxsize=None)
def _paper_arrays(kind: str) -> Mapping[tuple[str, int], tuple[np.ndarray, np.ndarray | None]]:
    """Every set of ``PAPER_PLAN[kind]``, drawn in order: ``(split, n) -> (coords, demands)``."""
    # The generators call np.random.seed(1234) and then draw one instance at a time (checked
    # against the shared files: a batched rand(I, N, 2) gives different VRP sets); a private
    # RandomState(1234) yields the same legacy stream without touching the global state.
    rs = np.random.RandomState(PAPER_SEED)
    sets: dict[tuple[str, int], tuple[np.ndarray, np.ndarray | None]] = {}
    for split, sizes in PAPER_PLAN[kind]:
        for n, count in sizes:
            if kind == "tsp":
                sets[split, n] = (_readonly(np.stack([_draw_tsp(rs, n) for _ in range(count)])), None)
            else:
                drawn = [_draw_vrp(rs, n) for _ in range(count)]
                sets[split, n] = (_readonly(np.stack([c for c, _ in drawn])),
                                  _readonly(np.stack([q for _, q in drawn])))
    return MappingProxyType(sets)


def _check_split(split: str) -> str:
    s = {"val": "validation", "valid": "validation"}.get(str(split).lower(), str(split).lower())
    if s not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    return s


def _paper_set(problem: str, n: int, split: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The read-only ``(coords, demands)`` arrays of one paper set (demands None for TSP);
    ValueError for an unknown problem or split or a size the split does not have."""
    kind, split, n = _check_paper_problem(problem), _check_split(split), operator.index(n)
    sets = _paper_arrays(kind)
    if (split, n) not in sets:
        sizes = ", ".join(str(m) for s, m in sets if s == split)
        raise ValueError(f"the paper's {kind} {split} split has no size {n}; sizes: {sizes}")
    return sets[split, n]


def paper_instances(problem: str, n: int, split: str = "test") -> list[Problem]:
    """The paper's instances of one set, bit-identical to its public generators.

    Parameters
    ----------
    problem
        ``"tsp"``, ``"cvrp"`` or ``"ovrp"``. Each problem has its own stream, so the OVRP
        test sets are different instances from the CVRP ones.
    n
        Number of cities (TSP) or customers (VRP); see :data:`PAPER_PLAN` for the sizes
        of each split (test: 10, 20, 50, 100, 200, and TSP also 500 and 1000).
    split
        ``"train"``, ``"validation"`` (or ``"val"``) or ``"test"``.

    Returns a fresh list of instances named like ``cvrp_test50_0``. VRP instances have the
    depot (0.5, 0.5) first and capacity 50. The first call per problem draws all its sets
    (well under a second); they are cached.

    Raises ValueError for an unknown problem or split, or a size the split does not have.
    """
    kind, split, n = _check_paper_problem(problem), _check_split(split), operator.index(n)
    coords, demands = _paper_set(kind, n, split)
    name = f"{kind}_{split}{n}"
    if demands is None:
        return [TSP(xy, name=f"{name}_{i}") for i, xy in enumerate(coords)]
    cls = _CLASSES[kind]
    return [cls(xy, q, PAPER_CAPACITY, name=f"{name}_{i}") for i, (xy, q) in enumerate(zip(coords, demands))]


@functools.lru_cache(maxsize=None)
def _table(filename: str) -> dict[str, Any]:
    with open(_DATA / filename, encoding="utf-8") as fh:
        return json.load(fh)


def reference_objectives(problem: str, n: int) -> np.ndarray | None:
    """Per-instance reference objectives (``ref_obj``) of the paper's test set of size ``n``.

    They are the best objectives found by the reference solvers (TSP: LKH-3; CVRP/OVRP: best
    of OR-Tools and PyVRP, 5 s each; proven optimal for n = 10), in instance order of
    :func:`paper_instances`. The values ship with the package
    (``glns/data/reference_objectives.json``). Returns None for a size without references.
    """
    entry = _table("reference_objectives.json").get(_check_paper_problem(problem), {}).get(str(operator.index(n)))
    return None if entry is None else np.array(entry["ref_obj"], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Files


def _kind_from_name(path: Path, problem: str | None) -> str:
    if problem is not None:
        return _check_problem(problem)
    prefix = path.name.split("_", 1)[0].lower()
    if prefix not in PROBLEMS:
        raise ValueError(f"cannot tell the problem from the file name {path.name!r}; pass problem=")
    return prefix


def load_npz(path: str | os.PathLike, problem: str | None = None) -> tuple[list[Problem], np.ndarray | None]:
    """Read a synthetic set in the shared ``.npz`` format.

    The file holds ``coords`` (I, N, 2), for VRP also ``demands`` (I, N; the depot first, as in
    ``coords``) and ``capacity``, and
    optionally ``ref_obj`` (I,). The problem is taken from the file name prefix (``tsp_``,
    ``cvrp_``, ``ovrp_``) unless ``problem`` is given. Returns the instances (named
    ``<file stem>_<i>``) and ``ref_obj`` (or None).
    """
    path = Path(path)
    kind = _kind_from_name(path, problem)
    with np.load(path, allow_pickle=False) as data:
        coords = data["coords"]
        ref = np.array(data["ref_obj"], dtype=np.float64) if "ref_obj" in data.files else None
        if kind == "tsp":
            return [TSP(xy, name=f"{path.stem}_{i}") for i, xy in enumerate(coords)], ref
        demands, capacity = data["demands"], int(data["capacity"])
    cls = _CLASSES[kind]
    instances = [cls(xy, q, capacity, name=f"{path.stem}_{i}") for i, (xy, q) in enumerate(zip(coords, demands))]
    return instances, ref


def _looks_like_data_dir(d: Path) -> bool:
    return (d / "MANIFEST.csv").is_file() or (d / "synthetic").is_dir()


def shared_data_dir() -> Path | None:
    """The shared benchmark data folder, or None if there is none.

    ``$GLNS_DATA`` if set (None if it is not a directory); otherwise the first folder
    ``shared/data`` found next to the current working directory or one of its parents, then
    next to this file or one of its parents (in a checkout: ``<repo>/../shared/data``).
    """
    env = os.environ.get("GLNS_DATA")
    if env:
        return Path(env) if Path(env).is_dir() else None
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for folder in (start, *start.parents):
            candidate = folder / "shared" / "data"
            if candidate.is_dir() and _looks_like_data_dir(candidate):
                return candidate
    return None


def _vrplib():
    try:
        import vrplib
    except ImportError as exc:
        raise ImportError(_VRPLIB_MISSING) from exc
    return vrplib


def is_solomon(path: Path) -> bool:
    """A Solomon-format file (the Solomon and Gehring-Homberger sets): a name line, then
    VEHICLE and CUSTOMER blocks, no ``KEY : value`` header."""
    try:
        with open(path) as f:
            head = [f.readline() for _ in range(6)]
    except (OSError, UnicodeDecodeError):
        return False
    return any(line.strip().upper() == "VEHICLE" for line in head) and not any(":" in line for line in head)


def _parse(path: Path) -> dict[str, Any]:
    """vrplib's parse of an instance file; a malformed file is one ValueError naming it."""
    vrplib = _vrplib()
    try:
        if path.is_file() and is_solomon(path):
            inst = vrplib.read_instance(path, instance_format="solomon", compute_edge_weights=False)
            inst.setdefault("edge_weight_type", "EUC_2D")
            inst.setdefault("type", "VRPTW")
            inst.setdefault("dimension", len(inst["node_coord"]))
            return inst
        return vrplib.read_instance(path, compute_edge_weights=False)
    except OSError:
        raise  # missing file, a folder, no permission: the message names the path already
    except Exception as exc:  # noqa: BLE001 - vrplib raises ValueError, RuntimeError, IndexError, ...
        raise ValueError(f"{path.name}: not a readable TSPLIB/CVRPLIB instance ({exc})") from None


def _floats(inst: dict[str, Any], key: str, section: str, path: Path) -> np.ndarray:
    if inst.get(key) is None:
        raise ValueError(f"{path.name}: the file has no {section}")
    try:
        return np.asarray(inst[key], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path.name}: {section} is not a table of numbers ({exc})") from None


def _geometry(inst: dict[str, Any], path: Path, rounding: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(coordinates, explicit matrix): the matrix for ``EXPLICIT`` (as given, whatever the
    rounding) and for ``CEIL_2D`` under "nint" (every Euclidean distance rounded up, the
    library's convention for that type), else None (distances then follow from the coordinates
    and the rounding, computed on demand)."""
    kind = str(inst.get("edge_weight_type", "")).strip().upper()
    coords = _floats(inst, "node_coord", "NODE_COORD_SECTION", path) if "node_coord" in inst else None
    if kind == "EXPLICIT":
        return coords, _floats(inst, "edge_weight", "EDGE_WEIGHT_SECTION", path)
    if kind not in ("EUC_2D", "CEIL_2D"):
        raise ValueError(f"{path.name}: unsupported EDGE_WEIGHT_TYPE {kind or 'missing'!r}; "
                         "glns reads EUC_2D, CEIL_2D and EXPLICIT")
    if coords is None:
        raise ValueError(f"{path.name}: the file has no NODE_COORD_SECTION")
    if kind == "CEIL_2D" and rounding == "nint":
        return coords, np.ceil(euclidean_distances(coords))
    return coords, None


def read(path: str | os.PathLike, rounding: Literal["nint", "exact", "dimacs"] | None = None,
         problem: str | None = None) -> Problem:
    """Read a TSPLIB ``.tsp``, CVRPLIB ``.vrp``, VRPLIB VRPTW or Solomon ``.txt`` file.

    Needs the optional ``vrplib``. Node ``k`` of the instance is node ``k + 1`` of the file,
    so the depot (file node 1, the only depot allowed) is node 0.

    A VRPTW file gives ``VEHICLES`` (the fleet), ``TIME_WINDOW_SECTION`` and ``SERVICE_TIME``
    (one for every customer) or ``SERVICE_TIME_SECTION``; a Solomon file (as published for the
    Solomon and Gehring-Homberger sets) has the same data in its columns. The depot's window is
    the planning horizon; its service time is 0.

    Parameters
    ----------
    path : str or os.PathLike
        The instance file.
    rounding : {"nint", "exact", "dimacs"} or None, optional
        ``"nint"`` (the default for TSPLIB and CVRPLIB files): the library convention, so
        costs compare to the published best-known values: ``nint(d) = floor(d + 0.5)`` per
        edge for ``EUC_2D`` (computed on demand), ``ceil(d)`` for ``CEIL_2D`` (a dense
        matrix). ``"dimacs"`` (the default for time-window files): distances and travel times
        truncated to one decimal, as the DIMACS challenge, the Gehring-Homberger best-known
        values and PyVRP use. ``"exact"``: the unrounded Euclidean distances. ``EXPLICIT``
        matrices are used as given either way.
    problem : {"tsp", "cvrp", "ovrp", "vrptw"} or None, optional
        ``"tsp"``, ``"cvrp"``, ``"ovrp"`` or ``"vrptw"``; by default TSP for ``TYPE:
        TSP``/``ATSP``, CVRP for ``TYPE: CVRP`` and VRPTW for ``TYPE: VRPTW`` and Solomon-format
        files. Use ``"ovrp"`` to read a CVRPLIB file as an open VRP, ``"cvrp"`` to read a
        time-window file without its windows.

    Returns
    -------
    Problem
        A :class:`TSP`, :class:`CVRP`, :class:`OVRP` or :class:`VRPTW` instance, named after
        the file's ``NAME`` (or the file name).

    Raises
    ------
    OSError
        When the file cannot be opened.
    ValueError
        For an invalid rounding, a malformed file, a DIMENSION that does not match the data,
        an unsupported edge weight type or file type, a CVRP file read as a TSP or a TSP file
        read as a VRP.
    InvalidInstanceError
        For invalid data (a ValueError too).
    ImportError
        If vrplib is not installed.

    Notes
    -----
    Every error names the file.
    """
    if rounding is not None and rounding not in _ROUNDINGS:
        raise ValueError(f"rounding must be one of {_ROUNDINGS}, got {rounding!r}")
    path = Path(path)
    inst = _parse(path)
    kind = _check_problem(problem) if problem is not None else _kind_from_type(inst, path)
    if rounding is None:
        rounding = "dimacs" if "time_window" in inst else "nint"
    coords, dist = _geometry(inst, path, rounding)
    size = (dist if dist is not None else coords).shape[0]
    if inst.get("dimension") is not None and inst["dimension"] != size:
        raise ValueError(f"{path.name}: DIMENSION is {inst['dimension']} but the file has data "
                         f"for {size} node(s)")
    name = str(inst.get("name") or path.stem)
    try:
        if kind == "tsp":
            if "demand" in inst:
                # the depot would become a city and the demands would be dropped without a word
                raise ValueError(f"{path.name}: a VRP file (it has a DEMAND_SECTION); "
                                 "read it as 'cvrp' or 'ovrp', not 'tsp'")
            return TSP(coords, distances=dist, name=name, rounding=rounding)
        if "demand" not in inst or "capacity" not in inst:
            raise ValueError(f"{path.name}: reading it as {kind.upper()} needs a DEMAND_SECTION "
                             "and a CAPACITY (for a TSP file use 'tsp')")
        depots = np.asarray(inst.get("depot", [0])).ravel()
        if depots.tolist() != [0]:
            raise ValueError(f"{path.name}: the depot must be node 1 (only), got {(depots + 1).tolist()}")
        if kind == "vrptw":
            return _vrptw(inst, path, coords, dist, name, rounding)
        return _CLASSES[kind](coords, inst["demand"], inst["capacity"], distances=dist, name=name,
                              rounding=rounding)
    except InvalidInstanceError as exc:
        raise InvalidInstanceError(f"{path.name}: {exc}") from None


def _vrptw(inst: dict[str, Any], path: Path, coords: Any, dist: Any, name: str,
           rounding: str) -> VRPTW:
    """The VRPTW of a parsed file (time windows, service times, the fleet)."""
    if "time_window" not in inst:
        raise ValueError(f"{path.name}: reading it as VRPTW needs a TIME_WINDOW_SECTION")
    n = (dist if dist is not None else coords).shape[0]
    service = np.asarray(inst.get("service_time", 0.0), dtype=np.float64)
    if service.ndim == 0:       # one SERVICE_TIME for every customer
        service = np.full(n, float(service))
    service = np.array(service, dtype=np.float64)
    if service.shape == (n,):
        service[0] = 0.0        # the depot serves nobody (VRPLIB files may list it)
    vehicles = inst.get("vehicles")
    return VRPTW(coords, inst["demand"], inst["capacity"], inst["time_window"], service,
                 vehicles=None if vehicles is None else int(vehicles), distances=dist, name=name,
                 rounding=rounding)


def _kind_from_type(inst: dict[str, Any], path: Path) -> str:
    ftype = str(inst.get("type", "")).strip().upper()
    if ftype in ("TSP", "ATSP"):
        return "tsp"
    if ftype == "CVRP":
        return "cvrp"
    if ftype == "VRPTW" or (ftype == "" and "time_window" in inst):
        return "vrptw"
    if ftype == "":
        return "cvrp" if "demand" in inst else "tsp"
    raise ValueError(f"{path.name}: unsupported TYPE {ftype!r}; glns reads TSP, ATSP, CVRP and VRPTW files")


def read_solution(path: str | os.PathLike) -> tuple[list[int] | list[list[int]], float | None]:
    """Read a CVRPLIB ``.sol`` or TSPLIB ``.opt.tour`` file (needs the optional ``vrplib``).

    Parameters
    ----------
    path : str or os.PathLike
        The solution file: a ``.sol`` file, or a tour file (one with a ``TOUR_SECTION``).

    Returns
    -------
    solution : list of list of int or list of int
        ``.sol``: the routes, lists of customer ids, which are the instance's node ids as
        :func:`read` numbers them (depot 0, customer ``c`` is file node ``c + 1``). A TSP tour
        written as a ``.sol`` by :func:`write_solution` reads back as one route without city
        0: the tour is ``[0, *routes[0]]``. ``.opt.tour``: the tour as a 0-based permutation
        (a TSP solution).
    cost : float or None
        ``.sol``: the stated ``Cost`` (None if absent); ``.opt.tour``: None.
    """
    path = Path(path)
    vrplib = _vrplib()
    text = path.read_text(errors="replace")   # (some published .sol headers are Latin-1)
    if "TOUR_SECTION" in text:
        return _read_tour(vrplib, path, text), None
    try:
        sol = vrplib.read_solution(path)
    except UnicodeDecodeError:
        sol = _routes_of_text(text)
    cost = sol.get("cost")
    return [[int(c) for c in route] for route in sol["routes"]], None if cost is None else float(cost)


def _routes_of_text(text: str) -> dict[str, Any]:
    """The routes and cost of a ``.sol`` text, as vrplib reads them: ``Route #k: c1 c2 ...``
    lines (or ``Route k : ...``) and a ``Cost`` line."""
    routes, cost = [], None
    for line in text.splitlines():
        head, _, rest = line.partition(":")
        if head.strip().lower().startswith("route"):
            routes.append([int(tok) for tok in rest.split()])
        elif head.strip().lower().startswith("cost") and rest.strip():
            cost = float(rest.split()[0])
    return {"routes": routes, "cost": cost}


def _read_tour(vrplib, path: Path, text: str) -> list[int]:
    # vrplib reads the header but drops the first column of every section row, which for a
    # TOUR_SECTION is the tour itself; so the node ids are read here: 1-based, up to -1 / EOF.
    header = vrplib.read_instance(path, compute_edge_weights=False)
    tour: list[int] = []
    for token in text.split("TOUR_SECTION", 1)[1].split():
        if token in ("-1", "EOF"):
            break
        tour.append(int(token) - 1)
    dim = int(header.get("dimension", len(tour)))
    if sorted(tour) != list(range(dim)):
        raise ValueError(f"{path.name}: the tour is not a permutation of nodes 1..{dim}")
    return tour


def best_known(name: str) -> float | None:
    """Best-known objective of a TSPLIB / CVRPLIB instance (``"eil51"``, ``"A-n32-k5"``), with
    the libraries' ``nint`` convention; None if the name is not in the shipped table.

    The table (``glns/data/best_known.json``) also says per instance whether the value is proven
    optimal (true / false / null = sources disagree) and which set it belongs to.
    """
    entry = _table("best_known.json")["instances"].get(name)
    return None if entry is None else float(entry["best_known"])

"""Benchmark suites: groups of instances with their reference objectives.

Two suites:

- ``synthetic``: the paper's test sets (64 instances per size; TSP, CVRP, OVRP), built by
  :func:`glns.datasets.paper_instances` -- bit-identical to ``shared/data/synthetic`` -- with the
  per-instance reference objectives shipped in the package (LKH-3 for TSP; best of OR-Tools and
  PyVRP at 5 s for CVRP/OVRP). Needs no files.
- ``library``: TSPLIB and CVRPLIB files (``shared/data/tsplib``, ``shared/data/cvrplib/<set>``)
  read with vrplib, grouped by set as in the paper's appendix, with the best-known values of
  :func:`glns.datasets.best_known`; set X also takes the n > 298 files of ``shared/data/large/X``.
  The large folder adds the groups ``xxl`` (``large/XXL``, CVRP) and ``tsp-large``
  (``large/TSP``), whose best-known values come from ``large/INDEX.csv``. The ``vrptw``
  library is the Gehring-Homberger files of ``vrptw/`` (groups ``vrptw-gh200``, ``-gh400``,
  ``-gh1000``), read with DIMACS rounding and the fleet of the file; gh1000's best-known
  distances come from its .sol files (gh200/gh400's minimise vehicles first: no gap there).
  Needs the data folder.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from glns import datasets
from glns.benchmark.instances import file_locator, header_field, paper_locator, read_file
from glns.problems import Problem

__all__ = ["Group", "synthetic_groups", "library_groups", "find_library", "large_best_known",
           "every_kth", "mean_route_length", "CVRPLIB_SETS", "LIBRARIES", "SYNTHETIC_SIZES"]

SYNTHETIC_SIZES = (10, 20, 50, 100, 200)
#: CVRPLIB sets in the paper's appendix order
CVRPLIB_SETS = ("A", "B", "E", "F", "M", "P", "X")
#: file libraries of the library suite: the paper's two, and two groups of the large folder
LIBRARIES = ("tsplib", "cvrplib", "xxl", "tsp-large", "vrptw")
#: the VRPTW library's groups: subfolder of ``vrptw/`` and its files' pattern
VRPTW_GROUPS = (("gh200", "*.txt"), ("gh400", "*.txt"), ("gh1000", "*.vrp"))
#: large-folder library -> (its subfolder of ``large/``, group name, problem)
_LARGE = {"xxl": ("XXL", "xxl", "cvrp"), "tsp-large": ("TSP", "tsp-large", "tsp")}


@dataclass
class Group:
    """Instances benchmarked and reported together (one column of a table).

    name: e.g. "cvrp100" or "cvrplib-A". problem: "tsp", "cvrp" or "ovrp". instances, locators
    and references are parallel lists (reference None where the instance has none).
    reference_label: what the references are. positions: each instance's place in the whole
    group it was selected from (``--every``), which picks its seed; None: 0, 1, 2, ...
    """

    suite: str
    name: str
    problem: str
    instances: list[Problem]
    locators: list[str]
    references: list[float | None]
    reference_label: str
    size: int | None = None
    notes: list[str] = field(default_factory=list)
    positions: list[int] | None = None

    def __len__(self) -> int:
        return len(self.instances)

    def seed_positions(self) -> list[int]:
        """The index each instance's seed is drawn with (``run_seed(seed, index)``): its
        position in the whole group, so a file keeps its seed whichever ``--every`` picks it."""
        return list(self.positions) if self.positions is not None else list(range(len(self)))


_SYNTHETIC_REFERENCE = {"tsp": "LKH-3 (elkai)", "cvrp": "best of OR-Tools and PyVRP, 5 s",
                        "ovrp": "best of OR-Tools and PyVRP, 5 s"}


def synthetic_groups(problems: Sequence[str], sizes: Sequence[int] = SYNTHETIC_SIZES,
                     count: int | None = None) -> list[Group]:
    """One group per (problem, size) of the paper's test sets, in that order.

    count: the first ``count`` instances of each set (default: all 64). Raises ValueError for an
    unknown problem or a size the test split does not have.
    """
    if count is not None and count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    groups = []
    for problem in problems:
        for n in sizes:
            instances = datasets.paper_instances(problem, n)[:count]
            refs = datasets.reference_objectives(problem, n)
            references = [float(refs[i]) if refs is not None else None for i in range(len(instances))]
            groups.append(Group("synthetic", f"{problem}{n}", problem, instances,
                                [paper_locator(problem, n, i) for i in range(len(instances))],
                                references, _SYNTHETIC_REFERENCE[problem], size=n))
    return groups


def find_library(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder holding ``tsplib/``, ``cvrplib/`` and/or ``large/``: ``data_dir`` if given,
    else :func:`glns.datasets.shared_data_dir`. Raises FileNotFoundError saying how to provide it."""
    base = Path(data_dir) if data_dir is not None else datasets.shared_data_dir()
    if base is None or not any((base / d).is_dir() for d in ("tsplib", "cvrplib", "large", "vrptw")):
        where = f"{data_dir}" if data_dir is not None else "../shared/data (or $GLNS_DATA)"
        raise FileNotFoundError(
            f"benchmark files not found in {where}: the library suite needs a folder with tsplib/ "
            "and cvrplib/<set>/ (TSPLIB .tsp, CVRPLIB .vrp files; large/ for xxl, tsp-large and "
            "set X beyond n = 298); pass --data DIR or set GLNS_DATA")
    return base


def large_best_known(base: Path) -> dict[str, float]:
    """name -> best-known value of the files in ``base/large`` (its INDEX.csv: the cost stated in
    each file's .sol, nint or, for CEIL_2D files, ceil distances); {} when there is no index."""
    index = base / "large" / "INDEX.csv"
    if not index.is_file():
        return {}
    with open(index, encoding="utf-8", newline="") as fh:
        return {row["name"]: float(row["best_known"]) for row in csv.DictReader(fh) if row.get("best_known")}


def every_kth(files: Sequence[Path], k: int | None) -> list[tuple[int, Path]]:
    """Files sorted by size (DIMENSION, then name), and of those the ones at positions 0, k, 2k,
    ... (all of them for k None or 1), with their positions: "every fourth instance by size" is
    k = 4."""
    if k is not None and k < 1:
        raise ValueError(f"every must be at least 1, got {k}")
    ordered = sorted(files, key=lambda p: (_dimension(p), p.name))
    return list(enumerate(ordered))[::k or 1]


def mean_route_length(name: str) -> float | None:
    """n / k from a CVRPLIB file name such as X-n101-k25 (nodes over the fleet's size: about
    the customers per route), or None when the name has no -n and -k parts."""
    match = re.search(r"-n(\d+)-k(\d+)", name)
    return int(match[1]) / int(match[2]) if match and int(match[2]) > 0 else None


def _file_group(name: str, problem: str, files: list[Path], rounding: str, max_nodes: int | None,
                count: int | None, every: int | None = None,
                extra_refs: dict[str, float] | None = None,
                short_routes: float | None = None) -> Group | None:
    """A group of the files (smallest first): at most max_nodes nodes (and, with short_routes,
    only the files whose names give n / k below it), then every ``every``-th of those, then the
    first ``count``; references from the shipped table, else extra_refs."""
    small = [p for p in files if (max_nodes is None or _dimension(p) <= max_nodes)
             and (short_routes is None or (mean_route_length(p.name) or short_routes) < short_routes)]
    picked = every_kth(small, every)[:count]
    if not picked:
        return None
    chosen = [path for _, path in picked]
    instances, locators, refs = [], [], []
    for path in chosen:
        instances.append(read_file(path, rounding, problem))
        locators.append(file_locator(path, rounding, problem))
        stem = path.name.split(".")[0]
        ref = datasets.best_known(stem)
        refs.append(ref if ref is not None else (extra_refs or {}).get(stem))
    label = f"best-known ({'DIMACS' if rounding == 'dimacs' else rounding} distances)"
    group = Group("library", name, problem, instances, locators, refs, label,
                  positions=[i for i, _ in picked] if every not in (None, 1) else None)
    ceil = [p.stem for p in chosen if (header_field(p, "EDGE_WEIGHT_TYPE") or "").upper() == "CEIL_2D"]
    if ceil and rounding == "nint":
        group.notes.append(f"CEIL_2D file(s) {', '.join(ceil)}: distances rounded up, as their "
                           "best-known values are")
    missing = [p.stem for p, r in zip(chosen, refs) if r is None]
    if missing:
        group.notes.append(f"no best-known value for {len(missing)} file(s) ({', '.join(missing[:5])}"
                           f"{', ...' if len(missing) > 5 else ''}): no gap for them")
    if rounding == "exact":
        group.notes.append("raw Euclidean distances; the best-known values use nint rounding, so "
                           "gaps are only indicative")
    return group


def _dimension(path: Path) -> int:
    # DIMENSION from the header, without parsing the whole file; a Solomon file has none: its
    # customer table's rows
    value = header_field(path, "DIMENSION")
    if value is None and datasets.is_solomon(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            return sum(1 for line in fh if line.split() and line.split()[0].isdigit()
                       and len(line.split()) == 7)
    if value is None:
        raise ValueError(f"{path}: no DIMENSION in the header")
    return int(value)


def _sol_costs(folder: Path) -> dict[str, float]:
    """name -> the Cost line of each .sol file in `folder` (distance-only best-known values)."""
    out = {}
    for sol in folder.glob("*.sol"):
        for line in sol.read_text(errors="replace").splitlines():
            if line.lower().startswith("cost") and len(line.split()) > 1:
                out[sol.stem] = float(line.split()[1])
    return out


def library_groups(which: Sequence[str] = ("tsplib", "cvrplib"), data_dir: str | os.PathLike | None = None,
                   sets: Sequence[str] = CVRPLIB_SETS, rounding: str = "nint",
                   max_nodes: int | None = None, count: int | None = None,
                   every: int | None = None, short_routes: float | None = None) -> list[Group]:
    """Groups of TSPLIB files (one group), CVRPLIB files (one group per set) and the large
    folder's XXL and TSP files (one group each).

    which: any of :data:`LIBRARIES`. sets: CVRPLIB sets to include; set X is ``cvrplib/X`` and
    ``large/X`` together (a note says so when ``large/X`` is missing). rounding: "nint" (the
    libraries' convention; gaps to the best-known values are exact) or "exact" (raw
    coordinates). max_nodes: skip files with a larger DIMENSION. every: of the files left,
    sorted by size, those at positions 0, every, 2 every, ... count: at most this many files
    per group (smallest first). short_routes: only the files whose names give n / k (nodes
    over vehicles, e.g. X-n101-k25) below it, routes of fewer customers on average; the
    others, and files without n and k in their names, are left out. Raises FileNotFoundError when the data folder (or the large
    folder a library needs) is missing and ValueError for unknown names.
    """
    unknown = [w for w in which if w not in LIBRARIES]
    if unknown:
        raise ValueError(f"unknown benchmark library {unknown[0]!r}; expected one of {', '.join(LIBRARIES)}")
    bad_sets = [s for s in sets if s not in CVRPLIB_SETS]
    if bad_sets:
        raise ValueError(f"unknown CVRPLIB set {bad_sets[0]!r}; sets are {', '.join(CVRPLIB_SETS)}")
    if rounding not in ("nint", "exact"):
        raise ValueError(f"rounding must be 'nint' or 'exact', got {rounding!r}")
    base = find_library(data_dir)
    large = base / "large"
    index = large_best_known(base)
    suffix = "" if rounding == "nint" else "-exact"
    groups: list[Group | None] = []

    def add(name: str, problem: str, files: list[Path], notes: Sequence[str] = ()) -> None:
        group = _file_group(f"{name}{suffix}", problem, files, rounding, max_nodes, count, every, index,
                            short_routes)
        if group is not None:
            group.notes[:0] = notes
            if short_routes is not None:
                group.notes.insert(0, f"files whose names give n / k < {short_routes:g} (short routes)")
            if every not in (None, 1):
                group.notes.insert(0, f"every {every}-th file by size (positions 0, {every}, "
                                      f"{2 * every}, ... of the files sorted by DIMENSION, name)")
        groups.append(group)

    if "tsplib" in which:
        add("tsplib", "tsp", list((base / "tsplib").glob("*.tsp")))
    if "vrptw" in which and rounding == "nint":     # (its own rounding, DIMACS, whatever is asked)
        for sub, pattern in VRPTW_GROUPS:
            folder = base / "vrptw" / sub
            if not folder.is_dir():
                raise FileNotFoundError(f"{folder} not found: --libraries vrptw needs the "
                                        "Gehring-Homberger files (shared/data/vrptw)")
            distance_only = sub == "gh1000"
            group = _file_group(f"vrptw-{sub}", "vrptw", list(folder.glob(pattern)), "dimacs",
                                max_nodes, count, every, _sol_costs(folder) if distance_only else {},
                                short_routes)
            if group is not None:
                if not distance_only:
                    group.references = [None] * len(group.references)
                    group.notes[:] = ["the published best solutions of these files minimise "
                                      "vehicles first: no gap; compare the solvers' distances"]
                group.notes.append("DIMACS rounding (distances and times truncated to one "
                                   "decimal), the fleet of each file")
                if every not in (None, 1):
                    group.notes.insert(0, f"every {every}-th file by size (positions 0, {every}, "
                                          f"{2 * every}, ... of the files sorted by DIMENSION, name)")
            groups.append(group)
    if "cvrplib" in which:
        for s in sets:
            files, notes = list((base / "cvrplib" / s).glob("*.vrp")), []
            if s == "X":
                if (large / "X").is_dir():
                    files += list((large / "X").glob("*.vrp"))
                else:
                    notes.append(f"{large / 'X'} not found: set X has only the files of cvrplib/X "
                                 "(n <= 298 in the shared data)")
            add(f"cvrplib-{s}", "cvrp", files, notes)
    for lib in (w for w in which if w in _LARGE):
        folder, name, problem = _LARGE[lib]
        if not (large / folder).is_dir():
            raise FileNotFoundError(f"{large / folder} not found: --libraries {lib} needs the large "
                                    "benchmark files (shared/data/large, see its README.md)")
        if not index:
            raise FileNotFoundError(f"{large / 'INDEX.csv'} not found: it holds the best-known "
                                    f"values of the {lib} files")
        add(name, problem, list((large / folder).glob("*.vrp")))
    found = [g for g in groups if g is not None]
    if not found:
        raise FileNotFoundError(f"no benchmark files matched in {base} (which={list(which)}, "
                                f"sets={list(sets)}, max_nodes={max_nodes})")
    return found

"""Benchmark suites: groups of instances with their reference objectives.

Two suites:

- ``synthetic``: the paper's test sets (64 instances per size; TSP, CVRP, OVRP), built by
  :func:`glns.datasets.paper_instances` -- bit-identical to ``shared/data/synthetic`` -- with the
  per-instance reference objectives shipped in the package (LKH-3 for TSP; best of OR-Tools and
  PyVRP at 5 s for CVRP/OVRP). Needs no files.
- ``library``: TSPLIB and CVRPLIB files (``shared/data/tsplib``, ``shared/data/cvrplib/<set>``)
  read with vrplib, grouped by set as in the paper's appendix, with the best-known values of
  :func:`glns.datasets.best_known`. Needs the data folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from glns import datasets
from glns.benchmark.instances import file_locator, paper_locator
from glns.problems import Problem

__all__ = ["Group", "synthetic_groups", "library_groups", "find_library", "CVRPLIB_SETS",
           "SYNTHETIC_SIZES"]

SYNTHETIC_SIZES = (10, 20, 50, 100, 200)
#: CVRPLIB sets in the paper's appendix order
CVRPLIB_SETS = ("A", "B", "E", "F", "M", "P", "X")


@dataclass
class Group:
    """Instances benchmarked and reported together (one column of a table).

    name: e.g. "cvrp100" or "cvrplib-A". problem: "tsp", "cvrp" or "ovrp". instances, locators
    and references are parallel lists (reference None where the instance has none).
    reference_label: what the references are.
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

    def __len__(self) -> int:
        return len(self.instances)


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
    """The folder holding ``tsplib/`` and ``cvrplib/``: ``data_dir`` if given, else
    :func:`glns.datasets.shared_data_dir`. Raises FileNotFoundError saying how to provide it."""
    base = Path(data_dir) if data_dir is not None else datasets.shared_data_dir()
    if base is None or not ((base / "tsplib").is_dir() or (base / "cvrplib").is_dir()):
        where = f"{data_dir}" if data_dir is not None else "../shared/data (or $GLNS_DATA)"
        raise FileNotFoundError(
            f"benchmark files not found in {where}: the library suite needs a folder with tsplib/ "
            "and cvrplib/<set>/ (TSPLIB .tsp, CVRPLIB .vrp files); pass --data DIR or set GLNS_DATA")
    return base


def _file_group(name: str, problem: str, files: list[Path], rounding: str,
                max_nodes: int | None, count: int | None) -> Group | None:
    instances, locators, refs = [], [], []
    for path in sorted(files, key=lambda p: (_dimension(p), p.name)):
        if max_nodes is not None and _dimension(path) > max_nodes:
            continue
        instances.append(datasets.read(path, rounding=rounding, problem=problem))  # type: ignore[arg-type]
        locators.append(file_locator(path, rounding, problem))
        refs.append(datasets.best_known(path.name.split(".")[0]))
        if count is not None and len(instances) >= count:
            break
    if not instances:
        return None
    label = "best-known (nint distances)"
    group = Group("library", name, problem, instances, locators, refs, label)
    if rounding == "exact":
        group.notes.append("raw Euclidean distances; the best-known values use nint rounding, so "
                           "gaps are only indicative")
    return group


def _dimension(path: Path) -> int:
    # DIMENSION from the header, without parsing the whole file; else from the name (A-n32-k5)
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key.strip().upper() == "DIMENSION":
                return int(value.strip())
            if "SECTION" in line:
                break
    raise ValueError(f"{path}: no DIMENSION in the header")


def library_groups(which: Sequence[str] = ("tsplib", "cvrplib"), data_dir: str | os.PathLike | None = None,
                   sets: Sequence[str] = CVRPLIB_SETS, rounding: str = "nint",
                   max_nodes: int | None = None, count: int | None = None) -> list[Group]:
    """Groups of TSPLIB files (one group) and CVRPLIB files (one group per set).

    which: "tsplib" and/or "cvrplib". sets: CVRPLIB sets to include. rounding: "nint" (the
    libraries' convention; gaps to the best-known values are exact) or "exact" (raw coordinates).
    max_nodes: skip files with a larger DIMENSION. count: at most this many files per group
    (smallest first). Raises FileNotFoundError when the data folder is missing and ValueError
    for unknown names.
    """
    unknown = [w for w in which if w not in ("tsplib", "cvrplib")]
    if unknown:
        raise ValueError(f"unknown benchmark library {unknown[0]!r}; expected tsplib or cvrplib")
    bad_sets = [s for s in sets if s not in CVRPLIB_SETS]
    if bad_sets:
        raise ValueError(f"unknown CVRPLIB set {bad_sets[0]!r}; sets are {', '.join(CVRPLIB_SETS)}")
    if rounding not in ("nint", "exact"):
        raise ValueError(f"rounding must be 'nint' or 'exact', got {rounding!r}")
    base = find_library(data_dir)
    suffix = "" if rounding == "nint" else "-exact"
    groups: list[Group | None] = []
    if "tsplib" in which:
        groups.append(_file_group(f"tsplib{suffix}", "tsp", list((base / "tsplib").glob("*.tsp")),
                                  rounding, max_nodes, count))
    if "cvrplib" in which:
        for s in sets:
            groups.append(_file_group(f"cvrplib-{s}{suffix}", "cvrp", list((base / "cvrplib" / s).glob("*.vrp")),
                                      rounding, max_nodes, count))
    found = [g for g in groups if g is not None]
    if not found:
        raise FileNotFoundError(f"no benchmark files matched in {base} (which={list(which)}, "
                                f"sets={list(sets)}, max_nodes={max_nodes})")
    return found

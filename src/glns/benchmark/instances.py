"""Instance locators: short strings that name a benchmark instance and rebuild it anywhere.

A benchmark result records, for every run, where its instance came from, so a plot or a re-run
can rebuild exactly that instance:

- ``paper:<problem>:<n>:<index>`` -- instance ``index`` of the paper's test set of size ``n``
  (:func:`glns.datasets.paper_instances`, bit-identical to the shared ``synthetic/`` files).
- ``file:<rounding>:<problem>:<path>`` -- a TSPLIB / CVRPLIB file read by :func:`read_file`
  (:func:`glns.datasets.read`, and CEIL_2D files) with that rounding (``nint`` or ``exact``) and
  problem.
"""

from __future__ import annotations

import functools
from pathlib import Path

from glns import datasets
from glns.problems import Problem

__all__ = ["paper_locator", "file_locator", "load_instance", "read_file", "header_field"]


def paper_locator(problem: str, n: int, index: int) -> str:
    """The locator of instance ``index`` of the paper's ``problem`` test set of size ``n``."""
    return f"paper:{problem}:{int(n)}:{int(index)}"


def file_locator(path: str | Path, rounding: str, problem: str) -> str:
    """The locator of a benchmark file read with ``rounding`` as ``problem``."""
    return f"file:{rounding}:{problem}:{Path(path).resolve()}"


def header_field(path: str | Path, key: str) -> str | None:
    """The value of ``key`` (e.g. "DIMENSION") in a TSPLIB/VRPLIB file's header, read without
    parsing the whole file; None when the header (everything before the first SECTION) has none."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            name, _, value = line.partition(":")
            if name.strip().upper() == key:
                return value.strip()
            if "SECTION" in line:
                break
    return None


def read_file(path: str | Path, rounding: str = "nint", problem: str | None = None) -> Problem:
    """An instance file as :func:`glns.datasets.read` reads it (EUC_2D, CEIL_2D, EXPLICIT)."""
    return datasets.read(path, rounding=rounding, problem=problem)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=16)
def _paper_set(problem: str, n: int) -> list[Problem]:
    return datasets.paper_instances(problem, n)


def load_instance(locator: str) -> Problem:
    """Rebuild the instance a locator names; ValueError for a malformed locator."""
    scheme, _, rest = str(locator).partition(":")
    if scheme == "paper":
        parts = rest.split(":")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise ValueError(f"bad instance locator {locator!r}; expected paper:<problem>:<n>:<index>")
        problem, n, index = parts[0], int(parts[1]), int(parts[2])
        instances = _paper_set(problem, n)
        if index >= len(instances):
            raise ValueError(f"{locator!r}: the set has {len(instances)} instances")
        return instances[index]
    if scheme == "file":
        parts = rest.split(":", 2)
        if len(parts) != 3:
            raise ValueError(f"bad instance locator {locator!r}; expected file:<rounding>:<problem>:<path>")
        rounding, problem, path = parts
        return read_file(path, rounding, problem)
    raise ValueError(f"bad instance locator {locator!r}; expected paper:... or file:...")

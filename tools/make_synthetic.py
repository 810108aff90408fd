"""Write the paper's synthetic sets as ``.npz`` files, or verify existing files against them.

The files use the shared format (see ``glns.datasets.load_npz``): ``coords`` (I, N, 2) float64;
VRP also ``demands`` (I, N+1) int64 and ``capacity``; test files also ``ref_obj``,
``ref_solver`` and ``ref_note`` from the table shipped with glns (where it has the size).

Usage::

    python tools/make_synthetic.py OUT_DIR            # the stored sets: train, test N <= 200
    python tools/make_synthetic.py OUT_DIR --all      # also validation sets and TSP 500/1000
    python tools/make_synthetic.py --verify DIR       # compare every *.npz in DIR, exit 1 on a mismatch
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from glns import datasets

FILE_RE = re.compile(r"(tsp|cvrp|ovrp)_(train|validation|test)(\d+)\.npz")


def set_arrays(problem: str, n: int, split: str) -> dict[str, np.ndarray]:
    """The arrays of one paper set, in the shared ``.npz`` layout."""
    # the drawn arrays themselves: paper_instances would build a Problem (distance matrix,
    # neighbour lists) per instance only to have its coordinates stacked again (TSP1000: 0.5 GB)
    coords, demands = datasets._paper_set(problem, n, split)
    arrays = {"coords": coords}
    if demands is not None:
        arrays["demands"] = demands
        arrays["capacity"] = np.array(datasets.PAPER_CAPACITY, dtype=np.int64)
    ref = datasets._table("reference_objectives.json").get(problem, {}).get(str(n))
    if split == "test" and ref is not None:
        arrays["ref_obj"] = np.array(ref["ref_obj"], dtype=np.float64)
        width = max(16, *map(len, ref["ref_solver"]))  # the shared files use <U16
        arrays["ref_solver"] = np.array(ref["ref_solver"], dtype=f"<U{width}")
        arrays["ref_note"] = np.array(ref["ref_note"])
    return arrays


def stored_sets(include_all: bool) -> list[tuple[str, str, int]]:
    """(problem, split, n) of the sets to write: by default the ones the shared data stores."""
    out = []
    for problem, plan in datasets.PAPER_PLAN.items():
        for split, sizes in plan:
            for n, _ in sizes:
                if include_all or (split != "validation" and n <= 200):
                    out.append((problem, split, n))
    return out


def write(out_dir: Path, include_all: bool) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for problem, split, n in stored_sets(include_all):
        path = out_dir / f"{problem}_{split}{n}.npz"
        np.savez(path, **set_arrays(problem, n, split))
        print(f"wrote {path}")


def verify(folder: Path) -> bool:
    """Compare every recognised ``.npz`` in ``folder`` with the regenerated arrays."""
    files = sorted(p for p in folder.glob("*.npz") if FILE_RE.fullmatch(p.name))
    if not files:
        print(f"no tsp/cvrp/ovrp_<split><N>.npz files in {folder}")
        return False
    ok = True
    for path in files:
        problem, split, n = FILE_RE.fullmatch(path.name).groups()
        expected = set_arrays(problem, int(n), split)
        with np.load(path, allow_pickle=False) as data:
            bad = [k for k in data.files if k in expected and not np.array_equal(data[k], expected[k])]
            missing = [k for k in ("coords", "demands", "capacity") if k in expected and k not in data.files]
        ok &= not (bad or missing)
        status = "OK" if not (bad or missing) else f"MISMATCH {bad} missing {missing}"
        print(f"{path.name}: {status}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, help="output folder")
    parser.add_argument("--all", action="store_true", help="also write validation sets and TSP 500/1000")
    parser.add_argument("--verify", type=Path, metavar="DIR", help="verify the .npz files in DIR")
    args = parser.parse_args(argv)
    if args.verify is None and args.out is None:
        parser.error("give an output folder or --verify DIR")
    if args.out is not None:
        write(args.out, args.all)
    return 0 if args.verify is None or verify(args.verify) else 1


if __name__ == "__main__":
    sys.exit(main())

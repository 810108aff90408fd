"""Build the two small tables shipped in ``src/glns/data`` from the shared benchmark data.

- ``reference_objectives.json``: problem -> test size -> ``ref_obj`` (64 floats, full
  precision), ``ref_solver`` (solver per instance) and ``ref_note``, from
  ``<data>/synthetic/{tsp,cvrp,ovrp}_test{N}.npz``.
- ``best_known.json``: instance name -> ``best_known``, ``is_optimal`` (true / false / null when
  the sources disagree) and ``set``, from ``<data>/MANIFEST.csv``.

Usage: ``python tools/make_reference_tables.py [--data DIR] [--out DIR]``. ``--data`` defaults
to ``$GLNS_DATA`` or ``<repo>/../shared/data``; ``--out`` to ``<repo>/src/glns/data``.
Needs only numpy (not an installed glns).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OPTIMAL = {"true": True, "false": False, "unknown": None}


def reference_table(synthetic: Path) -> dict:
    """problem -> size -> {ref_obj, ref_solver, ref_note} for every test file with ref_obj."""
    table: dict = {"_about": "Per-instance reference objectives of the paper's synthetic test sets "
                             "(glns.datasets.paper_instances order); extracted from the shared "
                             "synthetic/*_test*.npz files by tools/make_reference_tables.py."}
    files = sorted(synthetic.glob("*_test*.npz"), key=lambda p: _file_key(p.name))
    for path in files:
        problem, size = _file_key(path.name)
        with np.load(path, allow_pickle=False) as data:
            if "ref_obj" not in data.files:
                continue
            # json writes floats with repr(), which round-trips float64 exactly
            table.setdefault(problem, {})[str(size)] = {
                "ref_obj": [float(x) for x in data["ref_obj"]],
                "ref_solver": [str(s) for s in data["ref_solver"]],
                "ref_note": str(data["ref_note"]),
            }
    return table


def _file_key(name: str) -> tuple[str, int]:
    m = re.fullmatch(r"(tsp|cvrp|ovrp)_test(\d+)\.npz", name)
    if m is None:
        raise ValueError(f"unexpected file name {name}")
    return m.group(1), int(m.group(2))


def best_known_table(manifest: Path) -> dict:
    """name -> {best_known, is_optimal, set} for every MANIFEST row."""
    instances = {}
    with open(manifest, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            value = float(row["best_known"])
            instances[row["name"]] = {
                "best_known": int(value) if value.is_integer() else value,
                "is_optimal": OPTIMAL[row["is_optimal"].strip().lower()],
                "set": row["set"],
            }
    return {"_about": "Best-known objectives of TSPLIB/CVRPLIB instances (TSPLIB nint rounding); "
                      "is_optimal null = sources disagree. From the shared MANIFEST.csv by "
                      "tools/make_reference_tables.py.",
            "instances": instances}


def dumps(obj, indent: str = "") -> str:
    """JSON with one key per line, but lists and flat dicts on a single line (compact, diffable)."""
    if not isinstance(obj, dict) or not any(isinstance(v, (dict, list)) for v in obj.values()):
        return json.dumps(obj)  # floats via repr(): exact float64 round trip
    inner = indent + " "
    items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in obj.items()]
    return "{\n" + ",\n".join(items) + "\n" + indent + "}"


def default_data_dir() -> Path:
    env = os.environ.get("GLNS_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="shared data folder")
    parser.add_argument("--out", type=Path, default=REPO / "src" / "glns" / "data", help="output folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tables = {"reference_objectives.json": reference_table(args.data / "synthetic"),
              "best_known.json": best_known_table(args.data / "MANIFEST.csv")}
    for name, table in tables.items():
        (args.out / name).write_text(dumps(table) + "\n", encoding="utf-8")
        print(f"wrote {args.out / name}")


if __name__ == "__main__":
    main()

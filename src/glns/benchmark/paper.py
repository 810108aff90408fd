"""The paper's published figures (its main table and appendix), shown beside ours
(docs/benchmarks.md)."""

from __future__ import annotations

SIZES = (10, 20, 50, 100, 200)

#: problem -> row label -> mean objective over the 64 test instances per size (the main table)
MAIN_TABLE: dict[str, dict[str, tuple[float, ...]]] = {
    "tsp": {"paper: LKH-3": (2.833, 3.825, 5.717, 7.813, 10.665),
            "paper: G-LNS, 500 it.": (2.833, 3.826, 5.738, 7.899, 10.805),
            "paper: standard ALNS": (2.840, 3.960, 6.040, 8.192, 11.290)},
    "cvrp": {"paper: OR-Tools 5 s": (3.096, 4.606, 8.145, 14.106, 25.088),
             "paper: G-LNS, 500 it.": (3.141, 4.707, 8.250, 13.817, 24.774),
             "paper: standard ALNS": (3.172, 4.818, 8.492, 14.291, 25.674)},
    "ovrp": {"paper: OR-Tools": (2.2885, 3.4277, 5.6736, 8.8563, 15.1893),
             "paper: G-LNS, 500 it.": (2.2890, 3.4371, 5.7163, 8.8979, 14.8841)},
}

#: the paper's mean gap (%) of G-LNS per benchmark set (appendix, "Ours"); the paper's TSPLIB
#: table has 48 files and its set X is not limited to n <= 298 like the shipped one
LIBRARY_GAPS: dict[str, float] = {"tsplib": 2.8, "cvrplib-A": 7.9, "cvrplib-B": 8.7, "cvrplib-E": 7.9,
                                  "cvrplib-F": 15.9, "cvrplib-M": 15.1, "cvrplib-P": 8.1, "cvrplib-X": 11.2}


def main_table_rows(problems: list[str], sizes: list[int]) -> dict[str, dict[str, dict[str, float]]]:
    """The published rows as problem -> label -> group name ("cvrp100") -> value, for the
    sizes the paper has."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for p in problems:
        for label, values in MAIN_TABLE.get(p, {}).items():
            out.setdefault(p, {})[label] = {f"{p}{n}": values[SIZES.index(n)] for n in sizes if n in SIZES}
    return out


def library_rows(rounding: str = "nint") -> dict[str, dict[str, dict[str, float]]]:
    """The paper's per-set gaps as an extra column of the library table."""
    suffix = "" if rounding == "nint" else "-exact"
    return {"library": {"paper G-LNS (mean gap)": {f"{k}{suffix}": v for k, v in LIBRARY_GAPS.items()}}}

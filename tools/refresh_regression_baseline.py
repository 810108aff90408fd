"""Refresh the stored baseline of the CI regression checks (tests/regression/baseline.json).

    python tools/refresh_regression_baseline.py            # speed ratios and objectives
    python tools/refresh_regression_baseline.py --quality  # objectives only (keeps the ratios)
    python tools/refresh_regression_baseline.py --speed    # ratios only (keeps the objectives)

Each workload's stored ratio is the median of ``--rounds`` independent measurements (each the
median of REPEATS interleaved calibration/workload pairs), so one noisy measurement does not
become the baseline. Run it on an otherwise quiet machine of the kind CI uses, after a change
that is meant to change speed or results, and commit the JSON with that change. Method and
thresholds: bench/README.md, "CI regression checks".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "regression"))

import regress  # noqa: E402  (lives beside the tests it serves)


def refresh_speed(rounds: int) -> dict:
    """{workload: {ratio, calibration, spread, ...}} from `rounds` measurements per workload."""
    speed = {}
    for name, work in regress.WORKLOADS.items():
        ms = [regress.measure(name, slowdown=1.0) for _ in range(rounds)]
        ratios = [m.ratio for m in ms]
        ratio = statistics.median(ratios)
        speed[name] = {
            "ratio": ratio, "calibration": work.calibration, "what": work.what,
            "rounds": ratios,
            "workload_seconds": statistics.median(m.workload_seconds for m in ms),
            "calibration_seconds": statistics.median(m.calibration_seconds for m in ms),
        }
        print(f"{name:20s} ratio {ratio:8.4f}  rounds {' '.join(f'{r:.4f}' for r in ratios)}  "
              f"spread {(max(ratios) - min(ratios)) / ratio:6.1%}  "
              f"workload {speed[name]['workload_seconds'] * 1e3:6.1f} ms  "
              f"calibration ({work.calibration}) {speed[name]['calibration_seconds'] * 1e3:5.1f} ms")
    return speed


def refresh_quality() -> dict[str, float]:
    quality = {}
    for name, run in regress.QUALITY_RUNS.items():
        quality[name] = run()
        print(f"{name:34s} {quality[name]!r}")
    return quality


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--speed", action="store_true", help="refresh the speed ratios only")
    which.add_argument("--quality", action="store_true", help="refresh the objectives only")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per workload (default 5)")
    parser.add_argument("--output", type=Path, default=regress.BASELINE_PATH)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if regress.env_slowdown() != 1:
        parser.error(f"{regress.SLOWDOWN_ENV} is set: unset it before refreshing the baseline")

    old = json.loads(args.output.read_text()) if args.output.exists() else {}
    data = {
        "about": "CI regression baseline; written by tools/refresh_regression_baseline.py "
                 "(see bench/README.md, 'CI regression checks')",
        "threshold": regress.THRESHOLD,
        "quality_rtol": regress.QUALITY_RTOL,
        "environment": old.get("environment", {}),
        "speed": old.get("speed", {}),
        "quality": old.get("quality", {}),
    }
    if not args.quality:
        data["speed"] = refresh_speed(args.rounds)
        data["environment"] = regress.environment()
    if not args.speed:
        data["quality"] = refresh_quality()
    args.output.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

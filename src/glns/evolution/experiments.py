"""Experiments as the paper ran them: several independent runs of one setting, each tested on
the test set, and the ablation study (docs/evolution.md, "Experiments").

An experiment directory holds ordinary run directories ``run-1``, ``run-2``, ... (seeds
seed, seed + 1, ...; each one works with ``glns evolve --resume`` and ``glns plot``), the
settings and the runs' states in ``experiment.json``, and ``runs_summary.txt``/``.json``.
:func:`run_experiment` creates or continues one: finished runs are skipped, an unfinished
one is resumed from its checkpoint and missing ones are started, so a killed experiment
continues where it stopped. After each run its best pair gets the final test
(:mod:`glns.evolution.final_testing`), cached in the run directory.

An ablation directory (:func:`run_ablations`) holds one experiment per variant and problem
(``full-tsp``, ``no-mutation-cvrp``, ...), ``ablations.json`` and ``ablation_table.*``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from glns.evolution import experiment_report as report
from glns.evolution.config import EvolutionConfig
from glns.evolution.controller import Evolution
from glns.evolution.final_testing import FinalTestSettings, final_test
from glns.evolution.rundir import RunDirectory, atomic_write_json
from glns.exceptions import GlnsError
from glns.llm import Ensemble, LLMConfig

__all__ = ["ExperimentError", "ExperimentResult", "AblationResult", "EXPERIMENT_FILE", "ABLATIONS_FILE",
           "VARIANTS", "VARIANT_LABELS", "ALL_VARIANTS", "variant_config", "run_names",
           "is_experiment", "is_ablation_study", "run_experiment", "run_ablations",
           "summarise_experiment", "summarise_ablations"]

logger = logging.getLogger(__name__)

EXPERIMENT_FILE = "experiment.json"
ABLATIONS_FILE = "ablations.json"
_EXPERIMENT_FORMAT = "glns-experiment/1"
_ABLATIONS_FORMAT = "glns-ablations/1"

#: the paper's ablation variants: the settings each changes from the full G-LNS
VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "no-mutation": {"no_mutation": True},
    "no-homogeneous": {"no_homogeneous": True},
    "no-synergy": {"no_joint": True},          # no joint crossover: the populations evolve apart
    "no-adaptive": {"adaptive": False},        # uniform operator selection in the inner solver
    "flat": {"sigma": "flat"},
    "aggressive": {"sigma": "aggressive"},
}
#: the paper's row labels
VARIANT_LABELS = {"full": "G-LNS", "no-mutation": "w/o Mut.", "no-homogeneous": "w/o Homo.",
                  "no-synergy": "w/o Syn.", "no-adaptive": "w/o Adapt.", "flat": "Flat",
                  "aggressive": "Aggressive"}
ALL_VARIANTS = tuple(VARIANTS)
#: the full G-LNS values of every setting a variant changes
_FULL = {"no_mutation": False, "no_homogeneous": False, "no_joint": False, "adaptive": True, "sigma": "paper"}
#: settings that change where a run executes or when it stops, not what it computes: they may
#: differ when an experiment is continued (names missing from EvolutionConfig are skipped)
_EXECUTION = ("workers", "backend", "address", "memory_mb", "sandbox", "llm_concurrency",
              "max_tokens", "max_cost", "max_time")

Progress = Callable[[str], None]


class ExperimentError(GlnsError, RuntimeError):
    """The experiment directory cannot be used as asked (other settings, not an experiment,
    in use by another process)."""


@dataclass
class ExperimentResult:
    """A finished experiment: its directory and the content of ``runs_summary.json``."""

    path: Path
    summary: dict[str, Any]

    @property
    def runs(self) -> list[Path]:
        """The run directories, run-1 first."""
        return [Path(r["path"]) for r in self.summary["runs"]]


@dataclass
class AblationResult:
    """A finished ablation study: its directory, the table (``ablation_table.json``) and the
    experiment of each (variant, problem)."""

    path: Path
    table: dict[str, Any]
    experiments: dict[tuple[str, str], ExperimentResult]


# ============================================================================= settings


def variant_config(base: EvolutionConfig, variant: str, problem: str | None = None) -> EvolutionConfig:
    """`base` as the ablation `variant` (a key of :data:`VARIANTS`) on `problem` (default:
    base's): the variant's switches on top of the full G-LNS, whatever base's switches are."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown ablation variant {variant!r}; known: {', '.join(VARIANTS)}")
    return dataclasses.replace(base, **{**_FULL, **VARIANTS[variant]},
                               **({"problem": problem} if problem is not None else {}))


def run_names(runs: int) -> list[str]:
    """The run directories of an experiment of `runs` runs: run-1, run-2, ..."""
    return [f"run-{i}" for i in range(1, runs + 1)]


def is_experiment(path: str | Path) -> bool:
    """Whether `path` holds an experiment (``experiment.json``)."""
    return (Path(path) / EXPERIMENT_FILE).is_file()


def is_ablation_study(path: str | Path) -> bool:
    """Whether `path` holds an ablation study (``ablations.json``)."""
    return (Path(path) / ABLATIONS_FILE).is_file()


def _read(path: Path, name: str, fmt: str) -> dict[str, Any] | None:
    file = path / name
    if not file.is_file():
        return None
    data = json.loads(file.read_text(encoding="utf-8"))
    if data.get("format") != fmt:
        raise ExperimentError(f"{file} has format {data.get('format')!r}; this glns reads {fmt!r}")
    return data


def _differences(saved: EvolutionConfig, given: EvolutionConfig) -> list[str]:
    a, b = saved.to_dict(), given.to_dict()
    return [f"{k}: {a.get(k)!r} there, {b.get(k)!r} now" for k in sorted(set(a) | set(b))
            if k not in (*_EXECUTION, "generations") and a.get(k) != b.get(k)]


def _ablation_base(config: EvolutionConfig) -> EvolutionConfig:
    """The shared settings of an ablation study: every variant sets its problem and switches."""
    return dataclasses.replace(config, problem="cvrp", **_FULL)


def _continued(saved: EvolutionConfig, given: EvolutionConfig | None, path: Path) -> EvolutionConfig:
    """The base settings of a continued experiment: the saved ones, with the given execution
    settings and episode budget; other differences are refused (they would mix settings)."""
    if given is None:
        return saved
    diff = _differences(saved, given)
    if diff:
        raise ExperimentError(f"{path} was started with other settings ({'; '.join(diff)}); "
                              f"continue it with glns evolve --resume {path}, or use another directory")
    return dataclasses.replace(saved, generations=given.generations,
                               **{k: getattr(given, k) for k in _EXECUTION if hasattr(given, k)})


def _runs_count(runs: int | None, saved: int | None, path: Path) -> int:
    if runs is None:
        return saved if saved is not None else 3
    if isinstance(runs, bool) or int(runs) != runs or runs < 1:
        raise ValueError(f"runs must be a positive integer, got {runs!r}")
    if saved is not None and runs < saved:
        raise ExperimentError(f"{path} has {saved} runs; runs={runs} would drop some (give at least {saved})")
    return int(runs)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Keep a second process out of the experiment (each run directory has its own lock too)."""
    path.mkdir(parents=True, exist_ok=True)
    with open(path / ".experiment.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ExperimentError(f"{path} is in use by another glns process") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# ============================================================================= an experiment


def _prefixed(progress: Progress | None, name: str) -> Progress:
    return (lambda line: progress(f"[{name}] {line}")) if progress is not None else (lambda line: None)


def _run_one(run_dir: Path, cfg: EvolutionConfig, llm: LLMConfig | Ensemble, llm_meta: Mapping[str, Any] | None,
             progress: Progress) -> None:
    """Start, resume or skip one run so that it ends finished with at least cfg.generations."""
    state = report.run_state(run_dir)
    if state == "pending":
        Evolution.start(run_dir, cfg, llm, llm_meta=dict(llm_meta or {}), progress=progress).run()
        return
    saved = EvolutionConfig.from_dict(RunDirectory.read_run_config(run_dir)["evolution"])
    if saved.seed != cfg.seed or saved.problem != cfg.problem:
        raise ExperimentError(f"{run_dir} holds a {saved.problem} run with seed {saved.seed}, not the "
                              f"{cfg.problem} run with seed {cfg.seed} this experiment expects there")
    checkpoint = RunDirectory(run_dir).read_checkpoint() or {}
    budget = int(checkpoint.get("generations") or saved.generations)
    if state == "finished" and budget >= cfg.generations:
        progress(f"finished ({checkpoint.get('episodes')} episodes); skipped")
        return
    progress("resuming from its last checkpoint")
    logger.info("%s: %s run resumed after %s episodes", run_dir, state, checkpoint.get("episodes", 0))
    Evolution.resume(run_dir, llm, generations=cfg.generations if cfg.generations > budget else None,
                     progress=progress).run()


def _experiment_settings(saved: Mapping[str, Any] | None, base: EvolutionConfig, runs: int,
                         test: FinalTestSettings, llm_meta: Mapping[str, Any]) -> dict[str, Any]:
    return {"format": _EXPERIMENT_FORMAT,
            "created": saved["created"] if saved else time.strftime("%Y-%m-%dT%H:%M:%S"),
            "evolution": base.to_dict(), "runs": runs, "seeds": [base.seed + i for i in range(runs)],
            "test": test.to_dict(), "test_resolved": test.resolved(base), "llm": dict(llm_meta)}


def _write_state(path: Path, settings: dict[str, Any], summary: Mapping[str, Any]) -> None:
    """experiment.json: the settings and each run's state, rewritten after every run."""
    runs = [{k: r.get(k) for k in ("name", "seed", "state", "episodes", "best_score", "test_mean")}
            for r in summary["runs"]]
    atomic_write_json(path / EXPERIMENT_FILE, {**settings, "run_states": runs})


def summarise_experiment(path: str | Path) -> dict[str, Any]:
    """Rebuild and write ``runs_summary.txt``/``.json`` of the experiment in `path` from its
    run directories; returns the summary (see :func:`glns.evolution.experiment_report.summarise_runs`)."""
    path = Path(path)
    settings = _read(path, EXPERIMENT_FILE, _EXPERIMENT_FORMAT)
    if settings is None:
        raise ExperimentError(f"{path} is not a glns experiment (no {EXPERIMENT_FILE})")
    summary = report.summarise_runs(
        [(name, path / name) for name in run_names(int(settings["runs"]))],
        FinalTestSettings.from_dict(settings["test"]),
        {k: settings[k] for k in ("evolution", "runs", "seeds", "llm")} | {"test": settings["test_resolved"]})
    report.write_runs_summary(path, summary)
    return summary


def run_experiment(path: str | Path, config: EvolutionConfig | None, llm: LLMConfig | Ensemble, *,
                   runs: int | None = None, test: FinalTestSettings | None = None,
                   generations: int | None = None, llm_meta: Mapping[str, Any] | None = None,
                   progress: Progress | None = None) -> ExperimentResult:
    """Run (or continue) the experiment in `path`: `runs` independent runs of `config` with
    seeds config.seed, config.seed + 1, ..., each followed by its final test, then the summary.

    config: the settings (None: those saved in the directory, to continue it); continuing with
        other settings than the saved ones raises ExperimentError, except for the execution
        settings (workers, backend, address, memory_mb, LLM concurrency and the token, cost
        and time budgets: used for runs started now) and the episode budget (a larger one
        extends every run). A run stopped by a budget counts as unfinished: continuing the
        experiment resumes it.
    runs: 3 for a new experiment, the saved count when continuing (more adds runs).
    test: the final test (default: all 64 instances of the paper's test set at the training
        size, 500 iterations; when continuing: the saved one).
    generations: a new episode budget for every run (like ``--resume --generations``).
    llm_meta: extra facts about the endpoint saved with each run (e.g. the offline server's).
    progress: one line per event, prefixed with the run's name.
    """
    path = Path(path)
    with _locked(path):
        saved = _read(path, EXPERIMENT_FILE, _EXPERIMENT_FORMAT)
        if saved is None:
            if config is None:
                raise ExperimentError(f"{path} is not a glns experiment (no {EXPERIMENT_FILE})")
            if (path / RunDirectory.CONFIG).exists():
                raise ExperimentError(f"{path} holds a single run; choose another directory for the experiment")
            base = config
        else:
            base = _continued(EvolutionConfig.from_dict(saved["evolution"]), config, path)
        if generations is not None:
            base = dataclasses.replace(base, generations=int(generations))
        count = _runs_count(runs, saved["runs"] if saved else None, path)
        test = test if test is not None else (FinalTestSettings.from_dict(saved["test"]) if saved
                                              else FinalTestSettings())
        meta = dict(saved["llm"]) if saved else dict(llm_meta or {})
        settings = _experiment_settings(saved, base, count, test, meta)   # checks the test set first
        atomic_write_json(path / EXPERIMENT_FILE, settings)
        for i, name in enumerate(run_names(count)):
            run_progress = _prefixed(progress, name)
            run_dir = path / name
            _run_one(run_dir, dataclasses.replace(base, seed=base.seed + i), llm, meta, run_progress)
            final_test(run_dir, test, progress=run_progress)
            _write_state(path, settings, summarise_experiment(path))
        summary = summarise_experiment(path)
        _write_state(path, settings, summary)
    return ExperimentResult(path, summary)


# ============================================================================= ablations


def _check_names(values: Sequence[str], known: Sequence[str], what: str) -> list[str]:
    values = list(dict.fromkeys(values))
    unknown = [v for v in values if v not in known]
    if unknown or not values:
        raise ValueError(f"unknown {what}: {', '.join(unknown) or '(none given)'}; known: {', '.join(known)}")
    return values


def summarise_ablations(path: str | Path) -> dict[str, Any]:
    """Rebuild and write ``ablation_table.txt``/``.md``/``.json`` of the ablation study in
    `path` from its experiments' summaries; returns the table
    (see :func:`glns.evolution.experiment_report.ablation_table`)."""
    path = Path(path)
    settings = _read(path, ABLATIONS_FILE, _ABLATIONS_FORMAT)
    if settings is None:
        raise ExperimentError(f"{path} is not a glns ablation study (no {ABLATIONS_FILE})")
    summaries = {(v, p): summarise_experiment(path / f"{v}-{p}")
                 for v in settings["variants"] for p in settings["problems"]
                 if is_experiment(path / f"{v}-{p}")}
    table = report.ablation_table(summaries, settings["variants"], settings["problems"], VARIANT_LABELS,
                                  test=settings["test"] | {"size": settings["evolution"]["train_size"]
                                                           if settings["test"]["size"] is None
                                                           else settings["test"]["size"]})
    report.write_ablation_table(path, table)
    return table


def run_ablations(path: str | Path, base_config: EvolutionConfig | None, llm: LLMConfig | Ensemble, *,
                  problems: Sequence[str] | None = None, variants: Sequence[str] | None = None,
                  runs: int | None = None, test: FinalTestSettings | None = None,
                  generations: int | None = None, llm_meta: Mapping[str, Any] | None = None,
                  progress: Progress | None = None) -> AblationResult:
    """Run (or continue) the ablation study in `path`: for every problem and variant an
    experiment ``<variant>-<problem>`` (:func:`run_experiment`) of :func:`variant_config`
    (base_config, variant, problem), then the ablation table.

    base_config: the settings shared by every variant (its problem and ablation switches are
        replaced); None: the saved ones, to continue. problems: default ("tsp", "cvrp") (when
        continuing: the saved ones). variants: default all of :data:`VARIANTS`. runs, test,
        generations, llm_meta, progress: as in :func:`run_experiment`, for every experiment.
    """
    path = Path(path)
    with _locked(path):
        saved = _read(path, ABLATIONS_FILE, _ABLATIONS_FORMAT)
        if saved is None:
            if base_config is None:
                raise ExperimentError(f"{path} is not a glns ablation study (no {ABLATIONS_FILE})")
            base = _ablation_base(base_config)
        else:
            base = _continued(EvolutionConfig.from_dict(saved["evolution"]),
                              _ablation_base(base_config) if base_config is not None else None, path)
        if generations is not None:
            base = dataclasses.replace(base, generations=int(generations))
        problems = _check_names(problems if problems is not None else
                                (saved["problems"] if saved else ("tsp", "cvrp")),
                                ("tsp", "cvrp", "ovrp"), "problems")
        variants = _check_names(variants if variants is not None else
                                (saved["variants"] if saved else ALL_VARIANTS), ALL_VARIANTS, "variants")
        count = _runs_count(runs, saved["runs"] if saved else None, path)
        test = test if test is not None else (FinalTestSettings.from_dict(saved["test"]) if saved
                                              else FinalTestSettings())
        meta = dict(saved["llm"]) if saved else dict(llm_meta or {})
        for p in problems:    # every test set exists before anything runs
            test.resolved(dataclasses.replace(base, problem=p))
        atomic_write_json(path / ABLATIONS_FILE, {
            "format": _ABLATIONS_FORMAT, "evolution": base.to_dict(), "problems": problems,
            "variants": variants, "runs": count, "test": test.to_dict(), "llm": meta})
        results = {}
        for p in problems:
            for v in variants:
                name = f"{v}-{p}"
                results[v, p] = run_experiment(path / name, variant_config(base, v, p), llm, runs=count,
                                               test=test, llm_meta=meta, progress=_prefixed(progress, name))
                summarise_ablations(path)
        table = summarise_ablations(path)
    return AblationResult(path, table, results)

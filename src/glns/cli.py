"""Command line: ``glns solve`` (one instance), ``glns evolve`` (G-LNS operator evolution),
``glns compile`` (compiled operators) and ``glns bench`` (benchmarks)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import glns
from glns import datasets
from glns.benchmark.cli import add_bench_parser
from glns.plot.cli import add_plot_parser
from glns.problems import PROBLEM_KINDS
from glns.params import AUTO_LOAD_PENALTY, SHORT_ROUTES_BELOW, SMALL_BELOW
from glns.solution_files import solution_format


def _instance(args: argparse.Namespace) -> glns.Problem:
    if args.instance:
        problem = datasets.read(args.instance, rounding=args.rounding, problem=args.problem)
    else:
        problem = datasets.generate(args.problem or "cvrp", args.size, args.instance_seed)
    if getattr(args, "route_cost", None) is not None:
        if not problem.timed:
            raise ValueError(f"--route-cost applies to VRPTW instances, not {problem.label}")
        problem = problem.with_route_cost(args.route_cost)
    return problem


def _check_out(path: str, problem: glns.Problem) -> None:
    """Refuse an --out the solution cannot be written to before solving, not after."""
    solution_format(path, problem.kind)
    folder = Path(path).parent
    if not folder.is_dir():
        raise ValueError(f"--out {path}: the folder {folder} does not exist")


def _operator_argument(values: list[str] | None) -> str | list[str] | None:
    """--destroy / --repair values as glns.solve takes them: one value alone, so that an
    exported operator module's path stands for the whole module."""
    if values is None or len(values) != 1:
        return values
    return values[0]


def _load_penalty_argument(value: str) -> float | str:
    """--load-penalty: a share, "auto" or "off"."""
    if value in ("auto", "off"):
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1), 'auto' or 'off', got {value!r}") from None


def _cmd_solve(args: argparse.Namespace) -> int:
    problem = _instance(args)
    if args.out:
        _check_out(args.out, problem)
    params = glns.SolveParams.paper() if args.paper else glns.SolveParams()
    if args.load_penalty is not None:
        params = dataclasses.replace(params, load_penalty=None if args.load_penalty == "off" else args.load_penalty)
    # the progress table goes to standard error: standard output stays the result (--json)
    show = sys.stderr.isatty() and not args.json if args.display is None else args.display
    result = glns.solve(problem, _operator_argument(args.destroy), _operator_argument(args.repair),
                        iterations=args.iterations,
                        time_limit=args.time_limit, seed=args.seed, params=params,
                        display=sys.stderr if show else False)
    out = glns.write_solution(args.out, result, problem) if args.out else None
    if args.json:
        record = {"instance": repr(problem), "cost": result.cost,
                  "routes": result.num_routes, "iterations": result.iterations,
                  "runtime": result.runtime, "stop_reason": result.stop_reason,
                  "solution": result.solution}
        print(json.dumps(record if out is None else {**record, "out": str(out)}))
    else:
        print(f"instance   {problem!r}")
        print(f"cost       {result.cost:.6f}")
        print(f"routes     {result.num_routes}")
        print(f"iterations {result.iterations}")
        print(f"time       {result.runtime:.3f} s")
        print(f"stopped    {result.stop_reason}")
        if out is not None:
            print(f"solution   {out}")
        if args.verbose:
            print(result.summary())
    return 0


def _cmd_compile(args: argparse.Namespace) -> int:
    from pathlib import Path

    from glns.deploy import compile_operator_file

    if args.clear_cache:
        from glns import compiler

        removed = compiler.clear_cache()
        print(f"removed {removed} compiled operator(s) from {compiler.cache_dir()}")
        if args.path is None:
            return 0
    if args.path is None:
        raise ValueError("give an operator file to compile (or --clear-cache)")

    out = Path(args.out) if args.out else Path(args.path).with_suffix("").with_name(Path(args.path).stem + "-compiled")
    reports = compile_operator_file(args.path, out, timeout=args.timeout, problem=args.problem,
                                    progress=None if args.quiet else (lambda line: print(line, file=sys.stderr)))
    print((out / "report.md").read_text())
    print(f"wrote {out / Path(args.path).name} (import it, or name its functions as "
          f"'{out / Path(args.path).name}:FUNCTION'), {out / 'report.md'}, {out / 'report.json'}")
    return 0 if all(r.status in ("compiled", "cached", "native") for r in reports) else 1


def _evolution_config(args: argparse.Namespace):
    from glns.evolution import EvolutionConfig

    mix = None
    if args.mix:
        try:
            shares = [float(x) for x in args.mix.split(",")]
        except ValueError:
            raise ValueError(f"--mix needs three numbers like 0.5,0.4,0.1, got {args.mix!r}") from None
        if len(shares) != 3:
            raise ValueError(f"--mix needs three numbers (mutation, homogeneous, joint), got {args.mix!r}")
        mix = dict(zip(("mutation", "homogeneous", "joint"), shares))
    given = dict(
        problem=args.problem, generations=args.generations, population=args.population,
        prune=args.prune, episodes_per_cycle=args.episodes_per_cycle, train_count=args.train_count,
        train_size=args.train_size, iterations=args.iterations, validation_count=args.validation_count,
        validation_size=args.validation_size, validation_iterations=args.validation_iterations,
        validation_pairs=args.validation_pairs, instances=args.instances, mix=mix,
        no_mutation=args.no_mutation or None, no_homogeneous=args.no_homogeneous_crossover or None,
        no_joint=args.no_joint_crossover or None, adaptive=False if args.no_adaptive_weights else None,
        sigma=args.sigma, pair_choice=args.pair_choice, native_seeds=args.native_seeds or None,
        max_attempts=args.max_attempts, op_timeout=args.op_timeout, workers=args.workers,
        backend=args.backend, address=args.address, sandbox=args.sandbox,
        seed=args.seed, temperature=args.temperature, llm_concurrency=args.llm_concurrency,
        max_tokens=args.max_tokens, max_cost=args.max_cost, max_time=args.max_time)
    return EvolutionConfig(**{k: v for k, v in given.items() if v is not None})


def _detail(line: str) -> bool:
    """A per-episode or per-request progress line (left out by ``glns evolve -q``)."""
    return " episode " in line or ": request " in line


def _llm_models(args: argparse.Namespace, saved_llm: dict, stack: Any,
                progress: Callable[[str], None]) -> tuple[Any, dict]:
    """The models of `glns evolve` (a :class:`glns.llm.Ensemble`) and the facts to keep in the
    run's metadata. A resumed run keeps its endpoint, its LLM config file and its offline
    server's settings unless overridden. With --offline, models of an ensemble file that name
    no base_url get the offline server's."""
    import os

    from glns.llm import Ensemble, LLMConfigError

    saved_models = saved_llm.get("models") or ([saved_llm] if saved_llm.get("model") else [])
    config_file = args.llm_config or saved_llm.get("config_file")
    one = saved_models[0] if len(saved_models) == 1 and not config_file else {}
    overrides = dict(model=args.model or one.get("model"), base_url=args.base_url or one.get("base_url"))
    env = dict(os.environ)
    llm_meta: dict = {}
    if args.offline or (saved_llm.get("offline") and not args.base_url):
        from glns.offline_llm import OfflineLLMServer

        seed = saved_llm.get("offline_seed", args.seed if args.seed is not None else 0)
        rate = saved_llm.get("offline_bad_rate", args.offline_bad_rate)
        server = stack.enter_context(OfflineLLMServer(seed=seed, bad_rate=rate))
        env["GLNS_LLM_BASE_URL"] = server.base_url
        overrides.update(base_url=server.base_url, model=overrides["model"] or "offline")
        llm_meta = {"offline": True, "offline_seed": seed, "offline_bad_rate": rate}
        progress(f"offline test LLM at {server.base_url} (no API key needed)")
    if config_file:
        llm_meta["config_file"] = str(Path(config_file).resolve())
    try:
        if config_file and _is_ensemble_file(config_file):
            if args.model or args.base_url:
                raise LLMConfigError(f"--model/--base-url cannot be combined with the ensemble in {config_file}")
            return Ensemble.load(config_file, env=env), llm_meta
        return Ensemble.load(config_file, env=env, **overrides), llm_meta
    except LLMConfigError as exc:
        raise ValueError(f"{exc} (or run `glns evolve --offline` to try it without an LLM)") from None


def _is_ensemble_file(path: str) -> bool:
    from glns.llm.config import read_table

    return "models" in read_table(Path(path))


def _cmd_evolve(args: argparse.Namespace) -> int:
    if _wants_experiment(args): return _cmd_experiment(args)   # several runs or ablations
    import contextlib
    import time

    from glns.evolution import Evolution
    from glns.evolution.generate import EvolutionAborted
    from glns.evolution.rundir import RunDirectory

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def quiet_progress(line: str) -> None:   # -q: no per-episode lines
        if not (args.quiet and _detail(line)):
            progress(line)

    # a resumed run keeps its endpoint (and its offline server's settings) unless overridden
    saved_llm = RunDirectory.read_run_config(args.resume).get("llm", {}) if args.resume else {}
    with contextlib.ExitStack() as stack:
        llm, llm_meta = _llm_models(args, saved_llm, stack, progress)
        if args.resume:
            evo = Evolution.resume(args.resume, llm, generations=args.generations,
                                   llm_concurrency=args.llm_concurrency, max_tokens=args.max_tokens,
                                   max_cost=args.max_cost, max_time=args.max_time,
                                   sandbox=args.sandbox, progress=quiet_progress)
        else:
            cfg = _evolution_config(args)
            run_dir = args.run_dir or f"glns-runs/{cfg.problem}-seed{cfg.seed}-{time.strftime('%Y%m%d-%H%M%S')}"
            evo = Evolution.start(run_dir, cfg, llm, llm_meta=llm_meta, progress=quiet_progress)
        path = evo.rundir.path
        progress(f"run directory {path}")
        try:
            result = evo.run()
        except KeyboardInterrupt:
            progress(f"interrupted; the last finished cycle is saved: glns evolve --resume {path}")
            return 130
        except EvolutionAborted as exc:
            progress(f"glns: evolution stopped: {exc}")
            return 3
    print((path / "summary.txt").read_text(encoding="utf-8"), end="")
    if result.stopped is not None:
        print(f"stopped by the {result.stopped['budget']} budget; continue with: "
              f"glns evolve --resume {path} and a larger budget")
    print(f"best operators: {result.module_path}  (use: glns.solve(problem, "
          "glns.evolution.load_module(path)))")
    return 0


def _add_evolve_parser(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("evolve", help="evolve destroy/repair operators with an LLM (G-LNS)",
                       description="G-LNS: co-evolve destroy and repair operators with an LLM. "
                       "Try it without an API key: glns evolve --offline --generations 20")
    llm = e.add_argument_group("LLM endpoint (any OpenAI-compatible API; key from GLNS_LLM_API_KEY or OPENAI_API_KEY)")
    llm.add_argument("--model", help="model name (e.g. deepseek-chat)")
    llm.add_argument("--base-url", help="endpoint, e.g. https://api.deepseek.com/v1")
    llm.add_argument("--llm-config", help="TOML file: one endpoint (base_url, model, temperature, price, ...) "
                     "or an ensemble of models with weights and prices (docs/llm.md)")
    llm.add_argument("--temperature", type=float, help="sampling temperature")
    llm.add_argument("--offline", action="store_true",
                     help="use the bundled offline test LLM (a local server; no API key)")
    llm.add_argument("--offline-bad-rate", type=float, default=0.25,
                     help="share of deliberately bad answers of the offline LLM (default 0.25)")
    run = e.add_argument_group("run")
    run.add_argument("--problem", choices=sorted(PROBLEM_KINDS), default=None, help="default cvrp")
    run.add_argument("--generations", type=int, help="episodes in total (G_max, default 200)")
    run.add_argument("--run-dir", help="directory for the run (default glns-runs/<problem>-seed<S>-<time>)")
    run.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its last checkpoint")
    run.add_argument("--seed", type=int, default=None, help="master seed (default 0)")
    run.add_argument("--workers", type=int, help="evaluation processes (default: all cores)")
    run.add_argument("--backend", choices=["process", "ray"], help="where episodes run (default process)")
    run.add_argument("--address", help="Ray cluster address for --backend ray (default: local runtime)")
    run.add_argument("--sandbox", choices=["auto", "strict", "off"],
                     help="OS-level confinement of the processes that run generated code: auto "
                     "(default: seccomp, Landlock and limits where the kernel has them), strict "
                     "(refuse to run without them), off (docs/sandbox.md)")
    run.add_argument("-q", "--quiet", action="store_true", help="report cycles only, not episodes and LLM requests")
    run.add_argument("--llm-concurrency", type=int,
                     help="LLM requests in flight at once (default 4; the result does not depend on it)")
    bud = e.add_argument_group("budgets (the run stops at a cycle boundary; --resume with a larger one continues)")
    bud.add_argument("--max-tokens", type=int, help="LLM tokens (prompt + completion)")
    bud.add_argument("--max-cost", type=float, help="USD, from the models' prices in --llm-config")
    bud.add_argument("--max-time", type=float, help="wall seconds over all sessions of the run")
    pop = e.add_argument_group("evolution (defaults: the paper)")
    pop.add_argument("--population", type=int, help="N, operators per population (5)")
    pop.add_argument("--prune", type=int, help="M, operators dropped per cycle (2)")
    pop.add_argument("--episodes-per-cycle", type=int, help="K, episodes between evolution steps (10)")
    pop.add_argument("--train-count", type=int, help="training instances (16)")
    pop.add_argument("--train-size", type=int, help="nodes of the training instances (50)")
    pop.add_argument("--iterations", type=int, help="T, solver iterations per run (100)")
    pop.add_argument("--validation-count", type=int, help="validation instances (64)")
    pop.add_argument("--validation-size", type=int, help="their size (50)")
    pop.add_argument("--validation-iterations", type=int, help="iterations per validation run (500)")
    pop.add_argument("--validation-pairs", type=int, help="pairs validated per cycle (1)")
    pop.add_argument("--instances", choices=["generated", "paper"], help="generated (default) or the paper's splits")
    pop.add_argument("--mix", help="strategy shares mutation,homogeneous,joint (0.5,0.4,0.1)")
    pop.add_argument("--pair-choice", choices=["roulette", "max"], help="joint-crossover pair from S")
    pop.add_argument("--native-seeds", action="store_true", help="run the seed operators natively")
    pop.add_argument("--max-attempts", type=int, help="LLM answers per requested operator (3)")
    pop.add_argument("--op-timeout", type=float, help="seconds per operator call (1.0)")
    abl = e.add_argument_group("ablations (docs/method.md)")
    abl.add_argument("--no-mutation", action="store_true")
    abl.add_argument("--no-homogeneous-crossover", action="store_true")
    abl.add_argument("--no-joint-crossover", action="store_true", help="evolve the populations independently")
    abl.add_argument("--no-adaptive-weights", action="store_true", help="uniform operator selection")
    abl.add_argument("--sigma", choices=["paper", "flat", "aggressive"], help="score preset")
    e.set_defaults(func=_cmd_evolve)


# ----------------------------------------------------------------------------- experiments
# glns evolve --runs N / --ablations / --resume EXPERIMENT_DIR (glns.evolution.experiments)

_ABLATION_FLAGS = ("no_mutation", "no_homogeneous_crossover", "no_joint_crossover", "no_adaptive_weights", "sigma")


def _wants_experiment(args: argparse.Namespace) -> bool:
    """Several runs, the ablation study, or --resume of an experiment or ablation directory."""
    from glns.evolution.experiments import is_ablation_study, is_experiment

    if (args.runs or 1) > 1 or args.ablations:
        return True
    return bool(args.resume) and (is_experiment(args.resume) or is_ablation_study(args.resume))


def _saved_experiment_llm(path: Path, settings_file: str) -> dict:
    """The endpoint a continued experiment used: that of its first started run (as
    ``glns evolve --resume`` reads it), else the facts in its settings file."""
    import json

    from glns.evolution.rundir import RunDirectory

    for config in sorted(path.glob("run-*/config.json")) + sorted(path.glob("*/run-*/config.json")):
        return RunDirectory.read_run_config(config.parent).get("llm", {})
    return json.loads((path / settings_file).read_text(encoding="utf-8")).get("llm", {})


def _names(value: str | None, option: str) -> list[str] | None:
    names = [x.strip() for x in value.split(",") if x.strip()] if value is not None else None
    if names == []:
        raise ValueError(f"{option} needs a comma-separated list")
    return names


def _experiment_plots(paths: list, progress) -> None:
    """runs.png of each experiment, ablation_curves.png of an ablation study; the hint once
    without matplotlib."""
    from glns.plot.runs import plot_runs

    for path, name in paths:
        try:
            plot_runs(path, Path(path) / name)
        except ImportError:
            progress("no plots: they need matplotlib: pip install 'glns[plot]'")
            return
        except ValueError as exc:   # nothing finished yet
            progress(f"no plot {name}: {exc}")


def _cmd_experiment(args: argparse.Namespace) -> int:
    """``glns evolve --runs N``, ``--ablations`` and ``--resume`` of their directories."""
    import contextlib
    import time

    from glns.evolution.experiments import (ABLATIONS_FILE, EXPERIMENT_FILE, is_ablation_study,
                                            is_experiment, run_ablations, run_experiment)
    from glns.evolution.final_testing import FinalTestSettings
    from glns.evolution.generate import EvolutionAborted

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def quiet_progress(line: str) -> None:   # -q: no per-episode lines
        if not (args.quiet and _detail(line)):
            progress(line)

    resume = args.resume
    if resume and not (is_experiment(resume) or is_ablation_study(resume)):
        raise ValueError(f"{resume} is not an experiment (no {EXPERIMENT_FILE} or {ABLATIONS_FILE}); "
                         "resume a single run without --runs/--ablations")
    ablations = bool(args.ablations) or bool(resume and is_ablation_study(resume))
    if resume and args.ablations and not is_ablation_study(resume):
        raise ValueError(f"{resume} is an experiment of one setting, not an ablation study: drop --ablations")
    if args.ablations and any(getattr(args, k) for k in _ABLATION_FLAGS):
        raise ValueError("--ablations sets the ablation switches itself: drop --no-mutation, "
                         "--no-homogeneous-crossover, --no-joint-crossover, --no-adaptive-weights and --sigma")
    if not ablations and (args.ablation_problems or args.ablation_variants):
        raise ValueError("--ablation-problems and --ablation-variants need --ablations")
    given = {"count": args.test_count, "size": args.test_size, "iterations": args.test_iterations}
    test = FinalTestSettings(**{k: v for k, v in given.items() if v is not None}) \
        if any(v is not None for v in given.values()) else None
    saved_llm = _saved_experiment_llm(Path(resume), ABLATIONS_FILE if ablations else EXPERIMENT_FILE) \
        if resume else {}
    with contextlib.ExitStack() as stack:
        llm, llm_meta = _llm_models(args, saved_llm, stack, progress)
        cfg = None if resume else _evolution_config(args)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        if resume:
            path = Path(resume)
        elif args.run_dir:
            path = Path(args.run_dir)
        elif ablations:
            path = Path(f"glns-runs/ablations-seed{cfg.seed}-{stamp}")
        else:
            path = Path(f"glns-runs/{cfg.problem}-seed{cfg.seed}-{args.runs}runs-{stamp}")
        progress(f"{'ablation' if ablations else 'experiment'} directory {path}")
        common = dict(runs=args.runs, test=test, generations=args.generations if resume else None,
                      llm_meta=llm_meta, progress=quiet_progress)
        try:
            if ablations:
                result = run_ablations(path, cfg, llm, problems=_names(args.ablation_problems, "--ablation-problems"),
                                       variants=_names(args.ablation_variants, "--ablation-variants"), **common)
            else:
                result = run_experiment(path, cfg, llm, **common)
        except KeyboardInterrupt:
            progress(f"interrupted; finished runs and cycles are saved: glns evolve --resume {path}")
            return 130
        except EvolutionAborted as exc:
            progress(f"glns: evolution stopped: {exc} (continue with glns evolve --resume {path})")
            return 3
    if ablations:
        _experiment_plots([(e.path, "runs.png") for e in result.experiments.values()]
                          + [(path, "ablation_curves.png")], progress)
        print((path / "ablation_table.txt").read_text(encoding="utf-8"), end="")
    else:
        _experiment_plots([(path, "runs.png")], progress)
        print((path / "runs_summary.txt").read_text(encoding="utf-8"), end="")
    return 0


def _add_experiment_arguments(e: argparse.ArgumentParser) -> None:
    """The "experiments" argument group of ``glns evolve``."""
    x = e.add_argument_group("experiments (several runs, ablations; docs/evolution.md)")
    x.add_argument("--runs", type=int, default=None,
                   help="independent runs with seeds S, S+1, ... in DIR/run-1, run-2, ..., each tested "
                        "on the test set, with a summary (default 1: one ordinary run; with "
                        "--ablations 3, as in the paper)")
    x.add_argument("--ablations", action="store_true",
                   help="the paper's ablation study: every variant x problem an experiment of --runs "
                        "runs, then ablation_table.txt/.md/.json")
    x.add_argument("--ablation-problems", metavar="P,P", help="problems of the ablation study (tsp,cvrp)")
    x.add_argument("--ablation-variants", metavar="V,V",
                   help="variants (default all: full,no-mutation,no-homogeneous,no-synergy,"
                        "no-adaptive,flat,aggressive)")
    x.add_argument("--test-count", type=int, help="final test: first N instances of the paper's test set (64)")
    x.add_argument("--test-size", type=int, help="final test: instance size (default the training size)")
    x.add_argument("--test-iterations", type=int, help="final test: T_test, iterations per instance (500)")


def _cmd_regress(args: argparse.Namespace) -> int:
    from glns import regression

    if args.action == "record":
        out = regression.record_suite(args.suite, args.baseline, repeats=args.repeats,
                                      threshold=args.threshold or regression.THRESHOLD,
                                      rtol=args.rtol if args.rtol is not None else regression.RTOL)
        for name, entry in out["workloads"].items():
            print(f"{name:28} objective {entry['objective']:.10g}  speed {entry['ratio']:.4g} "
                  f"({entry['calibration']} calibration, {entry['cpu_seconds']:.3f} s CPU)")
        print(f"baseline written to {args.baseline}")
        return 0
    report = regression.check_suite(args.suite, args.baseline, repeats=args.repeats,
                                    threshold=args.threshold, rtol=args.rtol)
    print(report.table())
    return 0 if report.ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="glns", description=glns.__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"glns {glns.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="solve one instance (default: a generated CVRP100)")
    s.add_argument("instance", nargs="?", help="a TSPLIB .tsp or CVRPLIB .vrp file (needs vrplib)")
    s.add_argument("--problem", choices=sorted(PROBLEM_KINDS), help="problem type (default cvrp)")
    s.add_argument("--size", type=int, default=100, help="size of the generated instance")
    s.add_argument("--instance-seed", type=int, default=0, help="seed of the generated instance")
    s.add_argument("--rounding", choices=["nint", "exact", "dimacs"], default=None,
                   help="distances of benchmark files: TSPLIB nint (the default for TSPLIB and "
                        "CVRPLIB files), DIMACS tenths (the default for time-window files) or "
                        "raw floats")
    s.add_argument("--route-cost", type=float, default=None, metavar="COST",
                   help="VRPTW: a fixed cost per route, added to the total distance (fewer "
                        "vehicles first when it is large)")
    s.add_argument("--destroy", nargs="+", default=None, metavar="OP",
                   help="destroy operators: native names, FILE.py:FUNCTION, PACKAGE.MODULE:FUNCTION; "
                        "or one exported operator module FILE.py (from glns evolve; no --repair), "
                        "which runs its best pair")
    s.add_argument("--repair", nargs="+", default=None, metavar="OP",
                   help="repair operators: native names, FILE.py:FUNCTION, PACKAGE.MODULE:FUNCTION")
    s.add_argument("--iterations", type=int, default=None)
    s.add_argument("--time-limit", type=float, default=None, help="seconds")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--paper", action="store_true", help="use the paper's parameter preset")
    s.add_argument("--load-penalty", type=_load_penalty_argument, default=None, metavar="SHARE",
                   help="CVRP/OVRP: let the local search overload routes at an adaptive cost "
                        "that about SHARE of its searches end within the capacity, then repair "
                        f"them; 'auto' (the default): {AUTO_LOAD_PENALTY} below {SMALL_BELOW} "
                        f"customers, and on routes of fewer than {SHORT_ROUTES_BELOW:g} "
                        "customers on average; 'off': never "
                        "(docs/method.md, \"Penalised loads\")")
    s.add_argument("--display", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress table on standard error every second (default: when it is "
                        "a terminal and --json is not given); Ctrl-C stops the run and keeps "
                        "its best solution")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("-o", "--out", metavar="FILE",
                   help="also write the solution: CVRPLIB .sol (routes in the instance file's "
                        "numbering, then Cost), or a TSPLIB tour for a TSP and FILE ending in .tour")
    s.add_argument("-v", "--verbose", action="store_true", help="print operator statistics")
    s.set_defaults(func=_cmd_solve)

    g = sub.add_parser("regress", help="regression checks of your operators and settings for CI: "
                                       "record a baseline, then check objectives and speed against it")
    g.add_argument("action", choices=["record", "check"])
    g.add_argument("suite", help="a Python file with SUITE = {name: function returning a glns.Result}")
    g.add_argument("baseline", help="the baseline JSON file (written by record, read by check)")
    g.add_argument("--repeats", type=int, default=5, help="interleaved timing pairs per measurement (5)")
    g.add_argument("--threshold", type=float, default=None,
                   help="fail when a workload is slower than recorded x this (default: the "
                        "baseline's, 1.3 when recorded)")
    g.add_argument("--rtol", type=float, default=None, help="relative tolerance of the objectives (1e-6)")
    g.set_defaults(func=_cmd_regress)
    c = sub.add_parser("compile", help="compile an operator file (e.g. an evolution export) with Cython",
                       description="Compile every Python operator of an evolution export, of a file "
                                   "defining DESTROY and REPAIR, or of any Python file (every top-level "
                                   "function with a destroy signature (x, destroy_cnt, problem_data) or a "
                                   "repair signature (partial, removed, problem_data)) with Cython; choose "
                                   "each one's data view on probe instances; write an importable copy of "
                                   "the module that runs the compiled operators, and a report. Exit 1 when "
                                   "an operator did not compile (it then runs interpreted). Needs glns[compile].")
    c.add_argument("path", nargs="?", help="the operator file")
    c.add_argument("--clear-cache", action="store_true",
                   help="first empty the compiled-operator cache ($GLNS_CACHE_DIR or ~/.cache/glns/operators)")
    c.add_argument("-o", "--out", help="output directory (default: PATH without .py, plus -compiled)")
    c.add_argument("--timeout", type=float, default=300.0, help="seconds per operator compile (300)")
    c.add_argument("--problem", choices=sorted(PROBLEM_KINDS),
                   help="problem kind to probe on when the file has no PROBLEM (default: cvrp if the "
                   "code reads demands or a capacity, else tsp)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    c.set_defaults(func=_cmd_compile)
    _add_evolve_parser(sub)
    _add_experiment_arguments(sub.choices["evolve"])
    add_bench_parser(sub)
    add_plot_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        return args.func(args)
    except (ValueError, ImportError, OSError, RuntimeError) as exc:
        print(f"glns: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

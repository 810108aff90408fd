"""G-LNS: LLM co-evolution of destroy and repair operators (docs/method.md; the paper's section 3).

>>> cfg = EvolutionConfig(problem="cvrp", generations=200)               # doctest: +SKIP
>>> evo = Evolution.start("runs/cvrp", cfg, LLMConfig.load(model=..., base_url=...))
>>> result = evo.run()                                                   # doctest: +SKIP
>>> glns.solve(problem, load_module(result.module_path))                 # doctest: +SKIP

Modules: :mod:`~glns.evolution.controller` (the loop), :mod:`~glns.evolution.population`
(members and selection rules), :mod:`~glns.evolution.prompts` (the action prompts),
:mod:`~glns.evolution.generate` (LLM requests and the pre-evaluation filter),
:mod:`~glns.evolution.rundir` (event log, checkpoints), :mod:`~glns.evolution.export`
(the operators as a Python module), :mod:`~glns.evolution.report` (summary and plot).
"""

from glns.evolution.config import EvolutionConfig as EvolutionConfig
from glns.evolution.controller import Evolution as Evolution, EvolutionResult as EvolutionResult
from glns.evolution.export import load_module as load_module
from glns.evolution.generate import EvolutionAborted as EvolutionAborted
from glns.evolution.population import Member as Member

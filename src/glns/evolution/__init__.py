"""G-LNS: LLM co-evolution of destroy and repair operators (SPEC §4, paper §3).

The pieces: :mod:`~glns.evolution.population` (members and the selection rules),
:mod:`~glns.evolution.config` (what a run does, ablations).
"""

from glns.evolution.config import EvolutionConfig as EvolutionConfig
from glns.evolution.population import Member as Member

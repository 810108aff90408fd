"""Offline test LLM: an OpenAI-compatible server answering from a corpus of real operators
and deliberately bad answers, deterministically by seed (no network, no API key).

``glns evolve --offline`` runs the evolution loop against it; tests start and stop it
themselves. Start it by hand with ``python -m glns.offline_llm --port 0 --seed 1`` (or
``tools/offline_llm_server.py``), which prints the base URL.

Prompts must carry the markers of :mod:`glns.llm.markers` (``Problem: CVRP``, ``Operator
type: destroy``); model-name directives (``offline:bad=infinite_loop``, ``offline:fail=429x2``
...) are listed in :mod:`glns.offline_llm.brain`; the good operators are in
:mod:`glns.offline_llm.corpus_tsp` and :mod:`glns.offline_llm.corpus_vrp`, the bad cases in
:mod:`glns.offline_llm.bad`.
"""

from glns.offline_llm.bad import BAD_CASES as BAD_CASES, BadCase as BadCase
from glns.offline_llm.brain import OfflineLLM as OfflineLLM, parse_model as parse_model
from glns.offline_llm.corpus import GOOD as GOOD, CorpusEntry as CorpusEntry, good_entries as good_entries
from glns.offline_llm.server import OfflineLLMServer as OfflineLLMServer

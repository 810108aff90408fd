"""Runs an evolution in its own process for the kill-and-resume tests (tests/offline_runs.py).

usage: python evolve_script.py start|resume RUN_DIR BASE_URL [CONFIG_JSON [MODEL]]
"""

import json
import sys

from glns.evolution import Evolution, EvolutionConfig
from glns.llm import LLMConfig


def main() -> None:
    mode, run_dir, base_url = sys.argv[1:4]
    model = sys.argv[5] if len(sys.argv) > 5 else "offline"
    llm = LLMConfig(base_url=base_url, model=model, max_retries=2, backoff_base=0.01,
                    backoff_max=0.05, timeout=60)
    if mode == "start":
        cfg = EvolutionConfig.from_dict(json.loads(sys.argv[4]))
        evo = Evolution.start(run_dir, cfg, llm)
    else:
        evo = Evolution.resume(run_dir, llm)
    evo.run()


if __name__ == "__main__":
    main()

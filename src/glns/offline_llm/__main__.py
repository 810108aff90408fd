"""``python -m glns.offline_llm --port 0 --seed 1``: serve the offline test LLM."""

import sys

from glns.offline_llm.server import main

sys.exit(main())

#!/usr/bin/env python
"""Launch the offline OpenAI-compatible test LLM on 127.0.0.1 and print its base URL.

    python tools/offline_llm_server.py --port 0 --seed 1 [--bad-rate 0.25]

Same as ``python -m glns.offline_llm``; see glns.offline_llm for what it answers.
"""

import sys

from glns.offline_llm.server import main

if __name__ == "__main__":
    sys.exit(main())

"""Compatibility alias: the operator policy lives in :mod:`glns.operators.policy`.

It moved below the sandbox so that :mod:`glns.compiler` can use it without importing
:mod:`glns.sandbox` (whose package imports the worker pool and evaluation).
"""

from glns.operators.policy import *  # noqa: F401,F403
from glns.operators.policy import ALLOWED_IMPORTS, FORBIDDEN_NAMES, policy_violation

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "policy_violation"]

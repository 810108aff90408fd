"""Compatibility alias: the operator policy lives in :mod:`glns.policy`, below everything
that uses it (the compiler, the LLM answer parser, the operators and the sandbox)."""

from glns.policy import *  # noqa: F401,F403
from glns.policy import ALLOWED_IMPORTS, FORBIDDEN_NAMES, policy_violation

__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "policy_violation"]

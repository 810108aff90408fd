"""Exceptions raised by glns: :class:`GlnsError` is the base of every one (docs/errors.md).

Each exception also keeps the builtin base it always had (ValueError, RuntimeError), so
``except ValueError`` code keeps working. The exceptions of subpackages are defined where they
are raised (``glns.llm.LLMError``, ``glns.batch.BatchError``, ...) and derive from GlnsError.
This module imports nothing from glns: every layer may import it.
"""

__all__ = ["GlnsError", "InvalidInstanceError", "InfeasibleSolutionError", "OperatorError",
           "MatrixTooLargeError"]


class GlnsError(Exception):
    """Base class of every exception class glns defines: ``except glns.GlnsError`` catches them
    all. Python's own errors for bad arguments (TypeError, ValueError for an out-of-range
    setting) are not GlnsErrors."""


class InvalidInstanceError(GlnsError, ValueError):
    """An instance's data is malformed (shape, value or consistency)."""


class InfeasibleSolutionError(GlnsError, ValueError):
    """A solution violates the problem's constraints; the message names the first violation."""


class OperatorError(GlnsError, ValueError):
    """An operator cannot be used (wrong signature, no function in its source, ...)."""


class MatrixTooLargeError(GlnsError, MemoryError):
    """A dense distance matrix was asked for that would take more memory than the limit
    (``glns.problems.base.MAX_MATRIX_BYTES``); the native solver does not need one."""

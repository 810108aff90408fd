"""Exceptions raised by glns."""


class InvalidInstanceError(ValueError):
    """An instance's data is malformed (shape, value or consistency)."""


class InfeasibleSolutionError(ValueError):
    """A solution violates the problem's constraints; the message names the first violation."""


class OperatorError(ValueError):
    """An operator cannot be used (wrong signature, no function in its source, ...)."""

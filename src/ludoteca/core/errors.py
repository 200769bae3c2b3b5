"""Errors shared by every game."""

from __future__ import annotations


class IllegalActionError(ValueError):
    """An action that is ill-formed, or not legal in the position it is applied to.

    It is a ``ValueError`` so that callers handling bad input generally catch it too.
    The state it was raised from is unchanged.
    """

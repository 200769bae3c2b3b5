"""Hidden information for the search: determinization and per-seat observation of actions.

A game that may hide part of a position from a seat says so (``game.has_hidden_information()``)
and answers two questions of the contract (:mod:`ludoteca.core.game`):

* ``state.worlds(seat)``: every position consistent with what ``seat`` sees, with its weight
  (the hidden values re-sampled), or None when ``seat`` sees everything that matters now;
* ``state.action_label(action, seat)``: what ``seat`` observes when ``action`` is played (the
  action itself when public; ``None`` or a partial view when hidden), so that each seat's search
  tree only branches on what that seat can see.

MCTS searches the real state of a game without hidden information, and asks for worlds only
when the game declares it hides something. No game is named here.
"""

from __future__ import annotations

from ludoteca.core.game import State, Worlds

__all__ = ["Worlds", "worlds"]


def worlds(state: State, seat: int) -> Worlds | None:
    """The positions ``seat`` cannot tell apart from ``state``, with their weights; ``None``
    when the game hides nothing or ``seat`` sees everything that matters (search the real
    state)."""
    if not state.game.has_hidden_information():
        return None
    return state.worlds(seat)

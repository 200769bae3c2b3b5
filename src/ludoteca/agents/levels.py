"""The AI ladder's levels: a name for each strength, the agent spec that plays it.

From weakest to strongest:

* ``beginner`` -- ``soft:p=0.5``: the heuristic's move half of the time, a random legal move
  otherwise: the first AI a newcomer meets (the guided game's last step) plays sensibly but can be
  beaten -- it clearly beats the uniformly random player and clearly loses to ``medium`` in every
  game (``random`` stays, for the lab and for a seat whose player left);
* ``easy`` -- ``soft:p=0.8``: the heuristic's move four times in five, a random one otherwise;
* ``medium`` -- ``heuristic``: the game's heuristic player (the anchor of the ladder's scale);
* ``hard`` -- ``strong``: Monte-Carlo tree search in C with the game's tuned budget
  (``agent_defaults["strong"]``), measured not weaker than the Python ``mcts`` at a few
  milliseconds a move (docs/strength.md);
* ``expert`` -- ``strong:xN``: the same search with :data:`EXPERT_FACTOR` times that budget, the
  strongest the machine affords per move (tenths of a second).

Where a game has no compiled search (or it is not built, or cannot play the table's options),
``strong`` plays the game's tuned Python ``mcts`` after one warning (``ludoteca.agents.strong``):
both levels then play that search, as ``hard`` did.

Every level is a spec string for :func:`ludoteca.agents.make_agent`, with an iteration budget
rather than a time budget so that the ladder's games are reproducible. A game whose search
needs another budget overrides a level through its class's ``agent_defaults["levels"]``
(``{"levels": {"expert": "strong:iterations=9000"}}``; ``mcts:xN`` and ``strong:xN`` are N times
the game's tuned budget of that agent); no game is named here. The measured rating of each level
is in each game's ``ladder.json`` (:mod:`ludoteca.agents.ladder`, ``benchmarks/ladder.py``).

**Pace** (:mod:`ludoteca.agents.pace`): in a game whose turn may go on (EXAGON: a tile
with two connections lets the player place another), a program that always goes on empties its
hand in one turn. Such a game gives each level a cap in its ``ladder.json``
(``"pace": {"counted": "placed_this_turn", "turn": {"beginner": 3, ...}}``) and :func:`spec` adds it
to the level's spec (``heuristic:turn=5``): after that many moves the level ends its turn, the way a
person stops. The caps are an input of ``benchmarks/ladder.py`` (kept when it rewrites the file)
and ``benchmarks/ai_turns.py`` measures what they do (docs/strength.md).

**Beyond the ladder's search** (:data:`SOLVED_LEVELS`): ``perfect`` plays a game's exact solution
(:mod:`ludoteca.agents.perfect`), so it exists only where the game is solved for the table's options
and player count; :func:`unavailable` asks the game (never naming it) and says why not. It is rated
on the same scale as the ladder where it plays (the game's ``ladder.json``).

The older names stay valid (:data:`ALIASES`): ``random`` (any legal move), ``heuristic`` (the
``medium`` level) and ``mcts`` (the ``expert`` level, the strongest, as it was before).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ludoteca.registry import game_class

if TYPE_CHECKING:
    from ludoteca.core.game import Game

LEVELS: tuple[str, ...] = ("beginner", "easy", "medium", "hard", "expert")
"""The ladder's levels, weakest first."""

EXPERT_FACTOR = 20
"""The ``expert`` level searches this many times the game's tuned ``strong`` iterations."""

SPECS: Mapping[str, str] = {
    "beginner": "soft:p=0.5",
    "easy": "soft:p=0.8",
    "medium": "heuristic",
    "hard": "strong",
    "expert": f"strong:x{EXPERT_FACTOR}",
}
"""Each level's agent spec (``strong:xN``: N times the game's tuned iterations, see :func:`spec`)."""

ALIASES: Mapping[str, str] = {"random": "random", "heuristic": "medium", "mcts": "expert"}
"""The older level names: ``random`` stays the uniformly random player (not a ladder level), the
others name the level that plays like them."""

SOLVED_LEVELS: tuple[str, ...] = ("perfect",)
"""Levels that play a game's exact solution (their spec is their name): offered only where
:func:`unavailable` says "" for the table's game, options and player count."""


def is_level(name: str) -> bool:
    """True for a ladder level, a level of a solved game or an older level name."""
    return name in SPECS or name in ALIASES or name in SOLVED_LEVELS


def unavailable(level: str, game: Game) -> str:
    """Why the AI ``level`` cannot play ``game`` (built with a table's options and player count),
    translated; "" when it can. Every ladder level plays every game; ``perfect`` only a game solved
    for these options whose solution is at hand (:func:`ludoteca.agents.perfect.unavailable`)."""
    if level in SOLVED_LEVELS:
        from ludoteca.agents.perfect import unavailable as why_not

        return why_not(game, build=False)
    return ""


def canonical(name: str) -> str:
    """The ladder level an older name stands for (``heuristic`` -> ``medium``); other names unchanged."""
    return ALIASES.get(name, name) if name not in SPECS else name


def _tuned_iterations(game: str, agent: str) -> int:
    """The game's tuned iteration budget of ``agent`` (``mcts`` or ``strong``)."""
    from ludoteca.agents import mcts, strong

    fallbacks = {"mcts": mcts.FALLBACKS, "strong": strong.FALLBACKS}[agent]
    defaults = game_class(game).agent_defaults.get(agent, {})
    return int(defaults.get("iterations", fallbacks["iterations"]))


def _multiple(out: str, game: str | None) -> str:
    """``mcts:xN`` / ``strong:xN`` as N times the game's tuned iterations of that agent (the agent
    with its own defaults when no game is given); any other spec unchanged."""
    agent, sep, rest = out.partition(":x")
    if not sep or agent not in ("mcts", "strong") or not rest.isdigit():
        return out
    if game is None:
        return agent
    return f"{agent}:iterations={int(rest) * _tuned_iterations(game, agent)}"


def spec(level: str, game: str | None = None) -> str:
    """The agent spec that plays ``level`` (a ladder level or an older name) in ``game``.

    A spec that is not a level name is returned unchanged (``mcts:iterations=50`` plays itself).
    ``game`` (a game name) applies the game's overrides (``agent_defaults["levels"]``), turns
    ``strong:xN`` (``mcts:xN``) into N times the game's tuned iterations and adds the level's pace in
    that game (``:turn=N``, from its ladder.json); without a game, ``expert`` is plain ``strong`` (the
    tuned budget of whatever game it plays), so pass the game whenever known."""
    name = canonical(level)
    if name not in SPECS:
        return level
    if game is None:
        return _multiple(SPECS[name], None)
    overrides = game_class(game).agent_defaults.get("levels", {})
    out = _multiple(str(overrides.get(name, SPECS[name])), game)
    from ludoteca.agents.ladder import turn_cap

    cap = turn_cap(game, name)
    return out if cap is None or ":turn=" in out else f"{out}:turn={cap}"


def resolve(spec_or_level: str, game: str | None = None) -> str:
    """A ladder level's spec (``medium`` -> ``heuristic``), ``strong:xN``/``mcts:xN`` as N times the
    game's tuned iterations (as the ladder's ``expert`` is written); any other spec unchanged, the
    older names included (``mcts`` stays the agent ``mcts`` with its defaults)."""
    name = spec_or_level.strip().lower() if isinstance(spec_or_level, str) else spec_or_level
    if name in SPECS:
        return spec(name, game)
    if isinstance(name, str) and ":x" in name:  # typed as the ladder writes it: strong:x20, mcts:x5
        return _multiple(name, game)
    return spec_or_level


def specs(game: str) -> dict[str, str]:
    """Every ladder level's spec in ``game``, weakest first."""
    return {level: spec(level, game) for level in LEVELS}

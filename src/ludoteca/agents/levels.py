"""The AI ladder's levels: a name for each strength, the agent spec that plays it (issue 14).

From weakest to strongest:

* ``beginner`` -- ``soft:p=0.1``: a random legal move, the heuristic's move one time in ten (a
  child can beat it);
* ``easy`` -- ``soft:p=0.5``: the heuristic's move half of the time, a random one otherwise;
* ``medium`` -- ``heuristic``: the game's heuristic player (the anchor of the ladder's scale);
* ``hard`` -- ``mcts``: Monte-Carlo tree search with the game's tuned iteration budget
  (``agent_defaults["mcts"]``, 0.03-0.12 s of CPU per move on average, by game);
* ``expert`` -- ``mcts:iterations=N``, three times that budget (0.08-0.34 s of CPU per move on
  average, at most 0.84 s measured; about a second on a loaded server): the strongest the machine affords per move.

Every level is a spec string for :func:`ludoteca.agents.make_agent`, with an iteration budget
rather than a time budget so that the ladder's games are reproducible. A game whose search
needs another budget overrides a level through its class's ``agent_defaults["levels"]``
(``{"levels": {"expert": "mcts:iterations=900"}}``); no game is named here. The measured
rating of each level is in each game's ``ladder.json`` (:mod:`ludoteca.agents.ladder`,
``benchmarks/ladder.py``).

The older names stay valid (:data:`ALIASES`): ``random`` (any legal move), ``heuristic`` (the
``medium`` level) and ``mcts`` (the ``expert`` level, the strongest, as it was before).
"""

from __future__ import annotations

from collections.abc import Mapping

from ludoteca.registry import game_class

LEVELS: tuple[str, ...] = ("beginner", "easy", "medium", "hard", "expert")
"""The ladder's levels, weakest first."""

EXPERT_FACTOR = 3
"""The ``expert`` level searches this many times the game's tuned MCTS iterations."""

SPECS: Mapping[str, str] = {
    "beginner": "soft:p=0.1",
    "easy": "soft:p=0.5",
    "medium": "heuristic",
    "hard": "mcts",
    "expert": f"mcts:x{EXPERT_FACTOR}",
}
"""Each level's agent spec (``mcts:xN``: N times the game's tuned iterations, see :func:`spec`)."""

ALIASES: Mapping[str, str] = {"random": "random", "heuristic": "medium", "mcts": "expert"}
"""The older level names: ``random`` stays the uniformly random player (not a ladder level), the
others name the level that plays like them."""

def is_level(name: str) -> bool:
    """True for a ladder level or an older level name."""
    return name in SPECS or name in ALIASES


def canonical(name: str) -> str:
    """The ladder level an older name stands for (``heuristic`` -> ``medium``); other names unchanged."""
    return ALIASES.get(name, name) if name not in SPECS else name


def _mcts_iterations(game: str) -> int:
    from ludoteca.agents.mcts import FALLBACKS

    defaults = game_class(game).agent_defaults.get("mcts", {})
    return int(defaults.get("iterations", FALLBACKS["iterations"]))


def spec(level: str, game: str | None = None) -> str:
    """The agent spec that plays ``level`` (a ladder level or an older name) in ``game``.

    A spec that is not a level name is returned unchanged (``mcts:iterations=50`` plays itself).
    ``game`` (a game name) applies the game's overrides (``agent_defaults["levels"]``) and turns
    ``mcts:xN`` into N times the game's tuned iterations; without a game, ``expert`` is plain
    ``mcts`` (the tuned budget of whatever game it plays), so pass the game whenever known."""
    name = canonical(level)
    if name not in SPECS:
        return level
    if game is None:
        out = SPECS[name]
        return "mcts" if out.startswith("mcts:x") else out
    overrides = game_class(game).agent_defaults.get("levels", {})
    out = str(overrides.get(name, SPECS[name]))
    if out.startswith("mcts:x"):
        factor = int(out[len("mcts:x"):])
        out = f"mcts:iterations={factor * _mcts_iterations(game)}"
    return out


def resolve(spec_or_level: str, game: str | None = None) -> str:
    """A ladder level's spec (``medium`` -> ``heuristic``); any other spec unchanged, the older
    names included (``mcts`` stays the agent ``mcts`` with its defaults)."""
    name = spec_or_level.strip().lower() if isinstance(spec_or_level, str) else spec_or_level
    return spec(name, game) if name in SPECS else spec_or_level


def specs(game: str) -> dict[str, str]:
    """Every ladder level's spec in ``game``, weakest first."""
    return {level: spec(level, game) for level in LEVELS}

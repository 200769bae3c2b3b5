"""The rating scale shared by players and AI levels: openskill's Plackett-Luce model.

Everything rated in ludoteca — an account's rating per game and player count, and each AI level's
measured rating on the ladder (``benchmarks/ladder.py``, stored in each game's ``ladder.json``) —
is an openskill ``(mu, sigma)`` pair on one scale, so "medium ≈ 1,200" and a player's 1,250 can be
compared. People read it as a whole number, :func:`display`, an Elo-like figure: a newcomer shows
:data:`DISPLAY_BASE`, and :data:`DISPLAY_PER_MU` points per unit of mu make 400 points about 10:1
odds between two well-measured players (openskill's default beta = 25/6, so c = sqrt(2) beta and
10:1 is about 13.6 mu).

A result is a list of ranks, one per seat (0 = first; equal ranks = a shared win or a tie, as the
games' ``returns()`` say): :func:`ranks_from_returns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MU: float = 25.0
"""openskill's default mean for a newcomer."""
SIGMA: float = 25.0 / 3.0
"""openskill's default uncertainty for a newcomer."""
DISPLAY_BASE: int = 1500
"""The displayed rating of mu = 25 (a newcomer)."""
DISPLAY_PER_MU: float = 30.0
"""Displayed points per unit of mu."""
PROVISIONAL_GAMES: int = 10
"""A rating stays provisional until this many rated games ..."""
PROVISIONAL_SIGMA: float = 4.0
"""... or while sigma is above this."""


@dataclass(frozen=True, slots=True)
class Rating:
    """One rating: openskill's mean and uncertainty, and the games it rests on."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def display(self) -> int:
        return display(self.mu)

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES or self.sigma > PROVISIONAL_SIGMA

    def interval(self, z: float = 1.96) -> tuple[int, int]:
        """The displayed rating ± ``z`` sigma, as whole numbers."""
        return display(self.mu - z * self.sigma), display(self.mu + z * self.sigma)

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval()
        return {"mu": self.mu, "sigma": self.sigma, "games": self.games, "display": self.display,
                "low": low, "high": high, "provisional": self.provisional}


def display(mu: float) -> int:
    """The whole-number rating people read for an openskill mean ``mu``."""
    return round(DISPLAY_BASE + DISPLAY_PER_MU * (mu - MU))


def model() -> Any:
    """openskill's Plackett-Luce model with its defaults (mu 25, sigma 25/3, beta 25/6)."""
    from openskill.models import PlackettLuce

    return PlackettLuce()


def ranks_from_returns(returns: Sequence[float]) -> list[int]:
    """Ranks (0 = best) from a game's returns: equal returns share a rank (a shared win, a tie)."""
    order = sorted(set(returns), reverse=True)
    return [order.index(value) for value in returns]


def rate(ratings: Sequence[Rating], returns: Sequence[float]) -> list[Rating]:
    """Every seat's new rating after one game (one seat per team; ``returns`` as the game's)."""
    if len(ratings) != len(returns) or len(ratings) < 2:
        raise ValueError("rate() needs one rating and one return per seat, at least two seats")
    m = model()
    teams = [[m.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    new = m.rate(teams, ranks=ranks_from_returns(returns))
    return [Rating(team[0].mu, team[0].sigma, old.games + 1) for team, old in zip(new, ratings, strict=True)]

"""TRI's observation vector for the research adapters (see :mod:`ludoteca.core.encoding`)."""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.encoding import INF, Encoder
from ludoteca.core.game import Game

_CARDS = {0: 0, 2: 1, 3: 2, 4: 3}
_PHASES = ("place", "act", "battle", "income_roll", "tiebreak", "over")
_STEPS = ("attacker_roll", "defender_roll", "attacker_card", "defender_card", "void")


class TriEncoder(Encoder):
    """per triangle: empty or whose; used teleports; hands; battle as the observer sees it.

    A battle value the observer may not see (the opponent's roll or card before the reveal)
    is null in ``observation(seat)``: its one-hot block stays 0 and its "unknown" flag is 1.
    """

    def _layout(self) -> None:
        n = self.num_players
        self.side = side = self.game.options["size"]
        self.T = T = 4 * side * side
        self.o_owner = self._add("triangle holder per triangle: empty, then relative seats", (n + 1) * T)
        self.o_used = self._add("teleport used per square", side * side)
        self.o_hands = self._add("cards per seat x value (0, 2, 3, 4) / 4", 4 * n, high=INF)
        self.o_alive = self._add("seat still in the game", n)
        self.o_to_move = self._add("active player (one-hot seat)", n)
        self.o_round = self._add("round mod 3 (income after every third round)", 3)
        self.o_phase = self._add("phase (place, act, battle, income_roll, tiebreak, over)", 6)
        self.o_target = self._add("battle target (one-hot triangle)", T)
        self.o_att = self._add("battle attacker (one-hot seat)", n)
        self.o_def = self._add("battle defender (one-hot seat)", n)
        self.o_dice = self._add("attacker dice (1, 2, 3)", 3)
        self.o_step = self._add("battle step", 5)
        self.o_aroll = self._add("attacker roll 1..6, then unknown", 7)
        self.o_droll = self._add("defender roll 1..6, then unknown", 7)
        self.o_acard = self._add("attacker card (0, 2, 3, 4), then unknown", 5)
        self.o_dcard = self._add("defender card (0, 2, 3, 4), then unknown", 5)
        self._index = {f"{t // 4 // side},{t // 4 % side},{'NESW'[t % 4]}": t for t in range(T)}
        self._empty = [1.0] * T

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        n = self.num_players
        n1 = n + 1
        o = self.o_owner
        out[o:o + n1 * self.T:n1] = self._empty  # every triangle empty ...
        index = self._index
        for key, holder in obs["owner"].items():  # ... but the owned ones
            at = o + n1 * index[key]
            out[at] = 0.0
            out[at + 1 + (holder - seat) % n] = 1.0
        for key in obs["teleports_used"]:
            r, c = key.split(",")
            out[self.o_used + int(r) * self.side + int(c)] = 1.0
        for s, hand in enumerate(obs["hands"]):
            base = self.o_hands + 4 * self.rel(s, seat)
            for v in hand:
                out[base + _CARDS[v]] += 0.25
        for s, alive in enumerate(obs["alive"]):
            if alive:
                out[self.o_alive + self.rel(s, seat)] = 1.0
        phase = obs["phase"]
        if phase != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_round + obs["round"] % 3] = 1.0
        out[self.o_phase + _PHASES.index(phase)] = 1.0
        battle = obs.get("battle")
        if battle:
            self._fill_battle(battle, seat, out)

    def _fill_battle(self, battle: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        out[self.o_target + self._index[battle["target"]]] = 1.0
        out[self.o_att + self.rel(battle["attacker"], seat)] = 1.0
        out[self.o_def + self.rel(battle["defender"], seat)] = 1.0
        out[self.o_dice + battle["dice"] - 1] = 1.0
        out[self.o_step + _STEPS.index(battle["step"])] = 1.0
        hidden = battle.get("hidden") or ()
        for key, off in (("attacker_roll", self.o_aroll), ("defender_roll", self.o_droll)):
            v = battle.get(key)
            if v is not None:
                out[off + v - 1] = 1.0
            elif key in hidden:
                out[off + 6] = 1.0
        for key, off in (("attacker_card", self.o_acard), ("defender_card", self.o_dcard)):
            v = battle.get(key)
            if v is not None:
                out[off + _CARDS[v]] = 1.0
            elif key in hidden:
                out[off + 4] = 1.0


def decisions_per_turn(game: Game) -> int:
    """At most four decisions a turn: act, the attacker's card, the defender's card, a void."""
    return 4


ENCODER = TriEncoder

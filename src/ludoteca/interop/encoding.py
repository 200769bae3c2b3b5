"""Fixed-size observation tensors for the research adapters (OpenSpiel, PettingZoo).

Each encoder turns the JSON that ``state.observation(seat)`` returns (RULES.md's canonical
position, with whatever ``seat`` may not see already removed by the engine) into a flat
``float32`` vector whose length depends only on the game's options. Reading the canonical JSON,
not engine internals, means an encoder never sees a secret the engine hides (TRI's battle
card and roll) and keeps working when an engine's internals change.

Conventions, the same for every game:

* Seats are **relative** to the observer: block ``k`` of a per-seat feature describes seat
  ``(seat + k) % players`` (block 0 is the observer itself; a spectator, ``seat=None``, sees
  the seats in their own order).
* One-hot blocks are 0/1. Counts are scaled by a fixed factor and are not clipped: the
  upper bound of such an element (:attr:`Encoder.high`) is ``inf``. Coordinates may be
  negative (:attr:`Encoder.low`).
* :meth:`Encoder.segments` names every block (name, offset, length) for anyone building a
  network on the tensor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ludoteca.core.game import Game


class Encoder:
    """Position JSON -> flat float32 vector of a fixed size."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.num_players = game.num_players
        self._segments: list[tuple[str, int, int]] = []
        self._low: list[float] = []
        self._high: list[float] = []
        self.size = 0
        self._layout()
        self.low = np.asarray(self._low, dtype=np.float32)
        self.high = np.asarray(self._high, dtype=np.float32)

    # --- layout ------------------------------------------------------------------------
    def _add(self, name: str, length: int, low: float = 0.0, high: float = 1.0) -> int:
        offset = self.size
        self._segments.append((name, offset, length))
        self._low.extend([low] * length)
        self._high.extend([high] * length)
        self.size += length
        return offset

    def _layout(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def segments(self) -> list[tuple[str, int, int]]:
        """``[(name, offset, length)]`` of every block of the vector, in order."""
        return list(self._segments)

    # --- encoding ----------------------------------------------------------------------
    def encode(self, obs: Mapping[str, Any], seat: int | None, out: np.ndarray | None = None) -> np.ndarray:
        """The vector of ``obs`` (``state.observation(seat)``) as ``seat`` sees it."""
        if out is None:
            out = np.zeros(self.size, dtype=np.float32)
        else:
            out.fill(0.0)
        self._fill(obs, 0 if seat is None else seat, out)
        return out

    def _fill(self, obs: Mapping[str, Any], seat: int, out: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def rel(self, who: int, seat: int) -> int:
        return (who - seat) % self.num_players


# --- exactly ------------------------------------------------------------------------------

_EXACTLY_VALUES = ("5", "10", "20", "50")
_EXACTLY_PHASES = ("start_roll", "roll", "move", "over")
_EXACTLY_ROLLS = ("?", 50, 20, 10, 5)


class ExactlyEncoder(Encoder):
    """bank coins, each pile's coins and total, euros, who moves, phase, the die."""

    def _layout(self) -> None:
        n = self.num_players
        self.o_bank = self._add("bank coins per value / 10", 4)
        self.o_piles = self._add("pile coins per seat x value / 10", 4 * n)
        self.o_totals = self._add("pile total per seat / 200 cents", n, high=np.inf)
        self.o_euros = self._add("euros per seat / 3", n, high=np.inf)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (start_roll, roll, move, over)", 4)
        self.o_roll = self._add("die during move (?, 50, 20, 10, 5)", 5)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: np.ndarray) -> None:
        n = self.num_players
        bank = obs["bank"]
        for i, k in enumerate(_EXACTLY_VALUES):
            out[self.o_bank + i] = bank[k] / 10.0
        for s, pile in enumerate(obs["piles"]):
            r = self.rel(s, seat)
            total = 0
            for i, k in enumerate(_EXACTLY_VALUES):
                c = pile[k]
                out[self.o_piles + 4 * r + i] = c / 10.0
                total += c * int(k)
            out[self.o_totals + r] = total / 200.0
        for s, e in enumerate(obs["euros"]):
            out[self.o_euros + self.rel(s, seat)] = e / 3.0
        if obs["phase"] != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat) % n] = 1.0
        out[self.o_phase + _EXACTLY_PHASES.index(obs["phase"])] = 1.0
        roll = obs.get("roll")
        if roll in _EXACTLY_ROLLS:
            out[self.o_roll + _EXACTLY_ROLLS.index(roll)] = 1.0


# --- TOHM ---------------------------------------------------------------------------------

_TOHM_PHASES = ("roll", "act", "over")


class TohmEncoder(Encoder):
    """per cell: its number (3-6) and who holds it; supplies, trophies, who moves, the die."""

    def _layout(self) -> None:
        n = self.num_players
        probe = self.game.new_initial_state().to_json()
        self.rows, self.cols = probe["rows"], probe["cols"]
        cells = self.rows * self.cols
        self.o_number = self._add("cell number one-hot (3, 4, 5, 6) per cell", 4 * cells)
        self.o_cell = self._add("cell holder per cell: empty, then relative seats", (n + 1) * cells)
        self.o_supply = self._add("tokens in supply per seat / 5", n)
        self.o_trophies = self._add("trophies per seat / 10", n)
        self.o_left = self._add("trophies left / 10", 1)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (roll, act, over)", 3)
        self.o_roll = self._add("die during act (1..6)", 6)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: np.ndarray) -> None:
        n1 = self.num_players + 1
        i = 0
        for lrow, brow in zip(obs["layout"], obs["board"], strict=True):
            for number, holder in zip(lrow, brow, strict=True):
                out[self.o_number + 4 * i + number - 3] = 1.0
                out[self.o_cell + n1 * i + (0 if holder is None else 1 + self.rel(holder, seat))] = 1.0
                i += 1
        for s, x in enumerate(obs["supply"]):
            out[self.o_supply + self.rel(s, seat)] = x / 5.0
        for s, x in enumerate(obs["trophies"]):
            out[self.o_trophies + self.rel(s, seat)] = x / 10.0
        out[self.o_left] = obs["trophies_left"] / 10.0
        if obs["phase"] != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_phase + _TOHM_PHASES.index(obs["phase"])] = 1.0
        roll = obs.get("roll")
        if isinstance(roll, int) and 1 <= roll <= 6:
            out[self.o_roll + roll - 1] = 1.0


# --- TRI ----------------------------------------------------------------------------------

_TRI_DIRS = {"N": 0, "E": 1, "S": 2, "W": 3}
_TRI_CARDS = {0: 0, 2: 1, 3: 2, 4: 3}
_TRI_PHASES = ("place", "act", "battle", "income_roll", "tiebreak", "over")
_TRI_STEPS = ("attacker_roll", "defender_roll", "attacker_card", "defender_card", "void")


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
        self.o_hands = self._add("cards per seat x value (0, 2, 3, 4) / 4", 4 * n, high=np.inf)
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

    def _tri(self, key: str) -> int:
        return self._index[key]

    def _fill(self, obs: Mapping[str, Any], seat: int, out: np.ndarray) -> None:
        n1 = self.num_players + 1
        o = self.o_owner
        out[o:o + n1 * self.T:n1] = 1.0  # every triangle empty ...
        owner = obs["owner"]
        if owner:  # ... but the owned ones
            index = self._index
            n = self.num_players
            at = o + n1 * np.fromiter((index[k] for k in owner), dtype=np.intp, count=len(owner))
            out[at] = 0.0
            out[at + 1 + np.fromiter(((h - seat) % n for h in owner.values()), dtype=np.intp,
                                     count=len(owner))] = 1.0
        for key in obs["teleports_used"]:
            r, c = key.split(",")
            out[self.o_used + int(r) * self.side + int(c)] = 1.0
        for s, hand in enumerate(obs["hands"]):
            base = self.o_hands + 4 * self.rel(s, seat)
            for v in hand:
                out[base + _TRI_CARDS[v]] += 0.25
        for s, alive in enumerate(obs["alive"]):
            if alive:
                out[self.o_alive + self.rel(s, seat)] = 1.0
        phase = obs["phase"]
        if phase != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_round + obs["round"] % 3] = 1.0
        out[self.o_phase + _TRI_PHASES.index(phase)] = 1.0
        battle = obs.get("battle")
        if battle:
            out[self.o_target + self._tri(battle["target"])] = 1.0
            out[self.o_att + self.rel(battle["attacker"], seat)] = 1.0
            out[self.o_def + self.rel(battle["defender"], seat)] = 1.0
            out[self.o_dice + battle["dice"] - 1] = 1.0
            step = _TRI_STEPS.index(battle["step"])
            out[self.o_step + step] = 1.0
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
                    out[off + _TRI_CARDS[v]] = 1.0
                elif key in hidden:
                    out[off + 4] = 1.0


# --- EXAGON -------------------------------------------------------------------------------

_EXAGON_PHASES = ("deal", "opening", "turn", "over")


class ExagonEncoder(Encoder):
    """per tile (in the game's tile order): where it is, and on the table its cell and rotation.

    A tile is in a (relative) seat's hand, on the table, or elsewhere (not dealt yet, or set
    aside unseen). Cells are axial ``[q, r]`` scaled by the number of tiles (``low`` -1).
    The tiles' numbers are fixed by the game's options, so a tile's identity (its block)
    stands for its sides.
    """

    def _layout(self) -> None:
        n = self.num_players
        probe = self.game.new_initial_state().to_json()
        self.tile_ids = [t["id"] for t in probe["tiles"]]
        self.index = {tid: i for i, tid in enumerate(self.tile_ids)}
        self.N = N = len(self.tile_ids)
        self.o_where = self._add("tile place per tile: seats' hands (relative), table, elsewhere",
                                 (n + 2) * N)
        self.o_at = self._add("table cell [q, r] per tile / tiles", 2 * N, low=-np.inf, high=np.inf)
        self.o_rot = self._add("table rotation per tile (one-hot 0..5)", 6 * N)
        self.o_hand_sizes = self._add("tiles in hand per seat / tiles", n)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (deal, opening, turn, over)", 4)
        self.o_placed = self._add("tiles placed this turn / tiles", 1, high=np.inf)
        self.o_bonus = self._add("bonus tiles pending / 3", 1, high=np.inf)
        self.o_passes = self._add("passes in a row / players (the blocked rule)", 1, high=np.inf)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: np.ndarray) -> None:
        n = self.num_players
        w = n + 2
        ow = self.o_where
        located = np.zeros(self.N, dtype=bool)
        for s, hand in enumerate(obs["hands"]):
            r = self.rel(s, seat)
            out[self.o_hand_sizes + r] = len(hand) / self.N
            for tid in hand:
                i = self.index[tid]
                out[ow + w * i + r] = 1.0
                located[i] = True
        for placed in obs["table"]:
            i = self.index[placed["tile"]]
            out[ow + w * i + n] = 1.0
            located[i] = True
            q, r = placed["at"]
            out[self.o_at + 2 * i] = q / self.N
            out[self.o_at + 2 * i + 1] = r / self.N
            out[self.o_rot + 6 * i + placed["rot"] % 6] = 1.0
        for i in np.flatnonzero(~located):
            out[ow + w * i + n + 1] = 1.0
        phase = obs["phase"]
        if phase != "over" and obs.get("to_move") is not None:
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_phase + _EXAGON_PHASES.index(phase)] = 1.0
        out[self.o_placed] = (obs.get("placed_this_turn") or 0) / self.N
        out[self.o_bonus] = (obs.get("bonus") or 0) / 3.0
        out[self.o_passes] = (obs.get("passes") or 0) / n


ENCODERS: dict[str, type[Encoder]] = {
    "exactly": ExactlyEncoder,
    "tohm": TohmEncoder,
    "tri": TriEncoder,
    "exagon": ExagonEncoder,
}


def make_encoder(game: Game) -> Encoder:
    """The encoder of ``game`` (a ludoteca Game with its options resolved)."""
    try:
        cls = ENCODERS[game.name]
    except KeyError:
        raise ValueError(f"no observation encoder for the game {game.name!r}") from None
    return cls(game)

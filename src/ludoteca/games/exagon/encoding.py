"""EXAGON's observation vector and the comma-free text of its tile set, for the research
adapters (see :mod:`ludoteca.core.encoding`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.encoding import INF, Encoder
from ludoteca.core.game import Game

_PHASES = ("deal", "opening", "turn", "over")
_TILES_TEXT = re.compile(r"^-?\d+:[1-9JX]{6}:\d+:\d+(;-?\d+:[1-9JX]{6}:\d+:\d+)*$")


class ExagonEncoder(Encoder):
    """per tile (in the game's tile order): where it is, and on the table its cell and rotation.

    A tile is in a (relative) seat's hand, on the table, or elsewhere (not dealt yet, or set
    aside unseen). Cells are axial ``[q, r]`` scaled by the number of tiles (``low`` -inf).
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
        self.o_at = self._add("table cell [q, r] per tile / tiles", 2 * N, low=-INF, high=INF)
        self.o_rot = self._add("table rotation per tile (one-hot 0..5)", 6 * N)
        self.o_hand_sizes = self._add("tiles in hand per seat / tiles", n)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (deal, opening, turn, over)", 4)
        self.o_placed = self._add("tiles placed this turn / tiles", 1, high=INF)
        self.o_bonus = self._add("bonus tiles pending / 3", 1, high=INF)
        self.o_passes = self._add("passes in a row / players (the blocked rule)", 1, high=INF)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        n = self.num_players
        w = n + 2
        ow = self.o_where
        located = [False] * self.N
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
        for i, here in enumerate(located):
            if not here:
                out[ow + w * i + n + 1] = 1.0
        phase = obs["phase"]
        if phase != "over" and obs.get("to_move") is not None:
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_phase + _PHASES.index(phase)] = 1.0
        out[self.o_placed] = (obs.get("placed_this_turn") or 0) / self.N
        out[self.o_bonus] = (obs.get("bonus") or 0) / 3.0
        out[self.o_passes] = (obs.get("passes") or 0) / n


def tiles_text(tiles: list[Mapping[str, Any]]) -> str:
    """A tile list as a comma-free game-parameter value: ``id:sides:star:star_points`` joined
    by ``;`` ("0:276768:36:4;1:..."). OpenSpiel's game strings split parameters on commas."""
    return ";".join(f"{t['id']}:{''.join(str(x) for x in t['sides'])}:{t['star']}:{t['star_points']}"
                    for t in tiles)


def tiles_from_text(text: str) -> Any:
    """Inverse of :func:`tiles_text`; any other text (JSON text, a path) is returned as it is,
    for the engine to read."""
    if not _TILES_TEXT.match(text):
        return text
    tiles = []
    for item in text.split(";"):
        tid, sides, star, points = item.split(":")
        tiles.append({"id": int(tid), "sides": [ch if ch in "JX" else int(ch) for ch in sides],
                      "star": int(star), "star_points": int(points)})
    return tiles


def _tiles_text_of(game: Game) -> str:
    return tiles_text(game.new_initial_state().to_json()["tiles"])


def decisions_per_turn(game: Game) -> int:
    """Each placement, each gift, and ``stop``: at most ``2 * tiles + 1`` decisions a turn."""
    return 2 * len(game.new_initial_state().to_json()["tiles"]) + 1


ENCODER = ExagonEncoder
OPTION_TEXTS = {"tiles": (_tiles_text_of, tiles_from_text)}
UNOFFERED_OPTIONS = ("tournament",)
"""A tournament plays one-shot games until someone has 50 points: its length has no bound."""

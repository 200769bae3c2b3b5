"""Who sees which log entry (ludoteca.core.visibility), shared by the web tables and the terminal.

Expected values come from RULES.md: in a TRI battle each side knows only its own roll and its own
card until both cards are revealed; hands are public; exactly and TOHM hide nothing.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ludoteca.core.chance import sample_chance
from ludoteca.core.game import State
from ludoteca.core.visibility import LogVisibility, has_hidden_information, hidden_now, hidden_part
from ludoteca.registry import load_game

MISSING = object()


def tri_position(owner: dict[str, int]) -> dict[str, Any]:
    return {"game": "tri", "players": 2, "size": 4, "owner": owner, "hands": [[0, 2, 3, 4], [0, 2, 3, 4]],
            "alive": [True, True], "teleports_used": [], "to_move": 0, "round": 2, "turn": 10,
            "phase": "act", "battle": None}


class Log:
    """A game driven by action texts, with every entry noted for seats 0, 1 and spectators."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.vis = LogVisibility([0, 1, None])
        self.vis.start(state)
        self.n = 0

    def play(self, text: str) -> dict[Any, list[int]]:
        s = self.state
        seat = None if s.is_chance_node() else s.current_player()
        action = s.action_from_string(text)
        before = s.clone()
        data = s.action_to_json(action)
        s.apply_action(action)
        revealed = self.vis.note(self.n, seat, data, action, before, s)
        self.n += 1
        return revealed

    def hidden(self) -> dict[Any, list[int]]:
        return {v: sorted(h) for v, h in self.vis.hidden.items()}


def test_hidden_part_lists_what_an_observation_hides() -> None:
    full = {"a": 1, "b": {"x": 5, "y": None}, "c": [1, 2], "aside": [3]}
    obs = {"a": 1, "b": {"x": None, "y": None, "hidden": ["x"]}, "c": [1, 2]}
    assert hidden_part(obs, full) == [(("b", "x"), 5), (("aside",), [3])]
    assert hidden_part(full, full) == []


@pytest.mark.parametrize(("name", "secret"), [("exactly", False), ("tohm", False), ("tri", True), ("exagon", True)])
def test_which_games_have_hidden_information(name: str, secret: bool) -> None:
    assert has_hidden_information(load_game(name).new_initial_state()) is secret


def test_tri_battle_each_side_sees_only_its_own_roll_and_card_until_the_reveal() -> None:
    game = load_game("tri", players=2, size=4)
    log = Log(game.state_from_json(tri_position({"1,1,E": 0, "1,2,W": 1, "1,2,N": 1})))
    assert log.play("atk 1,2,W") == {}          # 0: the attack is public
    log.play("roll 4")                          # 1: the attacker's roll
    log.play("roll 5")                          # 2: the defender's roll
    assert log.hidden() == {0: [2], 1: [1], None: [1, 2]}
    log.play("card 3")                          # 3: the attacker's card, secret
    assert log.hidden() == {0: [2], 1: [1, 3], None: [1, 2, 3]}
    assert hidden_now(log.state, 0) == [(("battle", "defender_roll"), 5)]
    # 4: the defender's card: both cards are revealed (4+3 = 5+2, the defender holds: a void follows)
    revealed = log.play("card 2")
    assert revealed == {0: [2], 1: [1, 3], None: [1, 2, 3]}
    assert log.hidden() == {0: [], 1: [], None: []}
    assert log.state.to_json()["battle"]["step"] == "void"
    assert log.play("void 1,1,E") == {}
    assert log.hidden() == {0: [], 1: [], None: []}


def test_tri_battle_won_by_the_attacker_reveals_everything() -> None:
    game = load_game("tri", players=2, size=4)
    log = Log(game.state_from_json(tri_position({"1,1,E": 0, "1,2,W": 1, "1,2,N": 1})))
    for text in ("atk 1,2,W", "roll 4", "roll 5", "card 4"):
        log.play(text)
    assert log.play("card 2") == {0: [2], 1: [1, 3], None: [1, 2, 3]}  # 8 > 7: the battle is over
    assert log.state.to_json()["battle"] is None


def test_reveal_all_at_the_end_returns_what_was_hidden() -> None:
    game = load_game("tri", players=2, size=4)
    log = Log(game.state_from_json(tri_position({"1,1,E": 0, "1,2,W": 1})))
    for text in ("atk 1,2,W", "roll 4", "roll 5"):
        log.play(text)
    assert log.vis.hidden_from_any(1) and log.vis.is_hidden(1, 1) and not log.vis.is_hidden(1, 0)
    assert log.vis.reveal_all() == {0: [2], 1: [1], None: [1, 2]}
    assert not any(log.vis.hidden_from_any(i) for i in range(3))


def _at(data: Any, path: tuple) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return MISSING
    return data


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), players=st.integers(2, 3))
def test_no_log_entry_tells_a_seat_what_its_observation_hides(seed: int, players: int) -> None:
    """Property over random TRI games: while a value is hidden from a seat, the entry that set it is
    hidden from that seat too (unless the seat made it, or it was the only legal choice, so the
    seat knows it anyway: an attacker holding one card value); when nothing is hidden, no entry is."""
    rng = random.Random(seed)
    state = load_game("tri", players=players, turn_limit=60).new_initial_state()
    viewers: list[int | None] = [*range(players), None]
    vis = LogVisibility(viewers)
    vis.start(state)
    entries: list[tuple[int | None, dict, dict, bool]] = []  # (seat, full before, full after, forced)
    clear_since = dict.fromkeys(viewers, 0)           # first entry after the viewer last saw everything
    while not state.is_terminal():
        seat = None if state.is_chance_node() else state.current_player()
        action = sample_chance(state, rng) if seat is None else rng.choice(state.legal_actions())
        before, full_before = state.clone(), state.to_json()
        forced = len(state.chance_outcomes() if seat is None else state.legal_actions()) == 1
        data = state.action_to_json(action)
        state.apply_action(action)
        vis.note(len(entries), seat, data, action, before, state)
        entries.append((seat, full_before, state.to_json(), forced))
        for v in viewers:
            secret = hidden_now(state, v)
            if not secret:
                assert not vis.hidden[v], f"viewer {v} sees everything but entries {vis.hidden[v]} stay hidden"
                clear_since[v] = len(entries)
                continue
            for path, value in secret:
                for i in range(clear_since[v], len(entries)):
                    who, fb, fa, forced = entries[i]
                    if who != v and not forced and _at(fa, path) == value and _at(fb, path) != value:
                        assert vis.is_hidden(i, v), f"entry {i} shows viewer {v} the hidden {path}={value}"

"""TOHM for two players on the 3x3 board, solved (``games/tohm/solve.py``) and the ``perfect`` agent.

The solution follows the rules: the Bellman equations hold on random positions, computed here with
the Python engine's own legal actions and ``apply_action`` (RULES.md section 3: a roll 1-6 each 1/6,
then the mover's best action; the game's returns at the end, a shared win 1/2). Small cases are
checked by hand; ``perfect`` beats ``strong`` in a seeded match and agrees with itself.
"""

from __future__ import annotations

import random

import pytest

from ludoteca.agents import make_agent
from ludoteca.agents.perfect import PerfectAgent
from ludoteca.games.tohm import TohmGame, TohmState, solve
from ludoteca.i18n import use_language
from ludoteca.registry import load_game

GAME = TohmGame(players=2)
SOLUTION = solve.solution(GAME)


def position(board: list[list[int | None]], trophies: tuple[int, int], to_move: int = 0,
             roll: int | None = None) -> TohmState:
    """A 3x3 two-player position (supplies from the board), before the roll or with ``roll``."""
    supply = [5 - sum(row.count(p) for row in board) for p in range(2)]
    return GAME.state_from_json({
        "game": "tohm", "players": 2, "rows": 3, "cols": 3, "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 6]],
        "board": board, "supply": supply, "trophies": list(trophies), "trophies_left": 10 - sum(trophies),
        "to_move": to_move, "phase": "roll" if roll is None else "act", "roll": roll, "turn": 0})


def bellman(state: TohmState) -> float:
    """The mover's value by one step of the rules, read with the Python engine only."""
    seat = state.to_move
    total = 0.0
    for face, chance in state.chance_outcomes():
        rolled = state.clone()
        rolled.apply_action(face)
        best = -1.0
        for action in rolled.legal_actions():
            after = rolled.clone()
            after.apply_action(action)
            value = after.returns()[seat] if after.is_terminal() else SOLUTION.values(after)[seat]
            best = max(best, value)
        total += chance * best
    return total


def random_positions(count: int, seed: int) -> list[TohmState]:
    """Positions before a roll met in random games (every trophy count appears)."""
    rng = random.Random(seed)
    out: list[TohmState] = []
    while len(out) < count:
        state = GAME.new_initial_state()
        while not state.is_terminal() and len(out) < count:
            if state.is_chance_node() and rng.random() < 0.1:
                out.append(state.clone())
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    return out


def test_bellman_equations_hold_on_random_positions() -> None:
    for state in random_positions(300, seed=26):
        seat = state.to_move
        assert SOLUTION.values(state)[seat] == pytest.approx(bellman(state), abs=1e-10)


def test_bellman_on_random_boards_and_both_seats() -> None:
    rng = random.Random(7)
    for _ in range(200):
        cells: list[int | None] = [None] * 9
        for p in (0, 1):
            for i in rng.sample([i for i in range(9) if cells[i] is None], rng.randrange(0, 5)):
                cells[i] = p
        t0 = rng.randrange(0, 10)
        t1 = rng.randrange(0, 10 - t0)
        state = position([cells[0:3], cells[3:6], cells[6:9]], (t0, t1), to_move=rng.randrange(2))
        values = SOLUTION.values(state)
        assert sum(values) == pytest.approx(1.0, abs=1e-12)
        assert values[state.to_move] == pytest.approx(bellman(state), abs=1e-10)


def test_the_tris_that_gives_the_last_trophy_wins_outright() -> None:
    # seat 0 has (0,0)=3 and (0,1)=4; a 5 on (0,2) completes the top row: the tenth trophy, 6 to 4
    state = position([[0, 0, None], [1, None, None], [None, 1, None]], (5, 4), roll=5)
    values = SOLUTION.action_values(state)
    place_02 = state.action_from_json({"place": [0, 2]})
    place_10 = state.action_from_json({"place": [1, 0]})
    assert set(values) == {place_02}  # (1,0), the other 5, is taken by seat 1
    assert values[place_02] == 1.0
    state = position([[0, 0, None], [None, None, None], [None, 1, None]], (5, 4), roll=5)
    values = SOLUTION.action_values(state)
    assert values[place_02] == 1.0 and values[place_10] < 1.0
    assert make_agent("perfect", seed=1, game="tohm").step(state) == place_02


def test_the_last_trophy_at_five_all_is_a_shared_win() -> None:
    state = position([[0, 0, None], [None, None, None], [None, 1, None]], (4, 5), roll=5)
    assert SOLUTION.action_values(state)[state.action_from_json({"place": [0, 2]})] == 0.5


def test_nine_trophies_to_nil_is_a_sure_win() -> None:
    # seat 0 leads 9-0 with one trophy left: it cannot lose on trophies (at best seat 1 reaches 1)
    state = position([[None] * 3, [None] * 3, [None] * 3], (9, 0), to_move=1)
    assert SOLUTION.values(state) == pytest.approx([1.0, 0.0], abs=1e-10)


def test_first_player_advantage_is_stable() -> None:
    value = SOLUTION.values(GAME.new_initial_state())
    assert 0.5 < value[0] < 0.53 and value[0] + value[1] == pytest.approx(1.0)


def play(agents: list[PerfectAgent | object], seed: int, game: TohmGame = GAME) -> list[float]:
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.randrange(1, 7))
        else:
            state.apply_action(agents[state.current_player()].step(state))  # type: ignore[attr-defined]
    return state.returns()


def test_perfect_beats_strong() -> None:
    # 40 games: 20 dice sequences, each played with perfect in either seat (the dice's luck cancels)
    points = 0.0
    games = 40
    for g in range(games):
        perfect, strong = make_agent("perfect", seed=g, game="tohm"), make_agent("strong", seed=g, game="tohm")
        seat = g % 2
        returns = play([perfect, strong] if seat == 0 else [strong, perfect], seed=1000 + g // 2)
        points += returns[seat]
    assert points > games / 2


def test_perfect_agrees_with_itself() -> None:
    one, other = PerfectAgent(seed=1), PerfectAgent(seed=2)
    rng = random.Random(3)
    for state in random_positions(60, seed=5):
        state.apply_action(rng.randrange(1, 7))
        values = SOLUTION.action_values(state)
        best = max(values.values())
        assert values[one.step(state)] == pytest.approx(best, abs=1e-9)
        assert values[other.step(state)] == pytest.approx(best, abs=1e-9)


def test_perfect_refuses_a_game_without_a_solution_in_both_languages() -> None:
    state = load_game("tohm", players=3).new_initial_state()
    state.apply_action(3)
    with pytest.raises(ValueError, match="3x3"):
        PerfectAgent(seed=1).step(state)
    other = load_game("tri").new_initial_state()
    while other.is_chance_node():
        other.apply_action(other.legal_actions()[0])
    use_language("it")
    try:
        with pytest.raises(ValueError, match="giocatore perfetto"):
            PerfectAgent(seed=1).step(other)
    finally:
        use_language("en")


def test_other_rulebook_numbers_are_not_solved() -> None:
    if "tokens" not in GAME.options:
        pytest.skip("this TOHM has no rulebook options")
    assert "tokens" in solve.unsupported(TohmGame(players=2, tokens=4))
    assert solve.unsupported(TohmGame(players=2, turn_limit=50)) == ""

"""The compiled TRI engine (``ludoteca.games.tri.compiled``) plays exactly the Python engine.

Differential: thousands of seeded random games per player count (boards of size 2, 3 and the
default, both tie rules, both teleport rules) and, by hypothesis, games under any options (sizes
2 to 12, ties, teleport, turn limits); at every step the same current player, legal actions (same
ids, same order) and chance outcomes with their probabilities; the position (the fields behind
``to_json``, counters included) at regular steps and the returns at the end. Every golden
playthrough of TRI is regenerated on the compiled engine, text for text. The C playout loop plays
legal actions, uniformly (chance outcomes by their probabilities), leaves its start position
alone, and its games end as the Python engine's do (outcome distribution within sampling error).
Without the extension, ``available()`` is False and callers get one warning and the Python engine.
The compiled search (the ``strong`` agent's) reads nothing the seat to move cannot see, is legal,
seeded, takes a winning move, and rolls out with ``heuristic.rollout``'s policy, mirrored in C.
"""

from __future__ import annotations

import importlib
import logging
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca.core.chance import outcome_at, random_action
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.tri import ACT, BATTLE, DEFAULT_SIZE, INCOME, PLACE, TriGame, TriState, compiled
from tests.compiled_playthroughs import cases as playthrough_cases
from tests.compiled_playthroughs import designer_cases, python_text
from tests.compiled_playthroughs import generate as generate_compiled

needs_compiled = pytest.mark.skipif(not compiled.available(),
                                    reason="compiled TRI engine not built (see docs/compiled.md)")
pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)

PLAYTHROUGHS = Path(__file__).parent / "playthroughs"
GAMES_PER_PLAYER_COUNT = {2: 2000, 3: 1000, 4: 1000}
"""Seeded games per player count (every step compared; the position in full every 25th step)."""


def _game(**options: Any) -> TriGame:
    game = ludoteca.load_game("tri", **options)
    assert isinstance(game, TriGame)
    return game


def _fields(s: TriState) -> tuple[Any, ...]:
    """The Python state's fields in the order of the compiled ``fields()``."""
    b = s.battle
    battle = None if b is None else (b.attacker, b.defender, b.target, b.dice, b.step, b.attacker_roll,
                                     b.defender_roll, b.attacker_card, b.defender_card)
    return (s.owner, s.hands, s.alive, s.used, s.to_move, s.round, s.turn, s.phase, battle, s._counters)


def play_both(game: TriGame, seed: int, *, every: int = 25, seen: Counter[str] | None = None,
              checked: bool = False) -> int:
    """One seeded random game on both engines, compared at every step; returns its length.
    ``seen`` counts the phases and action kinds met (so a test can show what it covered)."""
    py = game.new_initial_state()
    c = compiled.CompiledState.initial(game)
    rng = random.Random(seed)
    steps = 0
    while True:
        assert c.current_player() == py.current_player(), (seed, steps)
        legal = py.legal_actions()
        assert c.legal_actions() == legal, (seed, steps)
        assert c.is_chance_node() == py.is_chance_node(), (seed, steps)
        if steps % every == 0 or py.is_terminal():
            assert c._c.fields() == _fields(py), (seed, steps)
        if py.is_terminal():
            assert c.is_terminal()
            assert c.returns() == py.returns(), seed
            assert c.counters() == py.counters(), seed
            assert c.to_json() == py.to_json(), seed
            return steps
        assert c.returns() == py.returns()
        if py.is_chance_node():
            outcomes = py.chance_outcomes()
            assert c.chance_outcomes() == outcomes, (seed, steps)
            action = outcome_at(outcomes, rng.random())
        else:
            assert c.chance_outcomes() == []
            action = legal[rng.randrange(len(legal))]
        if seen is not None:
            seen[_kind(game, py, action)] += 1
        if checked:
            py.apply_action(action)
            c.apply_action(action)
        else:
            py.apply_unchecked(action)
            c.apply_unchecked(action)
        steps += 1


def _kind(game: TriGame, state: TriState, action: int) -> str:
    if state.phase != ACT:
        return ("place", "act", "battle", "income", "tiebreak", "over")[state.phase]
    return next(iter(state.action_to_json(action)))


def _bulk_options(players: int, seed: int) -> dict[str, Any]:
    """Boards of size 2, 3 and the default (most games on the small, short ones), with the tie and
    teleport rules alternating."""
    size = (2, 2, 3, 3, None)[seed % 5]
    options: dict[str, Any] = {"players": players, "ties": ("defender", "attacker")[seed // 5 % 2],
                               "teleport": ("claim", "move")[seed // 10 % 2]}
    if size is not None:
        options["size"] = size
    return options


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4])
def test_thousands_of_seeded_games(players: int) -> None:
    games: dict[tuple[tuple[str, Any], ...], TriGame] = {}
    seen: Counter[str] = Counter()
    for seed in range(GAMES_PER_PLAYER_COUNT[players]):
        options = _bulk_options(players, seed)
        key = tuple(sorted(options.items()))
        game = games.get(key) or games.setdefault(key, _game(**options))
        play_both(game, seed, seen=seen, checked=seed % 100 == 0)
    # every part of the rules was played: placements, expansions, attacks and whole battles (rolls,
    # cards, voids), teleports, income rolls, and with three or more players the tiebreak draw
    kinds = {"place", "expand", "attack", "battle", "teleport", "income", "pass"}
    if players > 2:
        kinds.add("tiebreak")
    assert kinds <= set(seen), seen


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), size=st.integers(2, 5),
       ties=st.sampled_from(["defender", "attacker"]), teleport=st.sampled_from(["claim", "move"]),
       turn_limit=st.one_of(st.integers(1, 60), st.just(1000)))
@settings(max_examples=120, deadline=None)
def test_property_options(seed: int, players: int, size: int, ties: str, teleport: str, turn_limit: int) -> None:
    """Every option that changes play: board size, who wins ties, what a teleport does, the turn limit."""
    game = _game(players=players, size=size, ties=ties, teleport=teleport, turn_limit=turn_limit)
    assert compiled.supports(game)
    play_both(game, seed, every=5)


@st.composite
def rulebook_options(draw: st.DrawFn) -> dict[str, Any]:
    """The rulebook's numbers and switches set as a designer would: the cards each player starts
    with, the income schedule and its die, the cards at each elimination, the attacker's most dice,
    teleports on or off."""
    options: dict[str, Any] = {
        "players": draw(st.integers(2, 4)), "size": draw(st.integers(2, 4)),
        "teleport": draw(st.sampled_from(["claim", "move"])), "teleports": draw(st.booleans()),
        "income_every": draw(st.integers(0, 5)), "elimination_cards": draw(st.booleans()),
        "most_dice": draw(st.integers(1, 3)), "turn_limit": draw(st.one_of(st.integers(1, 80), st.just(1000)))}
    for v in (0, 2, 3, 4):
        options[f"start_{v}"] = draw(st.integers(0, 3))
    for f in range(1, 7):
        options[f"income_{f}"] = draw(st.sampled_from([0, 2, 3, 4]))
    return options


@needs_compiled
@given(options=rulebook_options(), seed=st.integers(0, 2**32))
@settings(max_examples=150, deadline=None)
def test_property_rulebook_options(options: dict[str, Any], seed: int) -> None:
    """Both engines play the rulebook's numbers and switches alike, step for step, and the C leaf
    evaluation equals ``heuristic.value`` under them."""
    from ludoteca.games.tri import heuristic

    game = _game(**options)
    assert compiled.supports(game)
    play_both(game, seed, every=5, checked=seed % 3 == 0)
    rng = random.Random(seed)
    py = game.new_initial_state()
    for _ in range(40):
        got = compiled.CompiledState.from_state(py).value()
        assert all(abs(a - b) <= 1e-9 for a, b in zip(got, heuristic.value(py), strict=True))
        if py.is_terminal():
            break
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("teleport", ["claim", "move"])
def test_largest_board(players: int, teleport: str) -> None:
    """Size 12 (576 triangles; with ``teleport="move"`` a million action ids), cut by a turn limit."""
    game = _game(players=players, size=12, teleport=teleport, turn_limit=150)
    play_both(game, players, every=50)


@needs_compiled
@pytest.mark.parametrize("turn_limit", [1, 2, 5, 40])
@pytest.mark.parametrize("players", [2, 4])
def test_turn_limit_ends(players: int, turn_limit: int) -> None:
    game = _game(players=players, turn_limit=turn_limit)
    for seed in range(10):
        play_both(game, seed, every=1)


@needs_compiled
@pytest.mark.parametrize(("stem", "options", "seed", "limit"), playthrough_cases("tri"),
                         ids=[c[0] for c in playthrough_cases("tri")])
def test_golden_playthroughs_on_compiled(stem: str, options: dict[str, Any], seed: int, limit: int) -> None:
    expected = (PLAYTHROUGHS / f"{stem}.txt").read_text(encoding="utf-8")
    assert generate_compiled("tri", compiled.CompiledState, options, seed, limit) == expected


def test_every_tri_playthrough_is_replayed() -> None:
    stems = sorted(p.stem for p in PLAYTHROUGHS.glob("tri_*.txt"))
    assert stems and stems == sorted(c[0] for c in playthrough_cases("tri"))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4])
def test_positions_round_trip_mid_game(players: int) -> None:
    """A Python position (from JSON or a state) compiled and back is the same, in every phase and
    battle step; play goes on equal."""
    game = _game(players=players, size=3, teleport="move")
    phases: set[int] = set()
    for seed in range(6):
        rng = random.Random(seed)
        py = game.new_initial_state()
        while not py.is_terminal():
            data = py.to_json()
            c = compiled.CompiledState.from_json(game, data)
            assert c.to_json() == data
            back = c.to_state()
            assert back.to_json() == data
            assert back.legal_actions() == py.legal_actions() == c.legal_actions()
            assert c.clone().to_json() == data
            phases.add(py.phase)
            py.apply_unchecked(random_action(py, rng))
    assert {PLACE, ACT, BATTLE, INCOME} <= phases


@needs_compiled
def test_apply_action_refuses_illegal() -> None:
    game = _game(players=2)
    c = compiled.CompiledState.initial(game)
    before = c.to_json()
    for bad in (game.EXPAND, game.PASS, 0, -1, game.n_actions, True, "16"):
        with pytest.raises(IllegalActionError):
            c.apply_action(bad)  # type: ignore[arg-type]
        assert c.to_json() == before


@needs_compiled
def test_load_refuses_what_the_c_arrays_cannot_hold() -> None:
    """The C position is only loaded from values in range (a clear ValueError otherwise)."""
    from ludoteca.games.tri import _compiled

    c = _compiled.CState(3, 2, False, 100, False)
    empty: list[int] = [-1] * 36
    hands = [[1, 1, 1, 1], [1, 1, 1, 1]]
    with pytest.raises(ValueError):
        c.load(empty, hands, [True, True], [False] * 9, 2, 2, 3, ACT)  # seat 2 of 2
    with pytest.raises(ValueError):
        c.load([5, *empty[1:]], hands, [True, True], [False] * 9, 0, 2, 3, ACT)  # owner seat 5
    with pytest.raises(ValueError):  # a battle at the defender's card without the attacker's card
        c.load(empty, hands, [True, True], [False] * 9, 0, 2, 3, BATTLE, (0, 1, 5, 1, 3, 2, 3, None, None))
    with pytest.raises(ValueError):
        _compiled.CState(13, 2, False, 100, False)
    with pytest.raises(ValueError):
        _compiled.CState(4, 5, False, 100, False)


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4])
def test_playouts_leave_the_start_and_end_the_games(players: int) -> None:
    game = _game(players=players)
    rng = random.Random(1)
    py = game.new_initial_state()
    for _ in range(60):
        py.apply_unchecked(random_action(py, rng))
    before = py.to_json()
    out = compiled.playouts(py, 200, seed=3)
    assert py.to_json() == before
    assert len(out) == 200
    for r in out:
        assert len(r) == players and abs(sum(r) - 1.0) < 1e-9 and max(r) > 0
    assert compiled.playouts(py, 200, seed=3) == out  # seeded
    assert compiled.playouts(py, 200, seed=4) != out


def _check_uniform(c: compiled.CompiledState, expected: list[tuple[int, float]], tag: Any) -> None:
    """``sample_action`` over many seeds picks exactly the ``expected`` actions with their
    probabilities (each count within 6 binomial standard deviations)."""
    draws = max(600, int(60 / min(p for _, p in expected)))
    counts = Counter(c.sample_action(seed * 7919 + 13) for seed in range(draws))
    assert set(counts) == {a for a, _ in expected}, tag
    for a, p in expected:
        sd = (draws * p * (1 - p)) ** 0.5
        assert abs(counts[a] - draws * p) <= 6 * sd + 1, (tag, a, counts[a], draws * p)


@needs_compiled
def test_random_actions_are_legal_and_uniform() -> None:
    """The C sampler never lists the teleports (one draw picks a side, a square and an empty
    triangle): its choice is legal and uniform over the legal list; chance outcomes (the highest
    of 1 to 3 dice, the income die, the tiebreak draw) come by their probabilities."""
    game = _game(players=3, size=3, teleport="move")
    seen: set[str] = set()
    for seed in range(40):
        rng = random.Random(seed)
        py = game.new_initial_state()
        step = 0
        while not py.is_terminal():
            legal = py.legal_actions()
            teleports = any(game.TELEPORT <= a < game.CARD for a in legal)
            battle = py.battle
            kind = ("teleport" if teleports else f"dice{battle.dice}" if battle is not None and battle.step == 0
                    else ("place", "act", "battle", "income", "tiebreak")[py.phase])
            if (kind not in seen or step % 97 == 0) and len(legal) > 1:
                c = compiled.CompiledState.from_state(py)
                expected = py.chance_outcomes() if py.is_chance_node() else [(a, 1 / len(legal)) for a in legal]
                _check_uniform(c, expected, (seed, step, kind))
                seen.add(kind)
            py.apply_unchecked(random_action(py, rng))
            step += 1
    assert {"place", "act", "teleport", "dice1", "dice2", "dice3", "battle", "income", "tiebreak"} <= seen, seen


@needs_compiled
@pytest.mark.parametrize("players", [2, 3])
def test_playout_results_match_the_python_distribution(players: int) -> None:
    """Mean returns of C playouts and Python playouts from one position agree (5 standard errors)."""
    game = _game(players=players, size=3)
    state = game.new_initial_state()
    c_out = compiled.playouts(state, 20000, seed=11)
    rng = random.Random(11)
    py_out = []
    for _ in range(2000 if players == 2 else 1200):
        s = state.clone()
        while not s.is_terminal():
            s.apply_unchecked(random_action(s, rng))
        py_out.append(s.returns())
    for seat in range(players):
        mc = sum(r[seat] for r in c_out) / len(c_out)
        mp = sum(r[seat] for r in py_out) / len(py_out)
        se = (0.25 / len(py_out) + 0.25 / len(c_out)) ** 0.5
        assert abs(mc - mp) < 5 * se, (seat, mc, mp)


@needs_compiled
def test_value_is_the_heuristic_value() -> None:
    """The C leaf evaluation equals ``heuristic.value`` (and ``scores``) within 1e-9 on thousands of
    positions of every phase, player count, board size and teleport rule; its weights are the
    heuristic's."""
    from ludoteca.games.tri import _compiled, heuristic

    assert _compiled.WEIGHTS == (heuristic.CLOSED_W, heuristic.THREE_W, heuristic.TELEPORT_W,
                                          heuristic.EXPOSED_W, heuristic.ROOM_W, heuristic.CARD_COST)
    positions = 0
    for seed in range(60):
        players = 2 + seed % 3
        size = (2, 3, 4, DEFAULT_SIZE[players])[seed % 4]
        game = _game(players=players, size=size, teleport=("claim", "move")[seed // 4 % 2])
        rng = random.Random(seed)
        py = game.new_initial_state()
        while True:
            c = compiled.CompiledState.from_state(py)
            want = heuristic.value(py)
            got = c.value()
            assert len(got) == players
            assert all(abs(a - b) <= 1e-9 for a, b in zip(got, want, strict=True)), (seed, py.turn, got, want)
            assert all(abs(a - b) <= 1e-9 for a, b in zip(c._c.scores(), heuristic.scores(py), strict=True))
            positions += 1
            if py.is_terminal():
                break
            py.apply_unchecked(random_action(py, rng))
    assert positions > 5000


@needs_compiled
def test_search_plays_a_legal_seeded_action() -> None:
    """The compiled MCTS on this engine: a legal action at every kind of decision, the same for the
    same seed, the position left alone; a chance node is refused."""
    game = _game(players=3, size=3, teleport="move")
    rng = random.Random(2)
    py = game.new_initial_state()
    searched = 0
    while not py.is_terminal():
        if not py.is_chance_node() and py.turn % 7 == 0:
            before = py.to_json()
            a = compiled.search(py, 200, 0.4, 10, seed=py.turn)
            assert a in py.legal_actions()
            assert compiled.search(py, 200, 0.4, 10, seed=py.turn) == a
            assert py.to_json() == before
            searched += 1
        elif py.is_chance_node():
            with pytest.raises(ValueError):
                compiled.search(py, 10, 0.4, 10, seed=1)
        py.apply_unchecked(random_action(py, rng))
    assert searched > 10


def test_fallback_without_the_extension(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The extension failing to import: available() is False, one warning, the Python engine plays."""
    import ludoteca.games.tri as package

    monkeypatch.setitem(sys.modules, "ludoteca.games.tri._compiled", None)  # import raises ImportError
    monkeypatch.delattr(package, "_compiled", raising=False)
    fallback = importlib.reload(compiled)
    try:
        assert not fallback.available()
        game = _game(players=2, size=2)
        state = game.new_initial_state()
        assert not fallback.supports(game)
        assert "not built" in fallback.unsupported(game)
        with caplog.at_level(logging.WARNING, logger="ludoteca.games.tri.compiled"):
            assert fallback.compile_state(state) is None
            out = fallback.playouts(state, 20, seed=1)
            fallback.playouts(state, 5, seed=2)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "Python TRI engine" in warnings[0].getMessage()
        assert len(out) == 20 and all(abs(sum(r) - 1.0) < 1e-9 for r in out)
        assert fallback.playouts(state, 20, seed=1) == out  # seeded in Python too
    finally:
        monkeypatch.undo()
        importlib.reload(compiled)


def _battle_choices(players: int, seed: int, games: int) -> list[TriState]:
    """Card choices of seeded random games: the attacker's (the defender's roll hidden from it)
    and the defender's (the attacker's roll and card hidden from it)."""
    from ludoteca.games.tri import A_CARD, D_CARD
    game = _game(players=players, size=3)
    rng = random.Random(seed)
    out: list[TriState] = []
    for _ in range(games):
        py = game.new_initial_state()
        while not py.is_terminal():
            b = py.battle
            if b is not None and b.step in (A_CARD, D_CARD) and len(py.legal_actions()) > 1:
                out.append(py.clone())
            py.apply_unchecked(random_action(py, rng))
    return out


def _variants(state: TriState) -> list[TriState]:
    """``state`` with every other value of what its seat to move cannot see (the other side's roll,
    the attacker's card): the positions ``state.worlds(seat)`` lists."""
    hidden = state.worlds(state.current_player())
    assert hidden is not None
    return [s for s in hidden[0] if isinstance(s, TriState)]


@needs_compiled
def test_search_never_reads_what_the_seat_to_move_cannot_see() -> None:
    """RULES.md TRI "Battles" 2: each side picks its card knowing only its own roll, and the
    defender does not see the attacker's card. Positions that differ only in those values give the
    same action for the same seed; the clairvoyant search of each position (the same engine
    reading everything) does not always, so the hidden values matter and are not read."""
    positions = _battle_choices(2, seed=4, games=15)
    assert len(positions) > 20
    clairvoyant_differs = 0
    for i, s in enumerate(positions):
        variants = _variants(s)
        assert len(variants) > 1
        answers = {compiled.search(v, 120, 0.4, 10, seed=i) for v in variants}
        assert answers == {compiled.search(s, 120, 0.4, 10, seed=i)}, i
        assert answers <= set(s.legal_actions())
        seen = {compiled.CompiledState.from_state(v)._c.search(120, 0.4, 10, i, True) for v in variants}
        clairvoyant_differs += len(seen) > 1
    assert clairvoyant_differs > 0


@needs_compiled
def test_search_of_a_hidden_position_is_legal_seeded_and_leaves_it_alone() -> None:
    positions = _battle_choices(3, seed=8, games=6)
    assert positions
    for i, s in enumerate(positions):
        before = (s.to_json(), _fields(s))
        a = compiled.search(s, 90, 0.4, 10, seed=i, worlds=5)
        assert a in s.legal_actions()
        assert compiled.search(s, 90, 0.4, 10, seed=i, worlds=5) == a
        assert (s.to_json(), _fields(s)) == before
        assert compiled.search(s, 0, 0.4, 10, seed=i) == s.legal_actions()[0]  # no simulation


@needs_compiled
def test_root_statistics_are_those_of_the_search() -> None:
    """``search_root`` (the root's visits and returns, ``core/_mcts.pxi``) is the same search as
    ``search``: its most visited action (ties: better mean, smaller id) is the search's answer,
    its visits add up to the simulations, and its value sums lie between 0 and the visits."""
    game = _game(players=3, size=3)
    rng = random.Random(6)
    py = game.new_initial_state()
    checked = 0
    while not py.is_terminal():
        if not py.is_chance_node() and len(py.legal_actions()) > 1 and py.turn % 3 == 0:
            core = compiled.CompiledState.from_state(py)._c
            root = core.search_root(150, 0.4, 10, checked, True)
            assert sum(n for _, n, _ in root) == 150 == core.last_stats[0]
            assert all(0.0 <= w <= n for _, n, w in root)
            assert {a for a, _, _ in root} <= set(py.legal_actions())
            best = min(root, key=lambda r: (-r[1], -r[2] / r[1], r[0]))[0]
            assert core.search(150, 0.4, 10, checked, True) == best
            checked += 1
        py.apply_unchecked(random_action(py, rng))
    assert checked > 5


def _last_triangle_position() -> TriState:
    """Two players on a 2×2 board (16 triangles), seat 0 to act with 8 units against 7 and one
    empty triangle (15) beside two of seat 0's (12 and 14, in its square)."""
    game = _game(players=2, size=2)
    s = game.new_initial_state()
    owner = [0] * 6 + [1] * 6 + [0, 1, 0, -1]
    s.owner = owner
    s.owned = [{t for t, o in enumerate(owner) if o == p} for p in range(2)]
    s.empty = 1
    s.round, s.turn, s.phase, s.to_move = 2, 4, ACT, 0
    return s


@needs_compiled
def test_search_takes_the_triangle_that_wins() -> None:
    """RULES.md TRI: the game ends when the board is full with two players left, the most units
    winning. Taking the last empty triangle wins at once (9 to 7) — by expanding into it or by
    teleporting into it —; anything else lets seat 1 fill it."""
    s = _last_triangle_position()
    wins = set()
    for action in s.legal_actions():
        after = s.clone()
        after.apply_action(action)
        if after.is_terminal() and after.returns() == [1.0, 0.0]:
            wins.add(action)
    assert s.game.EXPAND + 15 in wins and len(wins) < len(s.legal_actions())
    for seed in range(3):
        assert compiled.search(s, 300, 0.4, 10, seed=seed) in wins


@needs_compiled
def test_pruned_search_keeps_to_the_heuristics_candidates() -> None:
    """``prune``: the root considers only ``heuristic.candidates`` (as ``mcts``'s ``prune``);
    ``search_root`` limited to given actions tries those only, and refuses an illegal one."""
    from ludoteca.games.tri import heuristic
    game = _game(players=2, size=4, teleport="move")
    rng = random.Random(9)
    py = game.new_initial_state()
    checked = 0
    while not py.is_terminal() and checked < 8:
        legal = py.legal_actions()
        if not py.is_chance_node() and py.phase == ACT and len(legal) > 8:
            best = sorted(heuristic.candidates(py, 4))
            assert compiled.search(py, 100, 0.4, 10, seed=checked, prune=4) in best
            core = compiled.CompiledState.from_state(py)._c
            root = core.search_root(100, 0.4, 10, checked, True, best)
            assert {a for a, _, _ in root} == set(best) and sum(n for _, n, _ in root) == 100
            with pytest.raises(ValueError):
                core.search_root(10, 0.4, 10, 1, True, [max(legal) + 1])
            checked += 1
        py.apply_unchecked(random_action(py, rng))
    assert checked == 8


@needs_compiled
def test_the_search_prunes_like_the_heuristics_candidates() -> None:
    """Every decision node of the compiled search keeps the heuristic's ``k`` best actions
    (``heuristic.candidates``, as ``mcts``'s ``prune``): the same actions in the same order (best
    first, ties in list order) at every decision of seeded random games, every option."""
    from ludoteca.games.tri import heuristic
    checked = 0
    for seed in range(16):
        game = _game(players=2 + seed % 3, size=(2, 3, 4, 5)[seed % 4], teleport=("claim", "move")[seed // 4 % 2],
                     ties=("defender", "attacker")[seed // 8 % 2])
        rng = random.Random(seed)
        py = game.new_initial_state()
        while not py.is_terminal():
            if not py.is_chance_node():
                core = compiled.CompiledState.from_state(py)._c
                for k in (1, 8, 20):
                    assert core.candidates(k) == heuristic.candidates(py, k), (seed, py.turn, k)
                checked += 1
            py.apply_unchecked(random_action(py, rng))
    assert checked > 800


@needs_compiled
def test_card_choices_inside_the_search_tree_read_no_secret() -> None:
    """RULES.md TRI "Battles" 2 (each side picks its card knowing only its own roll; the defender
    does not see the attacker's card). Below the root the search plays the card model's card
    (``heuristic.card_choice`` of the chooser's own roll and the public hands): it is the same in
    every position the chooser cannot tell apart, it is the heuristic's card, and a search rooted at
    a card choice still weighs every card in hand (the root is not cut to the model's card)."""
    from ludoteca.games.tri import A_CARD, heuristic
    positions = _battle_choices(2, seed=11, games=15) + _battle_choices(3, seed=12, games=10)
    assert len(positions) > 30
    for i, s in enumerate(positions):
        b = s.battle
        assert b is not None
        cards = {compiled.CompiledState.from_state(v)._c.model_card() for v in _variants(s)}
        assert len(cards) == 1, i
        att = b.step == A_CARD
        me, other = (b.attacker, b.defender) if att else (b.defender, b.attacker)
        roll = b.attacker_roll if att else b.defender_roll
        assert roll is not None
        card = heuristic.card_choice(att, roll, b.dice, heuristic._hand_values(s.hands[me]),
                                     heuristic._hand_values(s.hands[other]), s.game.ties_attacker)
        action = s.game.CARD + heuristic.CARD_VALUES.index(card)
        assert cards == {action if action in s.legal_actions() else -1}, i
        legal = sorted(s.legal_actions())
        root = compiled.CompiledState.from_state(s)._c.search_root(200, 0.4, 10, i, True, legal, True, True)
        assert sorted(a for a, _, _ in root) == legal, i


@needs_compiled
def test_light_rollout_policy_is_the_heuristics() -> None:
    """The rollout policy in C is ``heuristic.rollout``: at every decision of seeded random games
    (every option) its usual choice is ``heuristic.best_quick`` (the same action, teleports
    scored in bulk, ties to the first), at a card choice the card of ``heuristic.card_choice``
    (the first legal action when that card is not in hand); every action it plays is legal."""
    from ludoteca.games.tri import A_CARD, D_CARD, heuristic
    quick = cards = 0
    for seed in range(24):
        game = _game(players=2 + seed % 3, size=(2, 3, 4, 5)[seed % 4], teleport=("claim", "move")[seed // 4 % 2],
                     ties=("defender", "attacker")[seed // 8 % 2])
        rng = random.Random(seed)
        py = game.new_initial_state()
        while not py.is_terminal():
            core = compiled.CompiledState.from_state(py)._c
            legal = py.legal_actions()
            assert core.policy_action(seed) in legal
            b = py.battle
            if py.is_chance_node():
                pass
            elif b is None:
                assert core.best_quick() == heuristic.best_quick(py, py.current_player(), legal), (seed, py.turn)
                quick += 1
            elif b.step in (A_CARD, D_CARD):
                att = b.step == A_CARD
                me, other = (b.attacker, b.defender) if att else (b.defender, b.attacker)
                roll = b.attacker_roll if att else b.defender_roll
                assert roll is not None
                card = heuristic.card_choice(att, roll, b.dice, heuristic._hand_values(py.hands[me]),
                                             heuristic._hand_values(py.hands[other]), game.ties_attacker)
                a = game.CARD + heuristic.CARD_VALUES.index(card)
                expected = a if a in legal else legal[0]
                assert expected in {core.policy_action(k) for k in range(30)}, seed  # 3 draws in 4 play it
                cards += 1
            py.apply_unchecked(random_action(py, rng))
    assert quick > 1000 and cards > 100


@needs_compiled
@pytest.mark.parametrize(("options", "seed"), designer_cases("tri"))
def test_designer_variants_play_the_python_engines_playthrough(options: dict[str, Any], seed: int) -> None:
    """A designer's variant (the rulebook's numbers and switches changed) played on the compiled
    engine gives the Python engine's playthrough, text for text."""
    assert compiled.supports(ludoteca.load_game("tri", **options))
    expected = python_text("tri", options, seed, 300)
    assert generate_compiled("tri", compiled.CompiledState, options, seed, 300) == expected

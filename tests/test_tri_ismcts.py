"""TRI's information-set MCTS in C (``games/tri/_ismcts.pxi``, ``compiled.search_hidden``): the search of
a card choice that hides a battle secret from the seat to move (RULES.md, TRI "Battles": each side knows
only its own roll; the attacker's card is secret until the reveal), and of every other decision of
``strong`` (one world: the position).

It answers a legal card and leaves the position alone, the same answer for the same seed, the same answer
whatever the hidden values really are (it never reads them: a perfect-information search on the same
positions does change its answer), plays the only card that can win a battle, and refuses bad worlds; it
searches a position hiding nothing as its own world, and expands the heuristic's choice first.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import ludoteca
from ludoteca.agents.base import make_agent
from ludoteca.core.chance import random_action
from ludoteca.games.tri import A_CARD, D_CARD, TriState, heuristic
from ludoteca.games.tri import compiled as tri_compiled

pytestmark = [pytest.mark.compiled, pytest.mark.skipif(not tri_compiled.available(),
                                                     reason="compiled TRI engine not built (pip install -e .)")]


def _decisions(players: int, seed: int, wanted: int, hidden: bool, share: float = 1.0,
               **options: Any) -> list[TriState]:
    """Decisions with a choice met in seeded heuristic games: those hiding something from the seat
    to move (``hidden``: card choices) or those where it sees everything (placing, expanding,
    attacking, teleporting), each kept with probability ``share``."""
    game = ludoteca.load_game("tri", players=players, **options)
    rng = random.Random(seed)
    agents = [make_agent("heuristic", seed=seed + k) for k in range(players)]
    out: list[TriState] = []
    while len(out) < wanted:
        s = game.new_initial_state()
        while not s.is_terminal() and len(out) < wanted:
            if s.is_chance_node():
                s.apply_action(random_action(s, rng))
                continue
            p = s.current_player()
            if ((s.worlds(p) is not None) == hidden and len(s.legal_actions()) > 1
                    and (share >= 1.0 or rng.random() < share)):
                found = s.clone()
                assert isinstance(found, TriState)
                out.append(found)
            s.apply_action(agents[p].step(s))
    return out


def _card_choices(players: int, seed: int, wanted: int, **options: Any) -> list[TriState]:
    """Card choices hiding something from the seat to move, met in seeded heuristic games."""
    return _decisions(players, seed, wanted, hidden=True, **options)


def _worlds(s: TriState) -> list[tuple[int | None, int | None, int | None, float]]:
    """The battle secrets of every world of the seat to move, as ``CState.ismcts`` takes them."""
    found = s.worlds(s.current_player())
    assert found is not None
    out = []
    for world, weight in zip(*found, strict=True):
        assert isinstance(world, TriState) and world.battle is not None
        b = world.battle
        out.append((b.attacker_roll, b.defender_roll, b.attacker_card, weight))
    return out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_answer_is_a_legal_card_and_the_position_is_left_alone(players: int) -> None:
    positions = _card_choices(players, seed=players, wanted=6)
    for i, s in enumerate(positions):
        before = s.to_json()
        action = tri_compiled.search_hidden(s, 300, 0.7, 10, seed=i)
        assert action in s.legal_actions()
        assert s.to_json() == before


def test_both_sides_card_choices_are_searched() -> None:
    """The attacker's choice (the defender's roll hidden) and the defender's (the attacker's roll and
    card hidden) both reach the search, with their worlds weighted as the rules' dice."""
    positions = _card_choices(2, seed=11, wanted=20)
    steps = {s.battle.step for s in positions if s.battle is not None}
    assert steps == {A_CARD, D_CARD}
    for s in positions:
        weights = [w for *_secrets, w in _worlds(s)]
        assert sum(weights) == pytest.approx(1.0)


def test_the_same_seed_gives_the_same_search() -> None:
    for i, s in enumerate(_card_choices(2, seed=5, wanted=4)):
        core = tri_compiled.CompiledState.from_state(s)._c
        first = core.ismcts(_worlds(s), 400, 0.7, 10, 77 + i, True, True, False, 8)
        stats = core.last_stats
        assert stats[0] == 400 and stats[1] > 400  # every simulation ran and grew one tree per seat
        assert core.ismcts(_worlds(s), 400, 0.7, 10, 77 + i, True, True, False, 8) == first
        assert core.last_stats == stats
        assert tri_compiled.search_hidden(s, 400, 0.7, 10, 77 + i) == first  # the module's face


def test_the_answer_does_not_depend_on_the_hidden_values() -> None:
    """Whatever the other side really rolled (and, for the defender, whatever card the attacker really
    chose), the same seed gives the same card: the search reads only what the seat sees. Control: the
    perfect-information search, which reads the whole position, does change its answer with them."""
    seen_by_clairvoyant = 0
    for i, s in enumerate(_card_choices(2, seed=7, wanted=8)):
        found = s.worlds(s.current_player())
        assert found is not None
        reals = [w for w in found[0] if isinstance(w, TriState)]
        worlds = _worlds(s)
        answers = {tri_compiled.CompiledState.from_state(real)._c.ismcts(worlds, 300, 0.7, 10, 3 + i)
                   for real in reals}
        assert len(answers) == 1
        assert {tri_compiled.search_hidden(real, 300, 0.7, 10, 3 + i) for real in reals} == answers
        clairvoyant = {tri_compiled.CompiledState.from_state(real)._c.search(300, 0.7, 10, 3 + i) for real in reals}
        seen_by_clairvoyant += len(clairvoyant) > 1
    assert seen_by_clairvoyant >= 1


def _battle(step: int, attacker_hand: list[int], defender_hand: list[int], attacker_roll: int | None,
            defender_roll: int | None, attacker_card: int | None) -> TriState:
    """A card choice of a real two-player game where the attacker rolls one die (the rulebook's option
    ``most_dice`` set to 1), with the hands (card values) and the battle values set."""
    s = next(p for p in _card_choices(2, seed=13, wanted=30, most_dice=1)
             if p.battle is not None and p.battle.step == step)
    data = s.to_json()
    battle = data["battle"]
    data["hands"][battle["attacker"]] = attacker_hand
    data["hands"][battle["defender"]] = defender_hand
    battle.update(attacker_roll=attacker_roll, defender_roll=defender_roll, attacker_card=attacker_card)
    out = s.game.state_from_json(data)
    assert isinstance(out, TriState)
    return out


def test_the_attacker_plays_the_only_card_that_can_win() -> None:
    """The attacker rolled 1 and holds +0 and +4; the defender's hand is empty (it adds 0) and rolls at
    least 1. Higher total wins, ties hold for the defender (RULES.md, TRI "Battles"): +0 loses for sure,
    +4 wins when the defender rolled 4 or less (two times in three)."""
    s = _battle(A_CARD, [0, 4], [], 1, 6, None)
    g = s.game
    assert sorted(s.legal_actions()) == [g.CARD, g.CARD + 3]
    assert [tri_compiled.search_hidden(s, 2000, 0.7, 10, seed) for seed in range(3)] == [g.CARD + 3] * 3


def test_the_defender_plays_the_only_card_that_can_win() -> None:
    """The defender rolled 1 and holds +0 and +4; the attacker's only card is +2 (hands are public), so
    it totals at least 3: +0 loses for sure, +4 holds when the attacker's one die shows 3 or less (one
    time in two)."""
    s = _battle(D_CARD, [2], [0, 4], 6, 1, 2)
    g = s.game
    assert sorted(s.legal_actions()) == [g.CARD, g.CARD + 3]
    assert [tri_compiled.search_hidden(s, 2000, 0.7, 10, seed) for seed in range(3)] == [g.CARD + 3] * 3


def test_bad_worlds_and_positions_are_refused() -> None:
    s = _card_choices(2, seed=5, wanted=1)[0]
    core = tri_compiled.CompiledState.from_state(s)._c
    with pytest.raises(ValueError, match="1 to 4096 worlds"):
        core.ismcts([], 10, 0.7, 10, 1)
    with pytest.raises(ValueError, match="not a world"):
        core.ismcts([(7, None, None, 1.0)], 10, 0.7, 10, 1)
    with pytest.raises(ValueError, match="not a world"):
        core.ismcts([(None, None, 1, 1.0)], 10, 0.7, 10, 1)
    with pytest.raises(ValueError, match="must not be negative"):
        core.ismcts(_worlds(s), -1, 0.7, 10, 1)
    chance = s.game.new_initial_state()
    while not chance.is_chance_node():
        chance.apply_action(chance.legal_actions()[0])
    with pytest.raises(ValueError, match="player is to move"):
        tri_compiled.search_hidden(chance, 10, 0.7, 10, 1)


def _move_decisions(players: int, seed: int, wanted: int) -> list[TriState]:
    """Decisions where the seat to move sees everything, with a choice, met in seeded heuristic games."""
    return _decisions(players, seed, wanted, hidden=False, share=0.2)


def test_a_position_hiding_nothing_is_searched_as_its_own_world() -> None:
    """Where the seat to move sees everything (``worlds(seat)`` is None), ``strong``'s search is the
    information-set search over one world, the position itself (so the card choices of the battles in
    its tree are still made by each side from what it sees, RULES.md TRI "Battles"): a legal action,
    the position left alone, the same answer for the same seed."""
    for i, s in enumerate(_move_decisions(2, seed=11, wanted=12)):
        before = s.to_json()
        action = tri_compiled.search(s, 200, 0.7, 10, seed=i)
        assert action in s.legal_actions() and s.to_json() == before
        assert action == tri_compiled.search_hidden(s, 200, 0.7, 10, seed=i) == tri_compiled.search(s, 200, 0.7, 10, i)


def test_a_search_of_one_simulation_plays_what_the_heuristic_tries_first() -> None:
    """The search expands a node's actions best first, as ``mcts`` does: with one simulation it plays
    the cheap ranking's best candidate at a move and the card model's card at a card choice (the
    heuristic's own choices, whatever the seed); expanding at random (``ordered=False``) would often
    play another action."""
    moves = _move_decisions(2, seed=5, wanted=20)
    cards = _card_choices(2, seed=5, wanted=20)
    differ = 0
    for i, s in enumerate(moves + cards):
        core = tri_compiled.CompiledState.from_state(s)._c
        if i >= len(moves) and core.model_card() >= 0:
            expected = core.model_card()
        else:
            expected = heuristic.candidates(s, tri_compiled.PRUNE)[0]
        for seed in (i, i + 100):
            assert tri_compiled.search_hidden(s, 1, 0.7, 10, seed) == expected
        differ += any(tri_compiled.search_hidden(s, 1, 0.7, 10, seed, ordered=False) != expected
                      for seed in range(4))
    assert differ >= 10

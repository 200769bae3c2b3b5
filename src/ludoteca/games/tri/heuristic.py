"""TRI heuristic: territory, closed squares, battles at good odds, strong cards kept.

It reads only ``state.observation(seat)``: outside a battle that is the whole position; during
a battle the other side's roll and card are hidden, and the card choice is made from the
observation alone (own roll, both hands, the number of attacking dice).

* A position is worth, for a seat: its units minus the strongest opponent's, plus closed
  squares (safe from attack, and a teleport each), squares three-quarters owned with the last
  triangle free (closable next turn), a little for cards in hand and for room to expand, minus
  units exposed to attack.
* Expanding, teleporting and placing are scored on the position they produce (a teleport under
  ``teleport="move"`` too: the unit that leaves reopens its square).
* An attack is scored as ``P(win) * value(target taken) + (1 - P(win)) * value(worst unit
  voided)``, with ``P(win)`` from the attacker's ``k`` dice against one die and a model of both
  card choices.
* A card is chosen knowing only one's own roll: the card that maximises the chance of winning
  the battle (against the other side's unknown roll and a mixed model of their card) minus the
  value of the card spent, so a strong card is kept unless it turns the battle.
* A defender voiding a unit picks the one whose loss hurts the attacker most (a closed square
  reopened, a nearly closed square broken).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left
from functools import lru_cache
from typing import Any

from ludoteca.core.choice import best_of
from ludoteca.core.game import Action
from ludoteca.games.tri import A_CARD, BATTLE, OVER, PLACE, VOID

CARD_VALUES = (0, 2, 3, 4)
CARD_COST = 0.15
"""Value of one card point, in units (cards come back every third round)."""
CLOSED_W = 0.6
THREE_W = 0.3
TELEPORT_W = 0.35
EXPOSED_W = 0.06
ROOM_W = 0.03
BATTLE_STAKE = 2.0
"""Units swung by a battle: the target changes hands, or the attacker loses a unit."""


def _probs(dice: int) -> list[float]:
    k = max(1, dice)
    return [(v**k - (v - 1) ** k) / 6**k for v in range(1, 7)]


PROBS = {k: _probs(k) for k in (1, 2, 3)}


def _hand_values(counts: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    vals = tuple(CARD_VALUES[i] for i in range(4) if counts[i])
    return vals or (0,)


def _card_model(values: tuple[int, ...]) -> list[tuple[int, float]]:
    """How the other side is assumed to play: often its strongest card, else any."""
    m = len(values)
    out = {v: 0.5 / m for v in values}
    out[max(values)] += 0.5
    return list(out.items())


@lru_cache(maxsize=4096)
def attack_odds(dice: int, att_cards: tuple[int, ...], def_cards: tuple[int, ...],
                ties_attacker: bool) -> float:
    """P(attacker wins) before the rolls: both sides play by the card model."""
    pa = PROBS[dice]
    pd = PROBS[1]
    ma = _card_model(att_cards)
    md = _card_model(def_cards)
    win = 0.0
    for ra in range(6):
        for ca, wa in ma:
            ta = ra + 1 + ca
            for rd in range(6):
                for cd, wd in md:
                    td = rd + 1 + cd
                    if ta > td or (ties_attacker and ta == td):
                        win += pa[ra] * wa * pd[rd] * wd
    return win


@lru_cache(maxsize=4096)
def card_choice(attacker: bool, my_roll: int, dice: int, my_cards: tuple[int, ...],
                their_cards: tuple[int, ...], ties_attacker: bool) -> int:
    """The card value to play knowing only our own roll."""
    their_probs = PROBS[dice] if not attacker else PROBS[1]
    model = _card_model(their_cards)
    best, best_v = my_cards[0], -math.inf
    for c in sorted(set(my_cards)):
        mine = my_roll + c
        win = 0.0
        for r in range(6):
            for tc, w in model:
                theirs = r + 1 + tc
                if attacker:
                    ok = mine > theirs or (ties_attacker and mine == theirs)
                else:
                    ok = theirs < mine or (not ties_attacker and theirs == mine)
                if ok:
                    win += their_probs[r] * w
        v = BATTLE_STAKE * win - CARD_COST * c
        if v > best_v + 1e-12:
            best, best_v = c, v
    return best


# --- the static reading -----------------------------------------------------------------

def features(state: Any) -> list[list[float]]:
    """Per seat: [units, closed squares, closable squares, free teleports, card points,
    exposed units, room (empty triangles next to own units)]."""
    g = state.game
    n = g.num_players
    owner = state.owner
    nb = g.NB
    used = state.used
    feats = [[0.0] * 7 for _ in range(n)]
    for p in range(n):
        if state.alive[p]:
            feats[p][0] = len(state.owned[p])
            h = state.hands[p]
            feats[p][4] = 2 * h[1] + 3 * h[2] + 4 * h[3]
    closed_tri = [False] * g.T
    for s in range(g.S):
        b = 4 * s
        o0, o1, o2, o3 = owner[b], owner[b + 1], owner[b + 2], owner[b + 3]
        if o0 >= 0 and o0 == o1 == o2 == o3:
            feats[o0][1] += 1
            if not used[s] and g.teleports:
                feats[o0][3] += 1
            closed_tri[b] = closed_tri[b + 1] = closed_tri[b + 2] = closed_tri[b + 3] = True
            continue
        quad = (o0, o1, o2, o3)
        if quad.count(-1) == 1:
            own = [o for o in quad if o >= 0]
            if own[0] == own[1] == own[2]:
                feats[own[0]][2] += 1
    room_seen: list[set[int]] = [set() for _ in range(n)]
    for p in range(n):
        if not state.alive[p]:
            continue
        f = feats[p]
        seen = room_seen[p]
        for t in state.owned[p]:
            exposed = False
            for u in nb[t]:
                o = owner[u]
                if o < 0:
                    seen.add(u)
                elif o != p:
                    exposed = True
            if exposed and not closed_tri[t]:
                f[5] += 1
        f[6] = len(seen)
    return feats


def scores(state: Any) -> list[float]:
    out = []
    for f in features(state):
        out.append(f[0] + CLOSED_W * f[1] + THREE_W * f[2] + TELEPORT_W * f[3] + CARD_COST * f[4]
                   - EXPOSED_W * f[5] + ROOM_W * f[6])
    return out


def evaluate_for(state: Any, me: int) -> float:
    if state.phase == OVER:
        returns: list[float] = state.returns()
        return 100.0 * returns[me]
    if not state.alive[me]:
        return -100.0
    s = scores(state)
    others = [s[p] for p in range(len(s)) if p != me and state.alive[p]]
    if not others:
        return 100.0
    best = max(others)
    rest = (sum(others) - best) / (len(others) - 1) if len(others) > 1 else best
    return s[me] - 0.7 * best - 0.3 * rest


def _after(state: Any, action: Action) -> Any:
    s = state.clone()
    s.apply_action(action)
    return s


def _with_owner(state: Any, changes: list[tuple[int, int]]) -> Any:
    """A copy of ``state`` with triangles reassigned (battle outcomes, for the reading only)."""
    s = state.clone()
    for t, p in changes:
        o = s.owner[t]
        if o >= 0:
            s.owned[o].discard(t)
            s.empty += 1
        s.owner[t] = p
        if p >= 0:
            s.owned[p].add(t)
            s.empty -= 1
    return s


def _attack_value(state: Any, me: int, t: int) -> float:
    g = state.game
    owner = state.owner
    dfn = owner[t]
    mine = [u for u in g.NB[t] if owner[u] == me]
    k = len(mine)
    p = attack_odds(k, _hand_values(state.hands[me]), _hand_values(state.hands[dfn]), g.ties_attacker)
    win = evaluate_for(_with_owner(state, [(t, me)]), me)
    lose = min(evaluate_for(_with_owner(state, [(u, -1)]), me) for u in mine)
    return p * win + (1 - p) * lose


def _placement_room(state: Any, t: int) -> float:
    """Distance (in steps, capped) from ``t`` to the nearest unit: more room to grow."""
    g = state.game
    owner = state.owner
    seen = {t}
    frontier = [t]
    for d in range(1, 7):
        nxt = []
        for x in frontier:
            for u in g.NB[x]:
                if u in seen:
                    continue
                if owner[u] >= 0:
                    return float(d)
                seen.add(u)
                nxt.append(u)
        frontier = nxt
    return 7.0


def choose(state: Any, rng: random.Random) -> Action:
    g = state.game
    me = state.current_player()
    legal = state.legal_actions()
    obs = state.observation(me)
    battle = obs["battle"]
    if battle is not None and battle["step"] in ("attacker_card", "defender_card"):
        return _choose_card(state, obs, me, legal)
    # outside a secret card choice the observation is the whole position

    def score(a: Action) -> float:
        if g.ATTACK <= a < g.VOID:
            return _attack_value(state, me, a - g.ATTACK)
        if a < g.EXPAND and state.phase == PLACE:  # placement round
            return _placement_room(state, a - g.PLACE)
        return evaluate_for(_after(state, a), me)

    return best_of(legal, score, rng)


def _choose_card(state: Any, obs: dict[str, Any], me: int, legal: list[Action]) -> Action:
    g = state.game
    battle = obs["battle"]
    hands = obs["hands"]
    attacker = battle["attacker"] == me
    other = battle["defender"] if attacker else battle["attacker"]
    roll = battle["attacker_roll"] if attacker else battle["defender_roll"]
    mine = tuple(sorted(set(hands[me]))) or (0,)
    theirs = tuple(sorted(set(hands[other]))) or (0,)
    c = card_choice(attacker, roll, battle["dice"], mine, theirs, g.ties_attacker)
    a = g.CARD + CARD_VALUES.index(c)
    return a if a in legal else legal[0]


def value(state: Any) -> list[float]:
    """Winning chances per seat: a softmax of the static scores, sharper as the board fills."""
    if state.phase == OVER:
        returns: list[float] = state.returns()
        return returns
    s = scores(state)
    g = state.game
    fill = 1.0 - state.empty / g.T
    k = (0.25 + 1.5 * fill) * 8.0 / math.sqrt(g.T)
    alive = state.alive
    m = max(s[p] for p in range(len(s)) if alive[p])
    e = [math.exp(k * (x - m)) if alive[p] else 0.0 for p, x in enumerate(s)]
    tot = sum(e)
    return [x / tot for x in e]


# --- cheap ranking and rollout policy for MCTS ----------------------------------------------

def _quick(state: Any, p: int, a: int) -> float:
    """A cheap local score of action ``a`` for ``p`` (no copy of the position): the unit
    gained, squares closed or denied, exposure; attacks by their odds."""
    g = state.game
    owner = state.owner
    if a < g.EXPAND:  # placement round: room around
        return _placement_room(state, a - g.PLACE)
    if a >= g.VOID:
        if not g.TELEPORT <= a < g.CARD:
            return 0.0
        s, side, u = g.teleport_parts(a)
        return _teleport_target_score(state, p, u) + _teleport_leave_score(state, p, s, side)
    if a >= g.ATTACK:
        t = a - g.ATTACK
        dfn = owner[t]
        k = sum(1 for u in g.NB[t] if owner[u] == p)
        pw = attack_odds(k, _hand_values(state.hands[p]), _hand_values(state.hands[dfn]), g.ties_attacker)
        b = t & ~3
        own = sum(1 for x in range(b, b + 4) if owner[x] == p)
        close = CLOSED_W + TELEPORT_W if own == 3 else 0.0
        return pw * (2.0 + close) - (1.0 - pw) - 0.3
    return _claim_score(state, p, a - g.EXPAND, 1.0)


def _teleport_target_score(state: Any, p: int, u: int) -> float:
    """A teleport's landing on the empty triangle ``u``. "claim": one unit more, the teleport
    spent. "move": no unit more, and the square opens (closable again, one triangle free)."""
    base = THREE_W - CLOSED_W - TELEPORT_W if state.game.teleport_move else 1.0 - TELEPORT_W
    return _claim_score(state, p, u, base)


def _teleport_leave_score(state: Any, p: int, square: int, side: int) -> float:
    """teleport="move": the triangle left empty can be taken by an enemy across its side, and
    then the square stays open. Under "claim" nothing leaves: 0."""
    g = state.game
    if not g.teleport_move:
        return 0.0
    across = state.owner[g.NB[4 * square + side][2]]
    return -THREE_W if across >= 0 and across != p else 0.0


def _split_teleports(state: Any, legal: list[Action]) -> tuple[int, int]:
    """``legal`` (sorted) holds its teleports at ``legal[lo:hi]``."""
    g = state.game
    return bisect_left(legal, g.TELEPORT), bisect_left(legal, g.CARD)


def _teleport_scores(state: Any, p: int, teleports: list[Action]) -> list[float]:
    """:func:`_quick` of many teleports at once: each target and each (square, side) is scored once."""
    g = state.game
    targets: dict[int, float] = {}
    leaves: dict[int, float] = {}
    out = []
    for a in teleports:
        rest, u = divmod(a - g.TELEPORT, g.T)
        t = targets.get(u)
        if t is None:
            t = targets[u] = _teleport_target_score(state, p, u)
        v = leaves.get(rest)
        if v is None:
            side, square = divmod(rest, g.S)
            v = leaves[rest] = _teleport_leave_score(state, p, square, side)
        out.append(t + v)
    return out


def _best_teleport(state: Any, p: int, teleports: list[Action]) -> tuple[Action, float]:
    """The first teleport (in ``teleports``' sorted order) of highest :func:`_quick`, without
    scoring them one by one: every (square, side) goes with the same empty targets, and a
    teleport's score is its target's plus its (square, side)'s."""
    g = state.game
    T = g.T
    first = (teleports[0] - g.TELEPORT) // T
    n_targets = bisect_left(teleports, g.TELEPORT + (first + 1) * T)
    u = max((a - g.TELEPORT - first * T for a in teleports[:n_targets]),
            key=lambda x: _teleport_target_score(state, p, x))
    rest = max(((a - g.TELEPORT) // T for a in teleports[::n_targets]),
               key=lambda r: _teleport_leave_score(state, p, r % g.S, r // g.S))
    score = _teleport_target_score(state, p, u) + _teleport_leave_score(state, p, rest % g.S, rest // g.S)
    return g.TELEPORT + rest * T + u, score


def _claim_score(state: Any, p: int, u: int, base: float) -> float:
    """``base`` plus what taking the empty triangle ``u`` does locally: a square closed, three
    quarters owned, an opponent's square denied, units exposed."""
    g = state.game
    owner = state.owner
    b = u & ~3
    own = opp = 0
    denied = 0.0
    for x in range(b, b + 4):
        o = owner[x]
        if x == u:
            continue
        if o == p:
            own += 1
        elif o >= 0:
            opp += 1
    if opp == 3:
        others = {owner[x] for x in range(b, b + 4) if x != u}
        if len(others) == 1:
            denied = CLOSED_W  # their square can no longer close
    score = base + denied
    if own == 3:
        score += CLOSED_W + TELEPORT_W
    elif own == 2 and opp == 0:
        score += THREE_W
    exposed = sum(1 for x in g.NB[u] if owner[x] >= 0 and owner[x] != p)
    return score - EXPOSED_W * exposed


def candidates(state: Any, limit: int) -> list[Action]:
    """The ``limit`` most promising actions by :func:`_quick`, best first (battle steps and
    chance nodes keep every action)."""
    legal: list[Action] = state.legal_actions()
    if len(legal) <= limit or state.phase == BATTLE:
        return legal
    p = state.current_player()
    lo, hi = _split_teleports(state, legal)
    scores = [_quick(state, p, a) for a in legal[:lo]]
    scores += _teleport_scores(state, p, legal[lo:hi])
    scores += [_quick(state, p, a) for a in legal[hi:]]
    order = sorted(range(len(legal)), key=lambda i: -scores[i])
    return [legal[i] for i in order[:limit]]


def rollout(state: Any, rng: random.Random) -> Action:
    """Light policy: the best action by :func:`_quick` most of the time, else any."""
    legal: list[Action] = state.legal_actions()
    if len(legal) == 1 or rng.random() < 0.25:
        return legal[rng.randrange(len(legal))]
    if state.phase == BATTLE:  # cards by the model, voids at random
        g = state.game
        battle = state.battle
        if battle.step == VOID:
            return legal[rng.randrange(len(legal))]
        att = battle.step == A_CARD  # else the defender's card
        me = battle.attacker if att else battle.defender
        other = battle.defender if att else battle.attacker
        roll = battle.attacker_roll if att else battle.defender_roll
        c = card_choice(att, roll, battle.dice, _hand_values(state.hands[me]),
                        _hand_values(state.hands[other]), g.ties_attacker)
        a = g.CARD + CARD_VALUES.index(c)
        return a if a in legal else legal[0]
    return best_quick(state, state.current_player(), legal)


def best_quick(state: Any, p: int, legal: list[Action]) -> Action:
    """``max(legal, key=_quick)`` (the first action of highest score), with the teleports scored
    in bulk: under teleport="move" they are most of the legal actions."""
    lo, hi = _split_teleports(state, legal)
    if hi - lo < 2:
        return max(legal, key=lambda a: _quick(state, p, a))
    best: Action | None = None
    best_v = -math.inf
    for a in legal[:lo]:
        v = _quick(state, p, a)
        if v > best_v:
            best, best_v = a, v
    tp, v = _best_teleport(state, p, legal[lo:hi])
    if v > best_v:
        best, best_v = tp, v
    for a in legal[hi:]:
        v = _quick(state, p, a)
        if v > best_v:
            best, best_v = a, v
    assert best is not None, "a teleport always scores above -inf"
    return best

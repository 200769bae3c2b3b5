# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""TRI compiled (Cython): the same rules as ``ludoteca.games.tri`` on C arrays, and a random
playout loop in C. Built by ``setup.py`` (optional); used through ``ludoteca.games.tri.compiled``.

The Python engine (``__init__.py``) is the readable reference: every function here mirrors one
there (``_legal_actions`` / ``_act_actions``, ``chance_outcomes``, ``_apply`` / ``_apply_act`` /
``_apply_battle``, ``_claim``, ``_reveal``, ``_end_turn``, ``_continue``, ``_weakest``,
``_eliminate``, ``returns``) and ``tests/test_compiled_tri.py`` proves them equal. Phases, steps,
action ids and chance outcome ids are the Python engine's. Hidden information (battle rolls and
cards) does not change the engine: like the Python state, this one holds the true position.

The C-level names the generic compiled search includes (``core/_mcts.pxi``) are ``MAX_ACTIONS``,
``Gm``, ``St``, ``_player``, ``_legal``, ``_chance``, ``_apply``, ``_returns`` and
``_random_action``, and ``_value`` (the mirror of ``heuristic.value``, the leaf evaluation of
TRI's MCTS); the search is included below the rules (``CState.search``, and ``CState.search_root``
with ``_policy``, the mirror of ``heuristic.rollout``, playing the rollouts: the ``strong`` agent's,
through ``compiled.search``).
"""

from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc
from libc.math cimport exp, sqrt

cdef enum:
    MAXN = 12            # largest board side (MAX_SIZE)
    MAXT = 576           # most triangles (4 * 12 * 12)
    MAXS = 144           # most squares
    MAXP = 4             # most players
    # (T - 4q) * (1 + 4q) bounds the actions at a decision node (q closed squares of the player,
    # four teleport sides): at most (577 / 2) ** 2 < 83233 on the largest board
    MAX_ACTIONS = 83240
    NCOUNTERS = 12
    # phases and battle steps (the Python engine's)
    PLACE = 0
    ACT = 1
    BATTLE = 2
    INCOME = 3
    TIEBREAK = 4
    OVER = 5
    A_ROLL = 0
    D_ROLL = 1
    A_CARD = 2
    D_CARD = 3
    VOIDSTEP = 4
    # chance outcome bases
    ROLL0 = 0
    INCOME0 = 5
    OUT0 = 12
    PLAYER0 = 16
    # counters (COUNTER_NAMES order)
    C_BATTLES = 0
    C_K1 = 1
    C_W1 = 4
    C_CLOSED = 7
    C_TELEPORTS = 8
    C_ELIM = 9
    C_EXPANDS = 10
    C_PASSES = 11
    CUR_CHANCE = -1
    CUR_TERMINAL = -4

MAX_SIZE = MAXN
MAX_PLAYERS = MAXP
MAX_LEGAL = MAX_ACTIONS

cdef int CARD_VALUE[4]
CARD_VALUE[:] = [0, 2, 3, 4]
cdef int CARD_IDX[5]
CARD_IDX[:] = [0, -1, 1, 2, 3]
cdef int INCOME_CARD[7]
INCOME_CARD[:] = [0, 1, 1, 1, 2, 2, 3]


cdef struct Gm:
    int size
    int T
    int S
    int players
    int ties_attacker
    int turn_limit
    int sides          # 4 under teleport="move", 1 under "claim"
    int EXPAND
    int ATTACK
    int VOID
    int TELEPORT
    int CARD
    int PASS
    int teleports       # the rulebook's options (RULES.md values in brackets): teleports (on),
    int start[4]        # start_0 .. start_4 (1 each), income_every (3), income_1 .. income_6 as
    int income_every    # card indices (+2 +2 +2 +3 +3 +4), elimination_cards (on), most_dice (3)
    int income_card[7]
    int elimination_cards
    int most_dice
    int cards_by_model  # the search's own copy only: in-tree card choices play the card model (below)
    int prune_k         # the search's own copy only: decision nodes keep their prune_k best actions
    int nb[MAXT][3]


cdef struct St:
    signed char owner[MAXT]     # a seat or -1
    signed char used[MAXS]      # teleport used on this square
    int units[MAXP]             # len(owned[s])
    int hands[MAXP][4]          # counts per CARD_VALUES
    int alive[MAXP]
    int n_alive
    int empty
    int to_move
    int round
    int turn
    int phase
    # the battle (phase BATTLE only); rolls 0 and cards -1 mean None
    int b_att
    int b_def
    int b_target
    int b_dice
    int b_step
    int b_aroll
    int b_droll
    int b_acard
    int b_dcard
    int counters[NCOUNTERS]


from ludoteca.core._rng cimport _next, _below


# --- the rules (mirror of TriState) -------------------------------------------------------------

cdef inline int _player(const Gm* g, const St* s) noexcept nogil:
    """TriState.current_player: a seat, -1 at a chance node, -4 at the end."""
    cdef int ph = s.phase
    if ph <= ACT:
        return s.to_move
    if ph == BATTLE:
        if s.b_step <= D_ROLL:
            return CUR_CHANCE
        return s.b_att if s.b_step == A_CARD else s.b_def
    if ph == OVER:
        return CUR_TERMINAL
    return CUR_CHANCE


cdef inline bint _closed(const St* s, int sq) noexcept nogil:
    cdef int b = sq * 4
    cdef int o = s.owner[b]
    return o == s.owner[b + 1] and o == s.owner[b + 2] and o == s.owner[b + 3]


cdef inline int _weakest(const Gm* g, const St* s, int* tied) noexcept nogil:
    """TriState._weakest: alive seats with the fewest units, then the lowest card total."""
    cdef int p, k = 0, u, c, bu = 0, bc = 0
    for p in range(g.players):
        if not s.alive[p]:
            continue
        u = s.units[p]
        c = 2 * s.hands[p][1] + 3 * s.hands[p][2] + 4 * s.hands[p][3]
        if k == 0 or u < bu or (u == bu and c < bc):
            bu = u
            bc = c
            tied[0] = p
            k = 1
        elif u == bu and c == bc:
            tied[k] = p
            k += 1
    return k


cdef int _act_lists(const Gm* g, const St* s, int p, int* exp_att, int* n_exp, int* squares,
                    int* n_sq, int* empties, int* n_empty) noexcept nogil:
    """The parts of TriState._act_actions: expansion and attack ids in order (into ``exp_att``),
    the player's closed unused squares ascending and the empty triangles ascending (teleports
    are ``sides * squares * empties``, listed by the caller). Returns the count in ``exp_att``."""
    cdef signed char mark[MAXT]
    cdef int t, j, u, o, k = 0, b, T = g.T
    for t in range(T):
        mark[t] = 0
    for t in range(T):
        if s.owner[t] == p:
            for j in range(3):
                u = g.nb[t][j]
                o = s.owner[u]
                if o < 0:
                    mark[u] = 1
                elif o != p:
                    mark[u] = 2
    for u in range(T):
        if mark[u] == 1:
            exp_att[k] = g.EXPAND + u
            k += 1
    n_exp[0] = k
    for u in range(T):
        if mark[u] == 2:
            b = u & ~3
            if not _closed(s, b >> 2):
                exp_att[k] = g.ATTACK + u
                k += 1
    n_sq[0] = 0
    n_empty[0] = 0
    if s.empty and s.units[p] >= 4 and g.teleports:
        for j in range(g.S):
            if not s.used[j]:
                b = 4 * j
                if s.owner[b] == p and s.owner[b + 1] == p and s.owner[b + 2] == p and s.owner[b + 3] == p:
                    squares[n_sq[0]] = j
                    n_sq[0] += 1
        if n_sq[0]:
            for u in range(T):
                if s.owner[u] < 0:
                    empties[n_empty[0]] = u
                    n_empty[0] += 1
    return k


cdef enum:
    _PRUNE_MAX = 32     # the most candidates a pruned decision node keeps


cdef int _legal(const Gm* g, const St* s, int* out) noexcept nogil:
    """TriState._legal_actions into ``out`` (room for MAX_ACTIONS ids); returns the count. At a
    chance node: the outcome ids (as the Python engine). The search's copy of the game (never the
    rules') may set two flags: ``g.cards_by_model`` (a card choice lists only the card model's card
    when it is in hand: :func:`_model_card`) and ``g.prune_k`` (a decision outside a battle lists
    only its ``prune_k`` best actions, best first: :func:`_prune`, ``heuristic.candidates``)."""
    cdef int k = _legal_all(g, s, out)
    if g.prune_k > 0 and s.phase != BATTLE and k > g.prune_k and _player(g, s) >= 0:
        return _prune(g, s, out, k)
    return k


cdef int _prune(const Gm* g, const St* s, int* out, int k) noexcept nogil:
    """heuristic.candidates in C: the ``g.prune_k`` (at most _PRUNE_MAX) best of the ``k`` actions
    in ``out`` by :func:`_quick`, best first, ties in list order (Python's stable sort); written
    back to ``out``, their number returned. No buffer beyond the kept few (the search may run in
    several threads)."""
    cdef int m = g.prune_k if g.prune_k < _PRUNE_MAX else _PRUNE_MAX
    cdef int p = _player(g, s)
    cdef int keep_a[_PRUNE_MAX]
    cdef double keep_v[_PRUNE_MAX]
    cdef int n = 0, i, j, a
    cdef double v
    for i in range(k):
        a = out[i]
        v = _quick(g, s, p, a)
        if n == m and v <= keep_v[n - 1]:
            continue
        j = n if n < m else m - 1               # after every kept action scoring at least v
        while j > 0 and keep_v[j - 1] < v:
            keep_a[j] = keep_a[j - 1]
            keep_v[j] = keep_v[j - 1]
            j -= 1
        keep_a[j] = a
        keep_v[j] = v
        if n < m:
            n += 1
    for i in range(n):
        out[i] = keep_a[i]
    return n


cdef int _legal_all(const Gm* g, const St* s, int* out) noexcept nogil:
    """:func:`_legal` without pruning (the card model still applies under its flag)."""
    cdef int ph = s.phase
    cdef int k = 0, i, j, u, t, side, base, n_exp, n_sq, n_empty, p
    cdef int exp_att[2 * MAXT]
    cdef int squares[MAXS]
    cdef int empties[MAXT]
    cdef int tied[MAXP]
    if ph == ACT:
        p = s.to_move
        k = _act_lists(g, s, p, exp_att, &n_exp, squares, &n_sq, empties, &n_empty)
        for i in range(k):
            out[i] = exp_att[i]
        for side in range(g.sides):
            for i in range(n_sq):
                base = g.TELEPORT + (side * g.S + squares[i]) * g.T
                for j in range(n_empty):
                    out[k] = base + empties[j]
                    k += 1
        if k == 0:
            out[0] = g.PASS
            k = 1
        return k
    if ph == BATTLE:
        if s.b_step <= D_ROLL:
            for i in range(6):
                out[i] = ROLL0 + i
            return 6
        if s.b_step == VOIDSTEP:
            # NB[target] sorted ascending
            for i in range(3):
                u = g.nb[s.b_target][i]
                if s.owner[u] == s.b_att:
                    j = k
                    while j > 0 and out[j - 1] > g.VOID + u:
                        out[j] = out[j - 1]
                        j -= 1
                    out[j] = g.VOID + u
                    k += 1
            return k
        p = s.b_att if s.b_step == A_CARD else s.b_def
        if g.cards_by_model:
            u = _model_card(g, s)
            if u >= 0:
                out[0] = u
                return 1
        for i in range(4):
            if s.hands[p][i]:
                out[k] = g.CARD + i
                k += 1
        if k == 0:
            out[0] = g.CARD
            k = 1
        return k
    if ph == PLACE:
        for t in range(g.T):
            if (s.owner[t] < 0 and s.owner[g.nb[t][0]] < 0 and s.owner[g.nb[t][1]] < 0
                    and s.owner[g.nb[t][2]] < 0):
                out[k] = PLAYER0 + t
                k += 1
        return k
    if ph == INCOME:
        for i in range(6):
            out[i] = INCOME0 + 1 + i
        return 6
    if ph == TIEBREAK:
        k = _weakest(g, s, tied)
        for i in range(k):
            out[i] = OUT0 + tied[i]
        return k
    return 0


cdef inline int _highest(uint64_t* rng, int dice) noexcept nogil:
    """The highest of ``dice`` fair dice (1..6)."""
    cdef int v = 1 + _below(rng, 6), w, i
    for i in range(1, dice):
        w = 1 + _below(rng, 6)
        if w > v:
            v = w
    return v


cdef int _chance(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """One chance outcome of ``s`` sampled with the engine's probabilities (-1 if not a chance node)."""
    cdef int tied[MAXP]
    cdef int k
    if s.phase == BATTLE:
        if s.b_step == A_ROLL:
            return ROLL0 + _highest(rng, s.b_dice) - 1
        if s.b_step == D_ROLL:
            return ROLL0 + _below(rng, 6)
        return -1
    if s.phase == INCOME:
        return INCOME0 + 1 + _below(rng, 6)
    if s.phase == TIEBREAK:
        k = _weakest(g, s, tied)
        return OUT0 + tied[_below(rng, k)]
    return -1


cdef inline void _claim(const Gm* g, St* s, int t, int p) noexcept nogil:
    s.owner[t] = p
    s.units[p] += 1
    s.empty -= 1
    if _closed(s, t >> 2):
        s.counters[C_CLOSED] += 1


cdef void _eliminate(const Gm* g, St* s, int seat) noexcept nogil:
    cdef int t, p, i, k
    s.alive[seat] = 0
    s.n_alive -= 1
    for t in range(g.T):
        if s.owner[t] == seat:
            s.owner[t] = -1
    s.empty += s.units[seat]
    s.units[seat] = 0
    s.counters[C_ELIM] += 1
    k = g.players - s.n_alive
    if not g.elimination_cards:
        return
    if k == 1:   # ELIMINATION_INCOME: (0, 1, 1, 0) after the first, (0, 2, 0, 1) after the second
        for p in range(g.players):
            if s.alive[p]:
                s.hands[p][1] += 1
                s.hands[p][2] += 1
    elif k == 2:
        for p in range(g.players):
            if s.alive[p]:
                s.hands[p][1] += 2
                s.hands[p][3] += 1


cdef void _continue(const Gm* g, St* s) noexcept nogil:
    cdef int p
    if s.n_alive <= 1 or (s.empty == 0 and s.n_alive == 2):
        s.phase = OVER
        return
    if s.turn >= g.turn_limit:
        s.phase = OVER
        return
    for p in range(s.to_move + 1, g.players):
        if s.alive[p]:
            s.to_move = p
            s.phase = PLACE if s.round == 1 else ACT
            return
    for p in range(g.players):
        if s.alive[p]:
            s.to_move = p
            break
    if g.income_every and s.round % g.income_every == 0:
        s.phase = INCOME
    else:
        s.round += 1
        s.phase = ACT


cdef void _end_turn(const Gm* g, St* s) noexcept nogil:
    cdef int p, k
    cdef int tied[MAXP]
    s.turn += 1
    if s.round >= 2:
        for p in range(g.players):
            if s.alive[p] and not s.units[p]:
                _eliminate(g, s, p)
    if s.empty == 0 and s.n_alive > 2:
        k = _weakest(g, s, tied)
        if k > 1:
            s.phase = TIEBREAK
            return
        _eliminate(g, s, tied[0])
    _continue(g, s)


cdef void _reveal(const Gm* g, St* s) noexcept nogil:
    cdef int att = s.b_att, dfn = s.b_def, i, t, a_tot, d_tot
    i = CARD_IDX[s.b_acard]
    if s.hands[att][i]:
        s.hands[att][i] -= 1
    i = CARD_IDX[s.b_dcard]
    if s.hands[dfn][i]:
        s.hands[dfn][i] -= 1
    a_tot = s.b_aroll + s.b_acard
    d_tot = s.b_droll + s.b_dcard
    if a_tot > d_tot or (a_tot == d_tot and g.ties_attacker):
        t = s.b_target
        s.counters[C_W1 + s.b_dice - 1] += 1
        s.units[dfn] -= 1
        s.owner[t] = -1
        s.empty += 1
        _claim(g, s, t, att)
        s.phase = ACT          # battle = None (the phase is set again by _end_turn)
        _end_turn(g, s)
    else:
        s.b_step = VOIDSTEP


cdef void _apply(const Gm* g, St* s, int a) noexcept nogil:
    """TriState._apply: ``a`` must be legal (a decision action or a chance outcome)."""
    cdef int ph = s.phase
    cdef int p = s.to_move
    cdef int t, k, j, card, rest, side, sq, u
    if ph == ACT:
        if a < g.ATTACK:
            _claim(g, s, a - g.EXPAND, p)
            s.counters[C_EXPANDS] += 1
            _end_turn(g, s)
        elif a < g.VOID:
            t = a - g.ATTACK
            k = 0
            for j in range(3):
                if s.owner[g.nb[t][j]] == p:
                    k += 1
            if k > g.most_dice:
                k = g.most_dice
            s.phase = BATTLE
            s.b_att = p
            s.b_def = s.owner[t]
            s.b_target = t
            s.b_dice = k
            s.b_step = A_ROLL
            s.b_aroll = 0
            s.b_droll = 0
            s.b_acard = -1
            s.b_dcard = -1
            s.counters[C_BATTLES] += 1
            s.counters[C_K1 + k - 1] += 1
        elif a == g.PASS:
            s.counters[C_PASSES] += 1
            _end_turn(g, s)
        else:
            rest = (a - g.TELEPORT) // g.T
            t = (a - g.TELEPORT) - rest * g.T
            side = rest // g.S
            sq = rest - side * g.S
            s.used[sq] = 1
            if g.sides == 4:         # teleport="move": the unit on that side leaves
                u = 4 * sq + side
                s.owner[u] = -1
                s.units[p] -= 1
                s.empty += 1
            _claim(g, s, t, p)
            s.counters[C_TELEPORTS] += 1
            _end_turn(g, s)
    elif ph == BATTLE:
        k = s.b_step
        if k == A_ROLL:
            s.b_aroll = a - ROLL0 + 1
            s.b_step = D_ROLL
        elif k == D_ROLL:
            s.b_droll = a - ROLL0 + 1
            s.b_step = A_CARD
        elif k == A_CARD:
            s.b_acard = CARD_VALUE[a - g.CARD]
            s.b_step = D_CARD
        elif k == D_CARD:
            s.b_dcard = CARD_VALUE[a - g.CARD]
            _reveal(g, s)
        else:
            t = a - g.VOID
            s.owner[t] = -1
            s.units[s.b_att] -= 1
            s.empty += 1
            s.phase = ACT
            _end_turn(g, s)
    elif ph == PLACE:
        _claim(g, s, a - PLAYER0, p)
        _end_turn(g, s)
    elif ph == INCOME:
        card = g.income_card[a - INCOME0]
        for j in range(g.players):
            if s.alive[j]:
                s.hands[j][card] += 1
        s.round += 1
        s.phase = ACT
    elif ph == TIEBREAK:
        _eliminate(g, s, a - OUT0)
        _continue(g, s)


cdef void _returns(const Gm* g, const St* s, double* out) noexcept nogil:
    """TriState.returns: the seats with the most units (alive) share 1; 0 each before the end."""
    cdef int p, best = -2, nwin = 0, u
    if s.phase != OVER:
        for p in range(g.players):
            out[p] = 0.0
        return
    for p in range(g.players):
        u = s.units[p] if s.alive[p] else -1
        if u > best:
            best = u
    for p in range(g.players):
        u = s.units[p] if s.alive[p] else -1
        if u == best:
            nwin += 1
    cdef double share = 1.0 / nwin
    for p in range(g.players):
        u = s.units[p] if s.alive[p] else -1
        out[p] = share if u == best else 0.0


cdef int _random_action(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A uniformly random legal action (a chance outcome by its probability at a chance node),
    without listing the teleports: the same distribution as ``legal[randrange(len(legal))]``
    over :func:`_legal`'s list. -1 when there is none (the end)."""
    cdef int ph = s.phase
    cdef int k, n, i, j, u, t, m, n_exp, n_sq, n_empty, rest, side
    cdef int exp_att[2 * MAXT]
    cdef int squares[MAXS]
    cdef int empties[MAXT]
    if ph == ACT:
        k = _act_lists(g, s, s.to_move, exp_att, &n_exp, squares, &n_sq, empties, &n_empty)
        n = k + g.sides * n_sq * n_empty
        if n == 0:
            return g.PASS
        i = _below(rng, n)
        if i < k:
            return exp_att[i]
        i -= k
        m = n_sq * n_empty
        side = i // m
        rest = i - side * m
        j = rest // n_empty
        return g.TELEPORT + (side * g.S + squares[j]) * g.T + empties[rest - j * n_empty]
    if ph == BATTLE:
        if s.b_step <= D_ROLL:
            return _chance(g, s, rng)
        if s.b_step == VOIDSTEP:
            m = 0
            for j in range(3):
                if s.owner[g.nb[s.b_target][j]] == s.b_att:
                    m += 1
            i = _below(rng, m)
            for j in range(3):
                u = g.nb[s.b_target][j]
                if s.owner[u] == s.b_att:
                    if i == 0:
                        return g.VOID + u
                    i -= 1
            return -1
        u = s.b_att if s.b_step == A_CARD else s.b_def
        m = 0
        for j in range(4):
            if s.hands[u][j]:
                m += 1
        if m == 0:
            return g.CARD
        i = _below(rng, m)
        for j in range(4):
            if s.hands[u][j]:
                if i == 0:
                    return g.CARD + j
                i -= 1
        return -1
    if ph == PLACE:
        m = 0
        for t in range(g.T):
            if (s.owner[t] < 0 and s.owner[g.nb[t][0]] < 0 and s.owner[g.nb[t][1]] < 0
                    and s.owner[g.nb[t][2]] < 0):
                empties[m] = t
                m += 1
        if m == 0:
            return -1
        return PLAYER0 + empties[_below(rng, m)]
    if ph == OVER:
        return -1
    return _chance(g, s, rng)


# --- the evaluation (mirror of heuristic.value) ------------------------------------------------
# The weights of ludoteca.games.tri.heuristic (tests check they are the same numbers).
cdef double CLOSED_W = 0.6
cdef double THREE_W = 0.3
cdef double TELEPORT_W = 0.35
cdef double EXPOSED_W = 0.06
cdef double ROOM_W = 0.03
cdef double CARD_COST = 0.15
WEIGHTS = (CLOSED_W, THREE_W, TELEPORT_W, EXPOSED_W, ROOM_W, CARD_COST)


cdef void _scores(const Gm* g, const St* s, double* out) noexcept nogil:
    """heuristic.scores: per seat, units + closed, closable and free-teleport squares + card
    points - exposed units + room (empty triangles next to own units), weighted."""
    cdef double f[MAXP][7]
    cdef signed char closed_tri[MAXT]
    cdef signed char seen[MAXT]
    cdef int p, q, t, j, u, o, b, o0, o1, o2, o3, empties, own, exposed
    for p in range(g.players):
        for j in range(7):
            f[p][j] = 0.0
        if s.alive[p]:
            f[p][0] = s.units[p]
            f[p][4] = 2 * s.hands[p][1] + 3 * s.hands[p][2] + 4 * s.hands[p][3]
    for q in range(g.S):
        b = 4 * q
        o0 = s.owner[b]
        o1 = s.owner[b + 1]
        o2 = s.owner[b + 2]
        o3 = s.owner[b + 3]
        if o0 >= 0 and o0 == o1 and o0 == o2 and o0 == o3:
            f[o0][1] += 1
            if not s.used[q] and g.teleports:
                f[o0][3] += 1
            closed_tri[b] = closed_tri[b + 1] = closed_tri[b + 2] = closed_tri[b + 3] = 1
            continue
        closed_tri[b] = closed_tri[b + 1] = closed_tri[b + 2] = closed_tri[b + 3] = 0
        empties = (o0 < 0) + (o1 < 0) + (o2 < 0) + (o3 < 0)
        if empties == 1:
            own = o0 if o0 >= 0 else o1
            if (o0 < 0 or o0 == own) and (o1 < 0 or o1 == own) and (o2 < 0 or o2 == own) and (o3 < 0 or o3 == own):
                f[own][2] += 1
    for p in range(g.players):
        if not s.alive[p]:
            continue
        for t in range(g.T):
            seen[t] = 0
        for t in range(g.T):
            if s.owner[t] != p:
                continue
            exposed = 0
            for j in range(3):
                u = g.nb[t][j]
                o = s.owner[u]
                if o < 0:
                    if not seen[u]:
                        seen[u] = 1
                        f[p][6] += 1
                elif o != p:
                    exposed = 1
            if exposed and not closed_tri[t]:
                f[p][5] += 1
    for p in range(g.players):
        out[p] = (f[p][0] + CLOSED_W * f[p][1] + THREE_W * f[p][2] + TELEPORT_W * f[p][3] + CARD_COST * f[p][4]
                  - EXPOSED_W * f[p][5] + ROOM_W * f[p][6])


cdef void _value(const Gm* g, const St* s, double* out) noexcept nogil:
    """heuristic.value: winning chances per seat, a softmax of the static scores sharper as the
    board fills (the returns at the end)."""
    cdef double sc[MAXP]
    cdef double fill, k, m = 0.0, tot = 0.0
    cdef int p, first = 1
    if s.phase == OVER:
        _returns(g, s, out)
        return
    _scores(g, s, sc)
    fill = 1.0 - <double>s.empty / g.T
    k = (0.25 + 1.5 * fill) * 8.0 / sqrt(<double>g.T)
    for p in range(g.players):
        if s.alive[p] and (first or sc[p] > m):
            m = sc[p]
            first = 0
    for p in range(g.players):
        out[p] = exp(k * (sc[p] - m)) if s.alive[p] else 0.0
        tot += out[p]
    for p in range(g.players):
        out[p] = out[p] / tot


# --- the light rollout policy (mirror of heuristic.rollout) -----------------------------------
# ``heuristic.rollout``: a uniformly random action a quarter of the time, else at a card choice the
# card of ``heuristic.card_choice``, at a void a random one, otherwise the first action of highest
# ``heuristic._quick`` (``best_quick``). The card model's two tables come from the heuristic's own
# functions (filled once, per tie rule): ``attack_odds`` and ``card_choice`` by hand masks (bit i:
# the hand holds card value ``CARD_VALUE[i]``).

cdef double _ODDS[2][4][16][16]               # [ties_attacker][dice][attacker mask][defender mask]
cdef signed char _CHOICE[2][2][7][4][16][16]  # [ties_attacker][attacker][roll][dice][mine][theirs]
cdef int _stamp[MAXT]                          # BFS marks of _placement_room
cdef int _stamp_now = 0
cdef int* _pbuf = <int*>malloc(MAX_ACTIONS * sizeof(int))   # the policy's legal list
_tables_ready = False


def _fill_tables():
    """The card model's tables, from ``heuristic.attack_odds`` and ``heuristic.card_choice``."""
    global _tables_ready
    if _tables_ready:
        return
    from ludoteca.games.tri import heuristic
    cdef int ties, att, roll, dice, mine, theirs
    values = [tuple(CARD_VALUE[i] for i in range(4) if m >> i & 1) or (0,) for m in range(16)]
    for ties in range(2):
        for dice in range(1, 4):
            for mine in range(16):
                for theirs in range(16):
                    _ODDS[ties][dice][mine][theirs] = heuristic.attack_odds(dice, values[mine], values[theirs],
                                                                           bool(ties))
                    for att in range(2):
                        for roll in range(1, 7):
                            _CHOICE[ties][att][roll][dice][mine][theirs] = heuristic.card_choice(
                                bool(att), roll, dice, values[mine], values[theirs], bool(ties))
    _tables_ready = True


cdef inline int _mask(const St* s, int p) noexcept nogil:
    cdef int i, m = 0
    for i in range(4):
        if s.hands[p][i] > 0:
            m |= 1 << i
    return m


cdef int _model_card(const Gm* g, const St* s) noexcept nogil:
    """The card ``heuristic.card_choice`` picks at this card choice (from the chooser's own roll and
    the two hands, which are public: nothing hidden from the chooser), or -1 when it is not in hand.

    Why (issue 15, docs/compiled.md): a search on one determinized world of a battle would let the
    defender's card choice in its tree see the attacker's secret card (and the attacker's the
    defender's roll) and best-respond to it: a clairvoyant opponent makes every attack look worse
    than it is. With ``g.cards_by_model`` every card choice below the root plays this card instead
    (the root's own choices come from ``root_only``), so no choice in the tree reads a secret."""
    cdef int att = s.b_step == A_CARD
    cdef int me = s.b_att if att else s.b_def
    cdef int other = s.b_def if att else s.b_att
    cdef int roll = s.b_aroll if att else s.b_droll
    cdef int c = _CHOICE[1 if g.ties_attacker else 0][att][roll][s.b_dice][_mask(s, me)][_mask(s, other)]
    cdef int idx = CARD_IDX[c] if 0 <= c <= 4 else -1
    if idx >= 0 and s.hands[me][idx] > 0:
        return g.CARD + idx
    return -1


cdef double _placement_room(const Gm* g, const St* s, int t) noexcept nogil:
    """heuristic._placement_room: steps (1 to 6, else 7) from the empty ``t`` to the nearest unit."""
    global _stamp_now
    cdef int front[MAXT]
    cdef int nxt[MAXT]
    cdef int nf = 1, nn, d, i, j, x, u
    _stamp_now += 1
    if _stamp_now == 0x7FFFFFFF:
        for i in range(MAXT):
            _stamp[i] = 0
        _stamp_now = 1
    _stamp[t] = _stamp_now
    front[0] = t
    for d in range(1, 7):
        nn = 0
        for i in range(nf):
            x = front[i]
            for j in range(3):
                u = g.nb[x][j]
                if _stamp[u] == _stamp_now:
                    continue
                if s.owner[u] >= 0:
                    return <double>d
                _stamp[u] = _stamp_now
                nxt[nn] = u
                nn += 1
        for i in range(nn):
            front[i] = nxt[i]
        nf = nn
    return 7.0


cdef double _claim_score(const Gm* g, const St* s, int p, int u, double base) noexcept nogil:
    """heuristic._claim_score: ``base`` plus a square closed, three quarters owned, an opponent's
    square denied, minus units exposed."""
    cdef int b = u & ~3, x, o, own = 0, opp = 0, first = -2, same = 1, exposed = 0, j
    cdef double denied = 0.0, score
    for x in range(b, b + 4):
        if x == u:
            continue
        o = s.owner[x]
        if o == p:
            own += 1
        elif o >= 0:
            opp += 1
    if opp == 3:
        for x in range(b, b + 4):
            if x == u:
                continue
            if first == -2:
                first = s.owner[x]
            elif s.owner[x] != first:
                same = 0
        if same:
            denied = CLOSED_W
    score = base + denied
    if own == 3:
        score += CLOSED_W + TELEPORT_W
    elif own == 2 and opp == 0:
        score += THREE_W
    for j in range(3):
        o = s.owner[g.nb[u][j]]
        if o >= 0 and o != p:
            exposed += 1
    return score - EXPOSED_W * exposed


cdef inline double _target_score(const Gm* g, const St* s, int p, int u) noexcept nogil:
    """heuristic._teleport_target_score."""
    if g.sides == 4:
        return _claim_score(g, s, p, u, THREE_W - CLOSED_W - TELEPORT_W)
    return _claim_score(g, s, p, u, 1.0 - TELEPORT_W)


cdef inline double _leave_score(const Gm* g, const St* s, int p, int square, int side) noexcept nogil:
    """heuristic._teleport_leave_score."""
    cdef int across
    if g.sides != 4:
        return 0.0
    across = s.owner[g.nb[4 * square + side][2]]
    return -THREE_W if across >= 0 and across != p else 0.0


cdef double _quick(const Gm* g, const St* s, int p, int a) noexcept nogil:
    """heuristic._quick: a cheap local score of action ``a`` for ``p``."""
    cdef int t, dfn, k, j, b, own, rest
    cdef double pw, close
    if a < g.EXPAND:
        return _placement_room(g, s, a - PLAYER0)
    if a >= g.VOID:
        if not (g.TELEPORT <= a < g.CARD):
            return 0.0
        rest = (a - g.TELEPORT) // g.T
        return _target_score(g, s, p, (a - g.TELEPORT) % g.T) + _leave_score(g, s, p, rest % g.S, rest // g.S)
    if a >= g.ATTACK:
        t = a - g.ATTACK
        dfn = s.owner[t]
        k = 0
        for j in range(3):
            if s.owner[g.nb[t][j]] == p:
                k += 1
        pw = _ODDS[1 if g.ties_attacker else 0][k][_mask(s, p)][_mask(s, dfn)]
        b = t & ~3
        own = 0
        for j in range(b, b + 4):
            if s.owner[j] == p:
                own += 1
        close = CLOSED_W + TELEPORT_W if own == 3 else 0.0
        return pw * (2.0 + close) - (1.0 - pw) - 0.3
    return _claim_score(g, s, p, a - g.EXPAND, 1.0)


cdef int _best_quick(const Gm* g, const St* s, int p, const int* legal, int n) noexcept nogil:
    """heuristic.best_quick: the first action of highest :func:`_quick`, the teleports scored in
    bulk (every square and side goes with the same empty targets)."""
    cdef int lo = 0, hi, i, best = legal[0], first, n_targets, u = -1, rest = -1, x, r
    cdef double best_v = -1e300, v, tv = -1e300, lv = -1e300
    while lo < n and legal[lo] < g.TELEPORT:
        lo += 1
    hi = lo
    while hi < n and legal[hi] < g.CARD:
        hi += 1
    if hi - lo < 2:
        for i in range(n):
            v = _quick(g, s, p, legal[i])
            if v > best_v:
                best_v = v
                best = legal[i]
        return best
    for i in range(lo):
        v = _quick(g, s, p, legal[i])
        if v > best_v:
            best_v = v
            best = legal[i]
    first = (legal[lo] - g.TELEPORT) // g.T
    n_targets = 0
    while lo + n_targets < hi and legal[lo + n_targets] < g.TELEPORT + (first + 1) * g.T:
        n_targets += 1
    for i in range(lo, lo + n_targets):
        x = legal[i] - g.TELEPORT - first * g.T
        v = _target_score(g, s, p, x)
        if v > tv:
            tv = v
            u = x
    i = lo
    while i < hi:
        r = (legal[i] - g.TELEPORT) // g.T
        v = _leave_score(g, s, p, r % g.S, r // g.S)
        if v > lv:
            lv = v
            rest = r
        i += n_targets
    v = tv + lv
    if v > best_v:
        best_v = v
        best = g.TELEPORT + rest * g.T + u
    for i in range(hi, n):
        v = _quick(g, s, p, legal[i])
        if v > best_v:
            best_v = v
            best = legal[i]
    return best


cdef int _card_choice(const Gm* g, const St* s) noexcept nogil:
    """The card action of ``heuristic.rollout`` at a card choice (``card_choice`` by the model;
    the first legal action when that card is not in hand)."""
    cdef int att = s.b_step == A_CARD
    cdef int me = s.b_att if att else s.b_def
    cdef int other = s.b_def if att else s.b_att
    cdef int roll = s.b_aroll if att else s.b_droll
    cdef int c = _CHOICE[1 if g.ties_attacker else 0][att][roll][s.b_dice][_mask(s, me)][_mask(s, other)]
    cdef int a = g.CARD + CARD_IDX[c], i
    cdef int n = _legal(g, s, _pbuf)
    for i in range(n):
        if _pbuf[i] == a:
            return a
    return _pbuf[0]


cdef int _policy(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """heuristic.rollout in C (a chance node: an outcome by its probability). Its random numbers
    are the search's own, so it plays the same distribution as the Python policy, not its games."""
    cdef int p = _player(g, s)
    cdef int n
    if p < 0:
        return _chance(g, s, rng)
    if _below(rng, 4) == 0:
        return _random_action(g, s, rng)
    if s.phase == BATTLE:
        if s.b_step == VOIDSTEP:
            return _random_action(g, s, rng)
        return _card_choice(g, s)
    n = _legal_all(g, s, _pbuf)                 # the whole list: _best_quick reads its order
    if n == 1:
        return _pbuf[0]
    return _best_quick(g, s, p, _pbuf, n)


cdef inline int _playout(const Gm* g, St* s, uint64_t* rng) noexcept nogil:
    """Play ``s`` to the end at random; returns the number of actions."""
    cdef int count = 0, a
    while s.phase != OVER:
        a = _random_action(g, s, rng)
        if a < 0:
            break
        _apply(g, s, a)
        count += 1
    return count


include "../../core/_mcts.pxi"
include "_ismcts.pxi"
include "../../core/_cstate.pxi"


# --- the Python face --------------------------------------------------------------------------

cdef int* _buf = <int*>malloc(MAX_ACTIONS * sizeof(int))

# chance outcomes and probabilities computed as the Python engine does (the same floats)
_DICE = {k: [(ROLL0 + v - 1, (v ** k - (v - 1) ** k) / 6 ** k) for v in range(1, 7)] for k in (1, 2, 3)}
_INCOME_OUTCOMES = [(INCOME0 + f, 1.0 / 6.0) for f in range(1, 7)]


cdef class CState(_CStateBase):
    """A TRI position in C. Build it with :meth:`load` (the wrapper does: ``compiled.py``).
    Like the Python state it holds the true position, battle secrets included: :meth:`search`
    reads all of it, so give it a position the searching seat may know (one of
    ``TriState.worlds(seat)``)."""

    def __init__(self, int size, int players, bint ties_attacker, int turn_limit, bint teleport_move,
                 bint teleports=True, start=(1, 1, 1, 1), int income_every=3, income=(0, 1, 1, 1, 2, 2, 3),
                 bint elimination_cards=True, int most_dice=3):
        if not 2 <= size <= MAXN:
            raise ValueError(f"board size {size} is beyond the compiled engine (2 to {MAXN})")
        if not 2 <= players <= MAXP:
            raise ValueError(f"{players} players is beyond the compiled engine (2 to {MAXP})")
        cdef int n = size
        cdef int T = 4 * n * n
        cdef int S = n * n
        cdef int r, c, base, up, down, right, left, i, j
        self.g.size = n
        self.g.T = T
        self.g.S = S
        self.g.players = players
        self.g.ties_attacker = ties_attacker
        self.g.turn_limit = turn_limit
        self.g.sides = 4 if teleport_move else 1
        self.g.EXPAND = PLAYER0 + T
        self.g.ATTACK = PLAYER0 + 2 * T
        self.g.VOID = PLAYER0 + 3 * T
        self.g.TELEPORT = PLAYER0 + 4 * T
        self.g.CARD = self.g.TELEPORT + self.g.sides * S * T
        self.g.PASS = self.g.CARD + 4
        if len(start) != 4 or len(income) != 7 or not 1 <= most_dice <= 3 or income_every < 0:
            raise ValueError("start: four counts; income: seven card indices; most_dice 1 to 3; income_every >= 0")
        self.g.teleports = teleports
        self.g.income_every = income_every
        self.g.elimination_cards = elimination_cards
        self.g.most_dice = most_dice
        for i in range(4):
            self.g.start[i] = start[i]
        for i in range(7):
            self.g.income_card[i] = income[i]
            if not 0 <= income[i] <= 3:
                raise ValueError(f"income card index {income[i]} is not 0 to 3")
        self.g.cards_by_model = 0
        self.g.prune_k = 0
        for r in range(n):
            for c in range(n):
                base = (r * n + c) * 4
                up = (((r - 1 + n) % n) * n + c) * 4
                down = (((r + 1) % n) * n + c) * 4
                right = (r * n + (c + 1) % n) * 4
                left = (r * n + (c - 1 + n) % n) * 4
                self.g.nb[base][0] = base + 1
                self.g.nb[base][1] = base + 3
                self.g.nb[base][2] = up + 2
                self.g.nb[base + 1][0] = base
                self.g.nb[base + 1][1] = base + 2
                self.g.nb[base + 1][2] = right + 3
                self.g.nb[base + 2][0] = base + 1
                self.g.nb[base + 2][1] = base + 3
                self.g.nb[base + 2][2] = down
                self.g.nb[base + 3][0] = base
                self.g.nb[base + 3][1] = base + 2
                self.g.nb[base + 3][2] = left + 1
        for i in range(MAXT):
            self.s.owner[i] = -1
        for i in range(MAXS):
            self.s.used[i] = 0
        for i in range(MAXP):
            self.s.units[i] = 0
            self.s.alive[i] = 1 if i < players else 0
            for j in range(4):
                self.s.hands[i][j] = self.g.start[j] if i < players else 0
        self.s.n_alive = players
        self.s.empty = T
        self.s.to_move = 0
        self.s.round = 1
        self.s.turn = 0
        self.s.phase = PLACE
        self.s.b_att = self.s.b_def = self.s.b_target = self.s.b_dice = self.s.b_step = 0
        self.s.b_aroll = self.s.b_droll = 0
        self.s.b_acard = self.s.b_dcard = -1
        for i in range(NCOUNTERS):
            self.s.counters[i] = 0
        _fill_tables()

    def load(self, owner, hands, alive, used, int to_move, int rnd, int turn, int phase, battle=None,
             counters=None):
        """Set the position (fields of ``TriState``: ``owner`` a seat or -1 per triangle, ``hands``
        counts per card value, ``used`` a flag per square; ``battle`` None or the tuple
        ``(attacker, defender, target, dice, step, attacker_roll, defender_roll, attacker_card,
        defender_card)`` with None for what is not decided; ``counters`` the 12 counts)."""
        cdef int i, j, o
        if len(owner) != self.g.T or len(used) != self.g.S:
            raise ValueError("owner and used must have one entry per triangle and per square")
        if len(hands) != self.g.players or len(alive) != self.g.players:
            raise ValueError("hands and alive must have one entry per seat")
        for i in range(MAXP):
            self.s.units[i] = 0
        for i in range(self.g.T):
            o = owner[i]
            if not -1 <= o < self.g.players:
                raise ValueError(f"owner[{i}] = {o} is not a seat")
            self.s.owner[i] = o
            if o >= 0:
                self.s.units[o] += 1
        self.s.empty = self.g.T - sum([self.s.units[i] for i in range(self.g.players)])
        for i in range(self.g.S):
            self.s.used[i] = 1 if used[i] else 0
        self.s.n_alive = 0
        for i in range(self.g.players):
            self.s.alive[i] = 1 if alive[i] else 0
            self.s.n_alive += self.s.alive[i]
            for j in range(4):
                self.s.hands[i][j] = hands[i][j]
        # the position comes from a Python state (checked there); guard the C arrays all the same
        if not 0 <= to_move < self.g.players or not PLACE <= phase <= OVER or rnd < 1 or turn < 0:
            raise ValueError("to_move, phase, round or turn out of range")
        for i in range(self.g.players):
            for j in range(4):
                if self.s.hands[i][j] < 0:
                    raise ValueError("a hand holds a negative count")
        self.s.to_move = to_move
        self.s.round = rnd
        self.s.turn = turn
        self.s.phase = phase
        if battle is None:
            self.s.b_att = self.s.b_def = self.s.b_target = self.s.b_dice = self.s.b_step = 0
            self.s.b_aroll = self.s.b_droll = 0
            self.s.b_acard = self.s.b_dcard = -1
        else:
            att, dfn, target, dice, step, aroll, droll, acard, dcard = battle
            if not (0 <= att < self.g.players and 0 <= dfn < self.g.players and 0 <= target < self.g.T
                    and 1 <= dice <= 3 and A_ROLL <= step <= VOIDSTEP
                    and all(x is None or 1 <= x <= 6 for x in (aroll, droll))
                    and all(x is None or x in (0, 2, 3, 4) for x in (acard, dcard))
                    and all((x is not None) == (step > k) for k, x in enumerate((aroll, droll, acard, dcard)))):
                raise ValueError(f"not a TRI battle: {battle!r}")
            self.s.b_att = att
            self.s.b_def = dfn
            self.s.b_target = target
            self.s.b_dice = dice
            self.s.b_step = step
            self.s.b_aroll = 0 if aroll is None else aroll
            self.s.b_droll = 0 if droll is None else droll
            self.s.b_acard = -1 if acard is None else acard
            self.s.b_dcard = -1 if dcard is None else dcard
        if counters is not None:
            for i in range(NCOUNTERS):
                self.s.counters[i] = counters[i]
        else:
            for i in range(NCOUNTERS):
                self.s.counters[i] = 0

    def fields(self):
        """``(owner, hands, alive, used, to_move, round, turn, phase, battle, counters)`` as
        :meth:`load` takes them (``battle`` None outside the battle phase)."""
        cdef int i, j
        battle = None
        if self.s.phase == BATTLE:
            battle = (self.s.b_att, self.s.b_def, self.s.b_target, self.s.b_dice, self.s.b_step,
                      None if self.s.b_aroll == 0 else self.s.b_aroll,
                      None if self.s.b_droll == 0 else self.s.b_droll,
                      None if self.s.b_acard < 0 else self.s.b_acard,
                      None if self.s.b_dcard < 0 else self.s.b_dcard)
        return ([self.s.owner[i] for i in range(self.g.T)],
                [[self.s.hands[i][j] for j in range(4)] for i in range(self.g.players)],
                [bool(self.s.alive[i]) for i in range(self.g.players)],
                [bool(self.s.used[i]) for i in range(self.g.S)],
                self.s.to_move, self.s.round, self.s.turn, self.s.phase, battle,
                [self.s.counters[i] for i in range(NCOUNTERS)])

    def chance_outcomes(self):
        """TriState.chance_outcomes: ``[(outcome, probability)]`` (the same floats)."""
        cdef int tied[MAXP]
        cdef int k, v
        if self.s.phase == BATTLE:
            if self.s.b_step == A_ROLL:
                return list(_DICE[self.s.b_dice])
            if self.s.b_step == D_ROLL:
                return list(_DICE[1])
            return []
        if self.s.phase == INCOME:
            return list(_INCOME_OUTCOMES)
        if self.s.phase == TIEBREAK:
            k = _weakest(&self.g, &self.s, tied)
            p = 1.0 / k
            return [(OUT0 + tied[v], p) for v in range(k)]
        return []

    def scores(self):
        """heuristic.scores of this position (per seat)."""
        cdef double out[MAXP]
        _scores(&self.g, &self.s, out)
        cdef int p
        return [out[p] for p in range(self.g.players)]

    def search_root(self, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True,
                    root_only=None, bint policy=False, bint card_model=False, int prune=0):
        """:meth:`search`'s statistics at the root: ``[(action, visits, sum of the returns of the
        seat to move)]`` for every action the search tried, in no particular order (the same
        search, seed for seed: its most visited action is :meth:`search`'s answer). ``root_only``
        (legal actions) limits the root to those (pruning); ``policy`` rolls out with the light
        policy (``heuristic.rollout`` in C) instead of uniformly random actions; ``card_model`` makes every
        card choice below the root play the card model's card (:func:`_model_card`: no choice in the tree
        reads a battle secret; a root at a card choice then needs ``root_only``); ``prune`` > 0 keeps at every
        decision node below the root (outside battles) its ``prune`` best actions by the cheap ranking
        (``heuristic.candidates``, as ``mcts``'s ``prune``; at most 32). A search over several
        worlds of a hidden position adds these up per action (``compiled.search``)."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the search needs a position where a player is to move")
        if iterations < 0 or cap < 0 or c < 0:
            raise ValueError("iterations, cap and c must not be negative")
        cdef long long stats[3]
        cdef int action, count = 0, i, n_only = 0
        cdef int* only = NULL
        if root_only is not None:
            legal = set(self.legal_actions())
            if not root_only or len(root_only) > MAX_ACTIONS or not all(a in legal for a in root_only):
                raise ValueError("root_only must list legal actions")
            n_only = len(root_only)
            only = <int*>malloc(n_only * sizeof(int))
            if only == NULL:
                raise MemoryError("the compiled search ran out of memory")
            for i in range(n_only):
                only[i] = root_only[i]
        cdef _ValueFn fn = NULL
        cdef int* actions = <int*>malloc(MAX_ACTIONS * sizeof(int))
        cdef long long* visits = <long long*>malloc(MAX_ACTIONS * sizeof(long long))
        cdef double* sums = <double*>malloc(MAX_ACTIONS * sizeof(double))
        if actions == NULL or visits == NULL or sums == NULL:
            free(only)
            free(actions)
            free(visits)
            free(sums)
            raise MemoryError("the compiled search ran out of memory")
        cdef _PolicyFn rollout = NULL
        if evaluate:
            fn = _value
        if policy:
            rollout = _policy
        cdef Gm gm = self.g                             # the search's copy of the game
        gm.cards_by_model = card_model
        if prune < 0:
            raise ValueError("prune must not be negative")
        gm.prune_k = prune
        with nogil:
            action = _search_root(&gm, &self.s, self.g.players, iterations, c, cap, seed, fn, stats,
                                  rollout, only, n_only, actions, visits, sums, &count)
        out = [(actions[i], visits[i], sums[i]) for i in range(count)]
        free(only)
        free(actions)
        free(visits)
        free(sums)
        if action == _MCTS_NO_MEMORY:
            raise MemoryError("the compiled search ran out of memory")
        self.last_stats = (stats[0], stats[1], stats[2])
        return out

    def ismcts(self, worlds, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True,
               bint policy=True, bint card_model=False, int prune=0, bint ordered=True):
        """The information-set MCTS (``_ismcts.pxi``) for the seat to move, over its ``worlds``:
        ``[(attacker_roll, defender_roll, attacker_card, weight)]`` (None for what is not decided), the
        battle secrets of ``TriState.worlds(seat)``; this position's own secrets are never read. The
        action played; ``evaluate``, ``policy``, ``card_model`` and ``prune`` as :meth:`search_root`;
        ``ordered`` expands each node's untried actions best first (else at random); ``last_stats`` as
        :meth:`search`."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the search needs a position where a player is to move")
        if iterations < 0 or cap < 0 or c < 0 or prune < 0:
            raise ValueError("iterations, cap, c and prune must not be negative")
        cdef int n = len(worlds), i
        if not 1 <= n <= 4096:
            raise ValueError("ismcts needs 1 to 4096 worlds")
        cdef int* secrets = <int*>malloc(3 * n * sizeof(int))
        cdef double* weights = <double*>malloc(n * sizeof(double))
        if secrets == NULL or weights == NULL:
            free(secrets)
            free(weights)
            raise MemoryError("the compiled search ran out of memory")
        try:
            for i, (aroll, droll, acard, weight) in enumerate(worlds):
                if not (all(x is None or 1 <= x <= 6 for x in (aroll, droll)) and acard in (None, 0, 2, 3, 4)
                        and weight >= 0):
                    raise ValueError(f"not a world of this battle: {(aroll, droll, acard, weight)!r}")
                secrets[3 * i] = 0 if aroll is None else aroll
                secrets[3 * i + 1] = 0 if droll is None else droll
                secrets[3 * i + 2] = -1 if acard is None else acard
                weights[i] = weight
        except BaseException:
            free(secrets)
            free(weights)
            raise
        cdef long long stats[3]
        cdef int action
        cdef _ValueFn fn = NULL
        cdef _PolicyFn rollout = NULL
        if evaluate:
            fn = _value
        if policy:
            rollout = _policy
        cdef Gm gm = self.g
        gm.cards_by_model = card_model
        gm.prune_k = prune
        with nogil:
            action = _ismcts(&gm, &self.s, secrets, weights, n, iterations, c, cap, seed, fn, rollout, stats, ordered)
        free(secrets)
        free(weights)
        if action == _MCTS_NO_MEMORY:
            raise MemoryError("the compiled search ran out of memory")
        self.last_stats = (stats[0], stats[1], stats[2])
        return action

    def best_quick(self):
        """``heuristic.best_quick`` of this decision position (the light policy's usual choice)."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("best_quick needs a position where a player is to move")
        cdef int n = _legal(&self.g, &self.s, _pbuf)
        return _best_quick(&self.g, &self.s, _player(&self.g, &self.s), _pbuf, n)

    def candidates(self, int k):
        """The ``k`` best actions here by the cheap ranking, best first (:func:`_prune`: the search's
        pruning, ``heuristic.candidates``); every legal action when there are at most ``k`` or in a
        battle."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("candidates needs a position where a player is to move")
        if not 1 <= k <= _PRUNE_MAX:
            raise ValueError(f"k must be from 1 to {_PRUNE_MAX}")
        cdef Gm gm = self.g
        gm.prune_k = k
        cdef int n = _legal(&gm, &self.s, _buf)
        return [_buf[i] for i in range(n)]

    def model_card(self):
        """The card action the search's tree plays at this card choice with ``card_model``
        (:func:`_model_card`), or -1 when the card model's card is not in hand (the tree then
        branches over the cards in hand). ValueError away from a card choice."""
        if self.s.phase != BATTLE or self.s.b_step not in (A_CARD, D_CARD):
            raise ValueError("model_card needs a card choice")
        return _model_card(&self.g, &self.s)

    def policy_action(self, unsigned long long seed):
        """The action the light rollout policy plays here with this seed (tests)."""
        cdef uint64_t rng = seed
        if self.s.phase == OVER:
            raise ValueError("the game is over")
        return _policy(&self.g, &self.s, &rng)

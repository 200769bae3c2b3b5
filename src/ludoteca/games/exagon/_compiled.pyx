# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""EXAGON compiled (Cython): the same rules as ``ludoteca.games.exagon`` on C arrays, and a random
playout loop in C. Built by ``setup.py`` (optional); used through ``ludoteca.games.exagon.compiled``.

The Python engine (``__init__.py``) is the readable reference: every function here mirrors one
there (``_deal``, ``_start_opening``, ``_put``, ``_place``, ``_give``, ``_end_turn``, ``_leaders``,
``_finish``, ``_new_deal``, ``_legal_actions``, ``returns``) and ``tests/test_compiled_exagon.py``
proves them equal. Phases, action ids and the cell numbering are the Python engine's.

The Python engine keeps, per open cell, the list of (tile, rotation) that fit there; here the same
thing is a bit set over ``tile * 6 + rotation`` per open cell (``fit``), narrowed by one mask per
neighbour as tiles are placed (``facemask``: a number on the neighbour's side, ``jollymask``: its
Jolly side), and a hand is a bit set too: the placements of a player are ``fit & hand``.

``_value`` mirrors ``heuristic.value`` (with ``_greedy`` = ``greedy_action``, ``_play_turn``,
``_immediate_win``): the evaluation of a rollout cut short by the compiled search
(``core/_mcts.pxi``, included after the rules and offered as ``CState.search``). The heuristic
walks the open cells in the order of the Python dict ``cand``; here every open cell keeps its
place in that order (``fseq``: the table index of the tile that opened it, times 6, plus the
direction from that tile), so ties are broken the same way.
"""

from libc.stdint cimport uint64_t, uint8_t, int8_t, int16_t
from libc.string cimport memset
from libc.stdlib cimport qsort
from libc.math cimport exp

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil

cdef enum:
    MAXT = 40           # most tiles (the default set and the seed's: 40)
    MAXP = 5            # most players
    WORDS = 4           # 64-bit words of a (tile, rotation) bit set: ceil(6 * MAXT / 64)
    MAXCELLS = 6241     # (2 * MAXT - 1) ** 2: the Python engine's table window for MAXT tiles
    MAXF = 162          # open cells next to a connected table of at most MAXT tiles: 4 * MAXT + 2
    FREE = 41           # board codes: 0 empty, 1..MAXT tile + 1, FREE + i the open cell in slot i
    PLAYOUT_CAP = 1000000  # actions of one random playout at most (a default tournament takes ~1,000;
                           # tournament_games bounds it, this guards against a huge tournament_games)
    MAX_ACTIONS = 10240  # legal actions: placements <= max_m (MAXT - m) * 6 * (4m + 2) = 9840, + gives + stop
    NCOUNTERS = 11
    P_DEAL = 0
    P_OPENING = 1
    P_TURN = 2
    P_OVER = 3
    IN_TABLE = -1
    ASIDE = -2
    UNDEALT = -3
    JOLLY = 10
    EXAGON = 11
    CUR_CHANCE = -1
    CUR_TERMINAL = -4
    # end reasons = the first four counters (COUNTERS' order)
    END_LAST_TILE = 0
    END_PERFECT_FIT = 1
    END_BLOCKED = 2
    END_TURN_LIMIT = 3
    C_PERFECT_FITS = 4
    C_BONUSES_EARNED = 5
    C_BONUSES_SPENT = 6
    C_TILES_GIVEN = 7
    C_PLACEMENTS = 8
    C_PASSES = 9
    C_TIMEOUTS = 10

MAX_TILES = MAXT
MAX_PLAYERS = MAXP
MAX_ACTION_COUNT = MAX_ACTIONS
MAX_PLAYOUT_ACTIONS = PLAYOUT_CAP

cdef int DQ[6]
cdef int DR[6]
DQ[:] = [1, 1, 0, -1, -1, 0]
DR[:] = [0, -1, -1, 0, 1, 1]


cdef struct Gm:
    int n_tiles
    int players
    int width          # W = 2R + 1
    int n_cells        # W * W
    int origin
    int place0
    int give0
    int stop_action
    int pass_action
    int timeout_action
    int per_seat                      # option hand (RULES.md: N // players)
    int leftover
    int bonus_for[7]                  # bonus tiles by connections (options bonus_3 .. bonus_5: 1, 2, 3)
    int go_on                         # connections for the turn to go on (option go_on: 2)
    int target                        # tournament points that end it (option tournament_target: 50)
    int win_points                    # tournament points of a game's winner (option win_points: 20)
    int turn_limit
    int tournament
    int tournament_games              # the most one-shot games of a tournament
    int has_clock
    int lenient                       # matching="lenient": one matching side suffices
    int has_cap                       # carry_cap is a number (else no cap)
    double carry_cap
    int words
    int prune                         # the search's view: top candidates per node (0: every action)
    int greedy                        # the search's view: rollouts follow the greedy choice
    double hourglass
    int star[MAXT]
    int penalty[MAXT]
    double diff[MAXT]                 # heuristic.difficulties: how hard each tile is to place later
    int8_t faces[MAXT][6][6]          # faces[t][k][d]: tile t, rotation k, the side facing d
    uint64_t tilemask[MAXT][WORDS]   # the six bits of tile t
    uint64_t facemask[6][10][WORDS]  # (t, k) whose side facing d matches a number v there
    uint64_t jollymask[6][MAXT][WORDS]  # (t, k) whose side facing d matches the Jolly side of t2
    uint64_t zero[WORDS]


cdef struct St:
    uint8_t board[MAXCELLS]
    int16_t fcell[MAXF]               # the open cells (any order)
    int16_t fseq[MAXF]                # each one's place in the Python engine's ``cand`` order
    uint64_t fit[MAXF][WORDS]         # what fits each open cell, tiles in any hand or not
    uint64_t hmask[MAXP][WORDS]       # the tiles of each hand, six bits each
    int8_t owner[MAXT]                # a seat, IN_TABLE, ASIDE or UNDEALT
    int8_t hand[MAXP][MAXT]           # each hand in the Python list's order
    int8_t hlen[MAXP]
    int8_t table[MAXT]                # tiles in the order placed
    int16_t tcell[MAXT]
    int8_t trot[MAXT]
    int8_t aside[MAXT]
    int8_t winners[MAXP]
    int ntable
    int naside
    int nfront
    int nwin                          # 0: result None
    int end
    int phase
    int dealt
    int to_move
    int turn
    int placed
    int bonus
    int passes
    int has_time                      # time_left and carry are numbers (else None)
    double time_left
    double carry
    int points[MAXP]
    int games                         # one-shot games of the tournament finished
    int cnt[NCOUNTERS]


from ludoteca.core._rng cimport _next, _below


# --- the table (mirror of ExagonState._put / _cell_cands) ----------------------------------------

cdef inline const uint64_t* _mask(const Gm* g, int d, int v, int t2) noexcept nogil:
    """What fits a cell whose neighbour in direction ``d`` shows side ``v`` of tile ``t2``."""
    if v <= 9:
        return g.facemask[d][v]
    if v == JOLLY:
        return g.jollymask[d][t2]
    return g.zero


cdef inline void _front_remove(St* s, int i) noexcept nogil:
    cdef int last = s.nfront - 1
    cdef int w
    if i != last:
        s.fcell[i] = s.fcell[last]
        s.fseq[i] = s.fseq[last]
        for w in range(WORDS):
            s.fit[i][w] = s.fit[last][w]
        s.board[s.fcell[i]] = FREE + i
    s.nfront = last


cdef inline int _links(const Gm* g, const St* s, int c, int idx) noexcept nogil:
    """The connections of (tile, rotation) ``idx`` (``t * 6 + k``) on cell ``c``: under lenient
    matching its sides that match a neighbour (ExagonGame.connections), else the tiles next to it."""
    cdef int W = g.width
    cdef int qi = c // W
    cdef int ri = c - qi * W
    cdef int d, nq, nr, code, t2, k = 0
    cdef const uint64_t* m
    for d in range(6):
        nq = qi + DQ[d]
        nr = ri + DR[d]
        if nq < 0 or nq >= W or nr < 0 or nr >= W:
            continue
        code = s.board[c + DQ[d] * W + DR[d]]
        if 0 < code < FREE:
            if g.lenient:
                t2 = code - 1
                m = _mask(g, d, g.faces[t2][s.trot[t2]][(d + 3) % 6], t2)
                if (m[idx >> 6] >> (idx & 63)) & 1:
                    k += 1
            else:
                k += 1
    return k


cdef int _put(const Gm* g, St* s, int t, int c, int k) noexcept nogil:
    """Put tile ``t`` on cell ``c``; update the open cells; return its connections."""
    cdef int W = g.width
    cdef int qi = c // W
    cdef int ri = c - qi * W
    cdef int d, nq, nr, nc, code, i, w, conn = 0
    cdef const uint64_t* m
    s.owner[t] = IN_TABLE
    code = s.board[c]
    if code >= FREE:
        _front_remove(s, code - FREE)
    s.board[c] = t + 1
    s.table[s.ntable] = t
    s.ntable += 1
    s.tcell[t] = c
    s.trot[t] = k
    for d in range(6):
        nq = qi + DQ[d]
        nr = ri + DR[d]
        if nq < 0 or nq >= W or nr < 0 or nr >= W:
            continue
        nc = c + DQ[d] * W + DR[d]
        code = s.board[nc]
        if code == 0:
            i = s.nfront
            s.nfront += 1
            s.fcell[i] = nc
            s.fseq[i] = (s.ntable - 1) * 6 + d
            s.board[nc] = FREE + i
            m = _mask(g, (d + 3) % 6, g.faces[t][k][d], t)
            for w in range(WORDS):
                s.fit[i][w] = m[w]
        elif code >= FREE:
            i = code - FREE
            m = _mask(g, (d + 3) % 6, g.faces[t][k][d], t)
            if g.lenient:  # one matching side suffices: what fits any neighbour
                for w in range(WORDS):
                    s.fit[i][w] |= m[w]
            else:
                for w in range(WORDS):
                    s.fit[i][w] &= m[w]
        elif not g.lenient:
            conn += 1
    if g.lenient:
        return _links(g, s, c, t * 6 + k)
    return conn


cdef void _rebuild_front(const Gm* g, St* s) noexcept nogil:
    """The open cells of a table set tile by tile (a position read): every empty in-window
    neighbour of a tile, with what fits it against all its neighbours."""
    cdef int W = g.width
    cdef int j, t, c, qi, ri, d, nq, nr, nc, i, w, d2, q2, r2, c2, code
    cdef const uint64_t* m
    s.nfront = 0
    for j in range(s.ntable):
        t = s.table[j]
        c = s.tcell[t]
        qi = c // W
        ri = c - qi * W
        for d in range(6):
            nq = qi + DQ[d]
            nr = ri + DR[d]
            if nq < 0 or nq >= W or nr < 0 or nr >= W:
                continue
            nc = nq * W + nr
            if s.board[nc] != 0:
                continue
            i = s.nfront
            s.nfront += 1
            s.fcell[i] = nc
            s.fseq[i] = j * 6 + d
            s.board[nc] = FREE + i
            for w in range(WORDS):
                s.fit[i][w] = 0 if g.lenient else ~(<uint64_t>0)
            for d2 in range(6):
                q2 = nq + DQ[d2]
                r2 = nr + DR[d2]
                if q2 < 0 or q2 >= W or r2 < 0 or r2 >= W:
                    continue
                c2 = q2 * W + r2
                code = s.board[c2]
                if 0 < code < FREE:
                    m = _mask(g, d2, g.faces[code - 1][s.trot[code - 1]][(d2 + 3) % 6], code - 1)
                    if g.lenient:
                        for w in range(WORDS):
                            s.fit[i][w] |= m[w]
                    else:
                        for w in range(WORDS):
                            s.fit[i][w] &= m[w]


cdef inline void _hand_add(const Gm* g, St* s, int p, int t) noexcept nogil:
    cdef int w
    s.hand[p][s.hlen[p]] = t
    s.hlen[p] += 1
    s.owner[t] = p
    for w in range(WORDS):
        s.hmask[p][w] |= g.tilemask[t][w]


cdef inline void _hand_remove(const Gm* g, St* s, int p, int t) noexcept nogil:
    cdef int i, w, n = s.hlen[p]
    cdef int j = 0
    for i in range(n):
        if s.hand[p][i] != t:
            s.hand[p][j] = s.hand[p][i]
            j += 1
    s.hlen[p] = j
    for w in range(WORDS):
        s.hmask[p][w] &= ~g.tilemask[t][w]


# --- the rules (mirror of ExagonState) ---------------------------------------------------------

cdef void _new_deal(const Gm* g, St* s) noexcept nogil:
    cdef int i, w
    s.phase = P_DEAL
    for i in range(MAXT):
        s.owner[i] = UNDEALT
    for i in range(MAXP):
        s.hlen[i] = 0
        for w in range(WORDS):
            s.hmask[i][w] = 0
    memset(s.board, 0, g.n_cells)
    s.ntable = 0
    s.naside = 0
    s.nfront = 0
    s.dealt = 0
    s.to_move = 0
    s.turn = 0
    s.placed = 0
    s.bonus = 0
    s.passes = 0
    s.has_time = 0
    s.time_left = 0.0
    s.carry = 0.0


cdef inline int _hand_penalty(const Gm* g, const St* s, int seat) noexcept nogil:
    cdef int i, total = 0
    for i in range(s.hlen[seat]):
        total += g.penalty[s.hand[seat][i]]
    return total


cdef int _leaders(const Gm* g, const St* s, int* out) noexcept nogil:
    """The blocked-game order: fewest tiles, then lower tournament penalty; ties share."""
    cdef int seat, pen, k = 0
    cdef int best_len = 1 << 30
    cdef int best_pen = 1 << 30
    for seat in range(g.players):
        pen = _hand_penalty(g, s, seat)
        if s.hlen[seat] < best_len or (s.hlen[seat] == best_len and pen < best_pen):
            best_len = s.hlen[seat]
            best_pen = pen
    for seat in range(g.players):
        if s.hlen[seat] == best_len and _hand_penalty(g, s, seat) == best_pen:
            out[k] = seat
            k += 1
    return k


cdef void _finish(const Gm* g, St* s, const int* winners, int nw, int reason) noexcept nogil:
    cdef int i, seat, won, best
    cdef int champions[MAXP]
    cdef int nc = 0
    s.cnt[reason] += 1
    s.placed = 0
    s.bonus = 0
    if not g.tournament:
        s.phase = P_OVER
        for i in range(nw):
            s.winners[i] = winners[i]
        s.nwin = nw
        s.end = reason
        return
    for seat in range(g.players):
        won = 0
        for i in range(nw):
            if winners[i] == seat:
                won = 1
        if won:
            s.points[seat] += g.win_points
        else:
            s.points[seat] -= _hand_penalty(g, s, seat)
    s.games += 1
    best = s.points[0]
    for seat in range(1, g.players):
        if s.points[seat] > best:
            best = s.points[seat]
    # someone at 50, or the last game allowed: the highest score wins, equal highest share
    if best >= g.target or s.games >= g.tournament_games:
        for seat in range(g.players):
            if s.points[seat] == best:
                champions[nc] = seat
                nc += 1
    if nc:
        s.phase = P_OVER
        for i in range(nc):
            s.winners[i] = champions[i]
        s.nwin = nc
        s.end = reason
    else:
        _new_deal(g, s)


cdef inline void _finish_one(const Gm* g, St* s, int p, int reason) noexcept nogil:
    cdef int w[1]
    w[0] = p
    _finish(g, s, w, 1, reason)


cdef void _end_turn(const Gm* g, St* s, int timeout) noexcept nogil:
    cdef int lead[MAXP]
    cdef int nl
    cdef double carry
    s.turn += 1
    if s.passes >= g.players:
        nl = _leaders(g, s, lead)
        _finish(g, s, lead, nl, END_BLOCKED)
        return
    if s.turn >= g.turn_limit:
        nl = _leaders(g, s, lead)
        _finish(g, s, lead, nl, END_TURN_LIMIT)
        return
    carry = 0.0
    if s.phase == P_TURN and not timeout and s.has_time:
        carry = s.time_left
        if g.has_cap and carry > g.carry_cap:
            carry = g.carry_cap
    if s.phase == P_OPENING and s.ntable >= 2:
        s.phase = P_TURN
    s.to_move = (s.to_move + 1) % g.players
    s.placed = 0
    s.bonus = 0
    if g.has_clock and s.phase == P_TURN:
        s.carry = carry
        s.time_left = g.hourglass + carry
        s.has_time = 1


cdef void _start_opening(const Gm* g, St* s) noexcept nogil:
    cdef int seat, i, best = -1
    s.phase = P_OPENING
    s.placed = 0
    s.bonus = 0
    s.passes = 0
    for seat in range(g.players):
        for i in range(s.hlen[seat]):
            if g.star[s.hand[seat][i]] == 39:
                s.to_move = seat
                return
    if s.ntable and g.star[s.table[0]] == 39:
        s.to_move = 0
        return
    for seat in range(g.players):
        for i in range(s.hlen[seat]):
            if g.star[s.hand[seat][i]] > best:
                best = g.star[s.hand[seat][i]]
    for seat in range(g.players):
        for i in range(s.hlen[seat]):
            if g.star[s.hand[seat][i]] == best:
                s.to_move = seat
                return


cdef void _deal(const Gm* g, St* s, int t) noexcept nogil:
    cdef int n = g.players
    cdef int full = n * g.per_seat
    cdef int i, left = 0
    if s.dealt < full:
        _hand_add(g, s, s.dealt % n, t)
        s.dealt += 1
        if s.dealt < full:
            s.to_move = s.dealt % n
            return
        for i in range(g.n_tiles):
            if s.owner[i] == UNDEALT:
                left += 1
        if left == 1:
            s.to_move = 0  # the table-tile node
            return
        for i in range(g.n_tiles):
            if s.owner[i] == UNDEALT:
                s.owner[i] = ASIDE
                s.aside[s.naside] = i
                s.naside += 1
    else:  # the table tile
        s.dealt += 1
        _put(g, s, t, g.origin, 0)
    _start_opening(g, s)


cdef void _place(const Gm* g, St* s, int action) noexcept nogil:
    cdef int stride = g.n_cells * 6
    cdef int rest = action - g.place0
    cdef int t = rest // stride
    rest -= t * stride
    cdef int c = rest // 6
    cdef int k = rest - c * 6
    cdef int p = s.to_move
    _hand_remove(g, s, p, t)
    cdef int conn = _put(g, s, t, c, k)
    s.cnt[C_PLACEMENTS] += 1
    s.passes = 0
    if conn == 6:
        s.cnt[C_PERFECT_FITS] += 1
    if s.hlen[p] == 0 or conn == 6:
        s.turn += 1  # the winning turn is completed too
        _finish_one(g, s, p, END_PERFECT_FIT if conn == 6 else END_LAST_TILE)
        return
    if s.phase == P_OPENING:
        _end_turn(g, s, 0)
        return
    s.placed += 1
    if g.bonus_for[conn]:
        s.bonus += g.bonus_for[conn]
        s.cnt[C_BONUSES_EARNED] += g.bonus_for[conn]
    if conn < g.go_on:
        if s.bonus:
            s.bonus -= 1
            s.cnt[C_BONUSES_SPENT] += 1
        else:
            _end_turn(g, s, 0)


cdef void _give(const Gm* g, St* s, int action) noexcept nogil:
    cdef int rest = action - g.give0
    cdef int t = rest // g.players
    cdef int seat = rest - t * g.players
    cdef int p = s.to_move
    _hand_remove(g, s, p, t)
    _hand_add(g, s, seat, t)
    s.bonus -= 1
    s.cnt[C_BONUSES_SPENT] += 1
    s.cnt[C_TILES_GIVEN] += 1
    if s.hlen[p] == 0:
        s.turn += 1
        _finish_one(g, s, p, END_LAST_TILE)


cdef void _apply(const Gm* g, St* s, int action) noexcept nogil:
    """ExagonState._apply: ``action`` must be legal (or the accepted timeout)."""
    if s.phase == P_DEAL:
        _deal(g, s, action)
    elif action < g.give0:
        _place(g, s, action)
    elif action < g.stop_action:
        _give(g, s, action)
    elif action == g.stop_action:
        _end_turn(g, s, 0)
    elif action == g.pass_action:
        s.cnt[C_PASSES] += 1
        s.passes += 1
        _end_turn(g, s, 0)
    else:  # the timeout
        s.cnt[C_TIMEOUTS] += 1
        if not s.placed:
            s.passes += 1
        _end_turn(g, s, 1)


cdef int _player(const Gm* g, const St* s) noexcept nogil:
    if s.phase == P_DEAL:
        return CUR_CHANCE
    if s.phase == P_OVER:
        return CUR_TERMINAL
    return s.to_move


cdef int _cmp_action(const void* a, const void* b) noexcept nogil:
    cdef int x = (<const int*>a)[0]
    cdef int y = (<const int*>b)[0]
    return (x > y) - (x < y)


cdef int _legal(const Gm* g, const St* s, int* out) noexcept nogil:
    """ExagonState._legal_actions into ``out`` (room for MAX_ACTIONS ids); returns the count.
    At a chance node: the outcomes (the undealt tiles). In the search's view (``g.prune``) a
    decision node offers only the heuristic's best candidates (``heuristic.candidates``)."""
    cdef int k = _legal_all(g, s, out)
    if g.prune and s.phase != P_DEAL and k:
        return _prune(g, s, out, k)
    return k


cdef int _legal_all(const Gm* g, const St* s, int* out) noexcept nogil:
    """Every legal action (the rules' list)."""
    cdef int k = 0, t, r, i, w, idx, seat, base, stride, p
    cdef uint64_t bits
    cdef int to[MAXP]
    cdef int nto = 0
    if s.phase == P_DEAL:
        for t in range(g.n_tiles):
            if s.owner[t] == UNDEALT:
                out[k] = t
                k += 1
        return k
    if s.phase == P_OVER:
        return 0
    p = s.to_move
    stride = g.n_cells * 6
    if s.ntable == 0:  # the opening tile: any tile of the hand at [0, 0], any rotation
        base = g.place0 + g.origin * 6
        for t in range(g.n_tiles):
            if s.owner[t] == p:
                for r in range(6):
                    out[k] = t * stride + base + r
                    k += 1
        return k
    for i in range(s.nfront):
        base = g.place0 + s.fcell[i] * 6
        for w in range(WORDS):
            bits = s.fit[i][w] & s.hmask[p][w]
            while bits:
                idx = w * 64 + __builtin_ctzll(bits)
                bits &= bits - 1
                t = idx // 6
                out[k] = t * stride + base + (idx - t * 6)
                k += 1
    if k > 1:
        qsort(out, k, sizeof(int), _cmp_action)
    if s.phase == P_TURN and s.placed:
        if s.bonus:
            for seat in range(g.players):
                if seat != p and s.hlen[seat] == 1:
                    to[nto] = seat
                    nto += 1
            if nto:
                for t in range(g.n_tiles):
                    if s.owner[t] == p:
                        for i in range(nto):
                            out[k] = g.give0 + t * g.players + to[i]
                            k += 1
        out[k] = g.stop_action
        k += 1
    elif k == 0:
        out[k] = g.pass_action
        k += 1
    return k


cdef int _chance(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A tile dealt: uniform over the undealt tiles (the engine's probabilities)."""
    cdef int t, u = 0
    for t in range(g.n_tiles):
        if s.owner[t] == UNDEALT:
            u += 1
    u = _below(rng, u)
    for t in range(g.n_tiles):
        if s.owner[t] == UNDEALT:
            if u == 0:
                return t
            u -= 1
    return -1


cdef int _random_action(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A uniformly random legal action (a chance outcome at the deal), without listing the
    actions: the same distribution as ``legal[randrange(len(legal))]``."""
    cdef int p, i, w, m, r, t, idx, nto, gives, total, b
    cdef int counts[MAXF]
    cdef int to[MAXP]
    cdef uint64_t bits
    if s.phase == P_DEAL:
        return _chance(g, s, rng)
    if g.greedy:  # the search's view with heuristic rollouts (heuristic.rollout)
        return _greedy(g, s, s.to_move)
    p = s.to_move
    if s.ntable == 0:
        r = _below(rng, s.hlen[p] * 6)
        t = s.hand[p][r // 6]
        return g.place0 + (t * g.n_cells + g.origin) * 6 + r % 6
    m = 0
    for i in range(s.nfront):
        b = 0
        for w in range(WORDS):
            bits = s.fit[i][w] & s.hmask[p][w]
            if bits:
                b += __builtin_popcountll(bits)
        counts[i] = b
        m += b
    gives = 0
    nto = 0
    if s.phase == P_TURN and s.placed:
        if s.bonus:
            for i in range(g.players):
                if i != p and s.hlen[i] == 1:
                    to[nto] = i
                    nto += 1
            gives = s.hlen[p] * nto
        total = m + gives + 1
    else:
        if m == 0:
            return g.pass_action
        total = m
    r = _below(rng, total)
    if r < m:
        for i in range(s.nfront):
            if r < counts[i]:
                for w in range(WORDS):
                    bits = s.fit[i][w] & s.hmask[p][w]
                    while bits:
                        if r == 0:
                            idx = w * 64 + __builtin_ctzll(bits)
                            t = idx // 6
                            return g.place0 + (t * g.n_cells + s.fcell[i]) * 6 + (idx - t * 6)
                        r -= 1
                        bits &= bits - 1
            r -= counts[i]
        return -1  # unreachable
    r -= m
    if r < gives:
        return g.give0 + s.hand[p][r // nto] * g.players + to[r % nto]
    return g.stop_action


cdef void _returns(const Gm* g, const St* s, double* out) noexcept nogil:
    cdef int seat, i
    cdef double share
    for seat in range(g.players):
        out[seat] = 0.0
    if s.phase != P_OVER or s.nwin == 0:
        return
    share = 1.0 / s.nwin
    for i in range(s.nwin):
        out[s.winners[i]] = share


cdef inline int _playout(const Gm* g, St* s, uint64_t* rng) noexcept nogil:
    """Play ``s`` to the end at random, or stop after PLAYOUT_CAP actions (a tournament allowed
    so many games that no one reaching 50 points makes it last longer: its returns stay 0);
    returns the number of actions."""
    cdef int count = 0
    while s.phase != P_OVER and count < PLAYOUT_CAP:
        _apply(g, s, _random_action(g, s, rng))
        count += 1
    return count


# --- the heuristic's evaluation (mirror of heuristic.py) ------------------------------------------

cdef double VALUE_K = 0.6   # heuristic.VALUE_K: winning odds per tile of difference
VALUE_SHARPNESS = VALUE_K
cdef enum:
    GREEDY_TURN_LIMIT = 40  # heuristic.play_turn's ``limit``
    MAX_PRUNE = 64          # the most candidates a pruned search keeps per node

cdef double WIN_KEY = 1000.0  # heuristic.WIN


cdef inline int _conn(const Gm* g, const St* s, int c) noexcept nogil:
    """heuristic.conn: the tiles next to cell ``c``."""
    cdef int W = g.width
    cdef int qi = c // W
    cdef int ri = c - qi * W
    cdef int d, nq, nr, code, k = 0
    for d in range(6):
        nq = qi + DQ[d]
        nr = ri + DR[d]
        if nq < 0 or nq >= W or nr < 0 or nr >= W:
            continue
        code = s.board[c + DQ[d] * W + DR[d]]
        if 0 < code < FREE:
            k += 1
    return k


cdef inline int _hardest(const Gm* g, const St* s, int p) noexcept nogil:
    """``max(hand, key=lambda t: (diff[t], -t))``: the hardest tile of ``p``, the smaller index
    among equals."""
    cdef int i, t, best = -1
    for i in range(s.hlen[p]):
        t = s.hand[p][i]
        if best < 0 or g.diff[t] > g.diff[best] or (g.diff[t] == g.diff[best] and t < best):
            best = t
    return best


cdef inline int _first_fit(const Gm* g, const St* s, int i, int p) noexcept nogil:
    """The first placement of ``p`` on open cell slot ``i`` in the Python list's order (tile,
    then rotation), or -1."""
    cdef int w, idx, t
    cdef uint64_t bits
    for w in range(WORDS):
        bits = s.fit[i][w] & s.hmask[p][w]
        if bits:
            idx = w * 64 + __builtin_ctzll(bits)
            t = idx // 6
            return g.place0 + (t * g.n_cells + s.fcell[i]) * 6 + (idx - t * 6)
    return -1


cdef int _greedy(const Gm* g, const St* s, int p) noexcept nogil:
    """heuristic.greedy_action: a winning placement (a perfect fit, or any with one tile left),
    else a give to an opponent on one tile (with a bonus, mid-turn), else the placement touching
    the most tiles (the hardest tile first), else stop (or pass). Ties go to the first in the
    heuristic's order: open cells by ``fseq``, then tile and rotation."""
    cdef int t, q, i, w, idx, k, seq, a
    cdef int going, one
    cdef int win_i = -1, win_seq = 1 << 30
    cdef int best = -1, bk = -1, bseq = 1 << 30
    cdef double d, bd = -1e300
    cdef uint64_t bits
    if s.ntable == 0:  # the opening tile: the hardest tile goes first, rotation 0
        t = _hardest(g, s, p)
        return g.place0 + (t * g.n_cells + g.origin) * 6
    going = s.phase == P_TURN and s.placed > 0
    if going and s.bonus:
        for q in range(g.players):
            if q != p and s.hlen[q] == 1:  # giving away one's last tile wins at once
                return g.give0 + _hardest(g, s, p) * g.players + q
    one = s.hlen[p] == 1
    if g.lenient:
        return _greedy_lenient(g, s, p, going, one)
    for i in range(s.nfront):
        a = _first_fit(g, s, i, p)
        if a < 0:
            continue
        seq = s.fseq[i]
        k = _conn(g, s, s.fcell[i])
        if k == 6 or one:
            if seq < win_seq:
                win_seq = seq
                win_i = i
            continue
        for w in range(WORDS):
            bits = s.fit[i][w] & s.hmask[p][w]
            while bits:
                idx = w * 64 + __builtin_ctzll(bits)
                bits &= bits - 1
                t = idx // 6
                d = g.diff[t]
                if k > bk or (k == bk and (d > bd or (d == bd and seq < bseq))):
                    best = g.place0 + (t * g.n_cells + s.fcell[i]) * 6 + (idx - t * 6)
                    bk = k
                    bd = d
                    bseq = seq
    if win_i >= 0:
        return _first_fit(g, s, win_i, p)
    if best < 0:
        return g.stop_action if going else g.pass_action
    return best


cdef int _greedy_lenient(const Gm* g, const St* s, int p, int going, int one) noexcept nogil:
    """The placements of :func:`_greedy` under lenient matching, where the connections belong to
    each (tile, rotation), not to the cell: the first winning one in the heuristic's order, else
    the most connections, the hardest tile, the earlier cell."""
    cdef int t, i, w, idx, k, seq, a
    cdef int win = -1, win_seq = 1 << 30
    cdef int best = -1, bk = -1, bseq = 1 << 30
    cdef double d, bd = -1e300
    cdef uint64_t bits
    for i in range(s.nfront):
        seq = s.fseq[i]
        for w in range(WORDS):
            bits = s.fit[i][w] & s.hmask[p][w]
            while bits:
                idx = w * 64 + __builtin_ctzll(bits)
                bits &= bits - 1
                t = idx // 6
                a = g.place0 + (t * g.n_cells + s.fcell[i]) * 6 + (idx - t * 6)
                k = _links(g, s, s.fcell[i], idx)
                if k == 6 or one:
                    if seq < win_seq:
                        win_seq = seq
                        win = a
                    continue
                d = g.diff[t]
                if k > bk or (k == bk and (d > bd or (d == bd and seq < bseq))):
                    best = a
                    bk = k
                    bd = d
                    bseq = seq
    if win >= 0:
        return win
    if best < 0:
        return g.stop_action if going else g.pass_action
    return best


cdef double _cand_key(const Gm* g, const St* s, int a, int hand_size) noexcept nogil:
    """The rank of action ``a`` in heuristic.candidates (``_key``, gives, stop or pass)."""
    cdef int stride = g.n_cells * 6
    cdef int t, c, k
    cdef double go_on
    if s.ntable == 0:
        return g.diff[(a - g.place0) // stride]
    if a < g.give0:
        t = (a - g.place0) // stride
        c = (a - g.place0 - t * stride) // 6
        k = _links(g, s, c, t * 6 + (a - g.place0) % 6)
        if k == 6 or hand_size == 1:
            return WIN_KEY
        go_on = 10.0 if (k >= g.go_on or s.bonus > 0) else 0.0
        return go_on + 1.5 * (k if k < 5 else 5) + g.diff[t]
    if a < g.stop_action:
        return WIN_KEY if hand_size == 1 else 50.0  # a give: rare and important
    return 5.0  # stop (or pass): always considered


cdef int _prune(const Gm* g, const St* s, int* out, int k) noexcept nogil:
    """heuristic.candidates(s, g.prune) from the ``k`` legal actions in ``out`` (in place): the
    best by rank, ties by the smaller id, best first; ``stop`` takes the last place when it is
    legal and was left out. Returns the count."""
    cdef int lim = g.prune if g.prune < k else k
    cdef int top[MAX_PRUNE]
    cdef double rank[MAX_PRUNE]
    cdef int n = 0, j, i, a, hand_size = s.hlen[s.to_move]
    cdef int stop_legal = out[k - 1] == g.stop_action
    cdef double r
    for j in range(k):
        a = out[j]
        r = _cand_key(g, s, a, hand_size)
        if n == lim and not (r > rank[n - 1] or (r == rank[n - 1] and a < top[n - 1])):
            continue
        i = n if n < lim else lim - 1
        while i > 0 and (r > rank[i - 1] or (r == rank[i - 1] and a < top[i - 1])):
            top[i] = top[i - 1]
            rank[i] = rank[i - 1]
            i -= 1
        top[i] = a
        rank[i] = r
        if n < lim:
            n += 1
    for j in range(n):
        out[j] = top[j]
    if stop_legal:
        for j in range(n):
            if out[j] == g.stop_action:
                return n
        out[n - 1] = g.stop_action
    return n


cdef void _play_turn(const Gm* g, St* s, int p) noexcept nogil:
    """heuristic.play_turn: ``p`` plays greedily until the turn passes on (at most 40 actions)."""
    cdef int n, turn
    for n in range(GREEDY_TURN_LIMIT):
        if s.phase == P_OVER or s.to_move != p or s.phase == P_DEAL:
            break
        turn = s.turn
        _apply(g, s, _greedy(g, s, p))
        if s.turn != turn:
            break


cdef int _immediate_win(const Gm* g, const St* s, int q) noexcept nogil:
    """heuristic.immediate_win: whether ``q`` (to move) can win with one placement."""
    cdef int i, w, has
    cdef int one = s.hlen[q] == 1
    cdef uint64_t bits
    if s.phase == P_OVER or s.phase == P_DEAL:
        return 0
    if g.lenient and not one:  # a perfect fit belongs to a (tile, rotation): six matching sides
        for i in range(s.nfront):
            for w in range(WORDS):
                bits = s.fit[i][w] & s.hmask[q][w]
                while bits:
                    if _links(g, s, s.fcell[i], w * 64 + __builtin_ctzll(bits)) == 6:
                        return 1
                    bits &= bits - 1
        return 0
    for i in range(s.nfront):
        has = 0
        for w in range(WORDS):
            if s.fit[i][w] & s.hmask[q][w]:
                has = 1
                break
        if has and (one or _conn(g, s, s.fcell[i]) == 6):
            return 1
    return 0


cdef void _value(const Gm* g, const St* s, double* out) noexcept nogil:
    """heuristic.value: winning chances per seat. A turn in progress is finished greedily, then
    a softmax of minus the tiles in hand, the player to move getting 1 (6 when it can win at
    once). The same operations in the same order, so the same doubles."""
    cdef St work
    cdef const St* v = s
    cdef double sc[MAXP]
    cdef double e[MAXP]
    cdef double m, tot
    cdef int i, q, n = g.players
    if s.phase == P_OVER:
        _returns(g, s, out)
        return
    if s.phase == P_DEAL:
        for i in range(n):
            out[i] = 1.0 / n
        return
    if s.phase == P_TURN and s.placed:
        work = s[0]
        _play_turn(g, &work, work.to_move)
        if work.phase == P_OVER:
            _returns(g, &work, out)
            return
        v = &work
    for i in range(n):
        sc[i] = -<double>v.hlen[i]
    q = v.to_move
    if _immediate_win(g, v, q):
        sc[q] += 6.0
    else:
        sc[q] += 1.0
    m = sc[0]
    for i in range(1, n):
        if sc[i] > m:
            m = sc[i]
    tot = 0.0
    for i in range(n):
        e[i] = exp(VALUE_K * (sc[i] - m))
        tot += e[i]
    for i in range(n):
        out[i] = e[i] / tot


include "../../core/_mcts.pxi"
include "../../core/_cstate.pxi"


# --- the Python face --------------------------------------------------------------------------

def _difficulty(sides):
    """heuristic.difficulties for one tile: Exagon sides hurt, a Jolly helps (the same float
    operations in the same order)."""
    x = sum(1 for v in sides if v == EXAGON)
    j = sum(1 for v in sides if v == JOLLY)
    distinct = len({v for v in sides if v <= 9})
    return 0.6 * x - 0.5 * j - 0.03 * distinct


cdef class CState(_CStateBase):
    """An EXAGON position in C. Build it with :meth:`load` (the wrapper does: ``compiled.py``)."""

    def __init__(self, sides, star, penalty, nummask, int players, hourglass, bint tournament, int turn_limit,
                 int radius, int tournament_games, bint lenient=False, carry_cap=None, int hand=0,
                 bonus=(1, 2, 3), int go_on=2, int target=50, int win_points=20):
        cdef int N = len(sides)
        if not 1 <= N <= MAXT:
            raise ValueError(f"{N} tiles are beyond the compiled engine (at most {MAXT})")
        if not 2 <= players <= MAXP or players > N:
            raise ValueError(f"{players} players is beyond the compiled engine (2 to {MAXP})")
        if radius != max(N - 1, 1):
            raise ValueError("radius must be max(tiles - 1, 1)")
        cdef Gm* g = &self.g
        cdef int t, k, d, v, t2, sd, w, idx
        cdef int nm[MAXT]
        memset(g, 0, sizeof(Gm))
        for t in range(N):
            nm[t] = nummask[t]
        g.n_tiles = N
        g.players = players
        g.width = 2 * radius + 1
        g.n_cells = g.width * g.width
        g.origin = radius * g.width + radius
        g.place0 = N
        g.give0 = N + N * g.n_cells * 6
        g.stop_action = g.give0 + N * players
        g.pass_action = g.stop_action + 1
        g.timeout_action = g.stop_action + 2
        if not 0 <= hand <= N // players or len(bonus) != 3 or not 1 <= go_on <= 6:
            raise ValueError("hand 0 (every tile) to tiles // players; bonus: three counts; go_on 1 to 6")
        g.per_seat = hand if hand else N // players
        g.leftover = N - g.per_seat * players
        for t in range(7):
            g.bonus_for[t] = bonus[t - 3] if 3 <= t <= 5 else 0
        g.go_on = go_on
        g.target = target
        g.win_points = win_points
        g.turn_limit = turn_limit
        g.tournament = tournament
        g.tournament_games = tournament_games
        g.has_clock = hourglass is not None
        g.hourglass = 0.0 if hourglass is None else float(hourglass)
        g.lenient = lenient
        g.has_cap = carry_cap is not None
        g.carry_cap = 0.0 if carry_cap is None else float(carry_cap)
        g.words = (6 * N + 63) // 64
        for t in range(N):
            g.star[t] = star[t]
            g.penalty[t] = penalty[t]
            for k in range(6):
                idx = t * 6 + k
                g.tilemask[t][idx >> 6] |= (<uint64_t>1) << (idx & 63)
                for d in range(6):
                    g.faces[t][k][d] = sides[t][(d - k + 6) % 6]
        for t in range(N):
            for k in range(6):
                idx = t * 6 + k
                for d in range(6):
                    sd = g.faces[t][k][d]
                    if sd <= 9:
                        g.facemask[d][sd][idx >> 6] |= (<uint64_t>1) << (idx & 63)
                    elif sd == JOLLY:
                        for v in range(1, 10):
                            if not (nm[t] >> v) & 1:
                                g.facemask[d][v][idx >> 6] |= (<uint64_t>1) << (idx & 63)
                    for t2 in range(N):
                        if sd == JOLLY or (sd <= 9 and not (nm[t2] >> sd) & 1):
                            g.jollymask[d][t2][idx >> 6] |= (<uint64_t>1) << (idx & 63)
        memset(&self.s, 0, sizeof(St))
        for t in range(MAXP):
            self.s.points[t] = 0
        for t in range(N):
            g.diff[t] = _difficulty(sides[t])
        _new_deal(&self.g, &self.s)

    def load(self, int phase, owner, hands, aside, table, int dealt, int to_move, int turn, int placed, int bonus,
             int passes, time_left, carry, points, winners, int end, counts, int games=0):
        """Set the position (the fields of ``ExagonState``; ``table`` a list of (tile, cell, rot)
        in order, ``winners`` None or the result's seats, ``end`` its reason's index)."""
        cdef Gm* g = &self.g
        cdef St* s = &self.s
        cdef int i, seat, t, c, k
        _new_deal(g, s)
        s.phase = phase
        for t in range(g.n_tiles):
            s.owner[t] = owner[t]
        for seat in range(g.players):
            s.hlen[seat] = 0
            for t in hands[seat]:
                _hand_add(g, s, seat, t)
        for i, t in enumerate(aside):
            s.aside[i] = t
        s.naside = len(aside)
        for t, c, k in table:
            s.board[c] = t + 1
            s.table[s.ntable] = t
            s.ntable += 1
            s.tcell[t] = c
            s.trot[t] = k
        _rebuild_front(g, s)
        s.dealt = dealt
        s.to_move = to_move
        s.turn = turn
        s.placed = placed
        s.bonus = bonus
        s.passes = passes
        s.has_time = time_left is not None
        s.time_left = 0.0 if time_left is None else time_left
        s.carry = 0.0 if carry is None else carry
        for seat in range(g.players):
            s.points[seat] = 0 if points is None else points[seat]
        s.games = games
        s.nwin = 0
        if winners is not None:
            for i, seat in enumerate(winners):
                s.winners[i] = seat
            s.nwin = len(winners)
        s.end = end
        for i in range(NCOUNTERS):
            s.cnt[i] = counts[i]

    def fields(self):
        """``(phase, owner, hands, aside, table, dealt, to_move, turn, placed, bonus, passes,
        time_left, carry, points, winners, end, counts, games)``, as :meth:`load` takes them
        (``games`` None outside a tournament)."""
        cdef St* s = &self.s
        cdef int i, seat
        return (s.phase, [s.owner[i] for i in range(self.g.n_tiles)],
                [[s.hand[seat][i] for i in range(s.hlen[seat])] for seat in range(self.g.players)],
                [s.aside[i] for i in range(s.naside)],
                [(s.table[i], s.tcell[s.table[i]], s.trot[s.table[i]]) for i in range(s.ntable)],
                s.dealt, s.to_move, s.turn, s.placed, s.bonus, s.passes,
                s.time_left if s.has_time else None, s.carry if s.has_time else None,
                [s.points[seat] for seat in range(self.g.players)] if self.g.tournament else None,
                [s.winners[i] for i in range(s.nwin)] if s.nwin else None, s.end,
                tuple([s.cnt[i] for i in range(NCOUNTERS)]), s.games if self.g.tournament else None)

    def phase(self):
        return self.s.phase

    def time_left(self):
        return self.s.time_left if self.s.has_time else None

    def spend(self, double elapsed):
        """``time_left`` loses ``elapsed`` seconds (the caller checked that it may)."""
        self.s.time_left = self.s.time_left - elapsed

    def chance_outcomes(self):
        if self.s.phase != P_DEAL:
            return []
        outcomes = self.legal_actions()
        cdef double p = 1.0 / len(outcomes)
        return [(t, p) for t in outcomes]

    def greedy_action(self):
        """The heuristic's greedy choice for the player to move (``heuristic.greedy_action``)."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the greedy choice needs a position where a player is to move")
        return _greedy(&self.g, &self.s, self.s.to_move)

    def candidates(self, int limit):
        """``heuristic.candidates(state, limit)``: the pruned search's actions at this node."""
        cdef int buf[MAX_ACTIONS]
        cdef Gm* view
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the candidates need a position where a player is to move")
        if not 1 <= limit <= MAX_PRUNE:
            raise ValueError(f"limit must be from 1 to {MAX_PRUNE}")
        view = <Gm*>malloc(sizeof(Gm))
        if view == NULL:
            raise MemoryError()
        view[0] = self.g
        view.prune = limit
        cdef int k = _legal(view, &self.s, buf)
        free(view)
        cdef int i
        return [buf[i] for i in range(k)]

    cdef Gm* _view(self, int prune, bint greedy) except NULL:
        """The rules as a search sees them (``prune`` actions kept per node, ``greedy`` rollouts): a
        copy the caller frees."""
        if not 0 <= prune <= MAX_PRUNE:
            raise ValueError(f"prune must be from 0 to {MAX_PRUNE}")
        cdef Gm* view = <Gm*>malloc(sizeof(Gm))
        if view == NULL:
            raise MemoryError()
        view[0] = self.g
        view.prune = prune
        view.greedy = greedy
        return view

    def search(self, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True,
               int prune=0, bint greedy=False):
        """The compiled MCTS (core/_mcts.pxi) from this decision position (unchanged): the action
        it plays after ``iterations`` simulations with UCT constant ``c``, rollouts of at most
        ``cap`` actions scored by :meth:`value` when cut short (``evaluate=False``: even shares),
        seeded by ``seed``. ``prune`` > 0 keeps only the heuristic's best ``prune`` actions per
        node (:meth:`candidates`); ``greedy`` plays the rollouts with the heuristic's greedy
        choice instead of uniformly random actions (as ``mcts`` with ``rollout=heuristic``).
        ``last_stats`` is set to (simulations, nodes, rollout actions)."""
        cdef Gm* view = self._view(prune, greedy)
        try:
            return self._run_search(view, iterations, c, cap, seed, evaluate)
        finally:
            free(view)

    def search_values(self, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True,
                      int prune=0, bint greedy=False):
        """:meth:`search`'s root statistics (the same search, settings and random numbers): one
        ``(action, visits, sum of the returns of the seat to move)`` per root child."""
        cdef Gm* view = self._view(prune, greedy)
        try:
            return self._run_search_values(view, iterations, c, cap, seed, evaluate)
        finally:
            free(view)

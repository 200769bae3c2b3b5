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
"""

from libc.stdint cimport uint64_t, uint8_t, int8_t, int16_t
from libc.string cimport memset
from libc.stdlib cimport qsort

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
    PLAYOUT_CAP = 1000000  # actions of one random playout at most (a default tournament takes ~1,000)
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
    WIN_POINTS = 20
    TOURNAMENT_TARGET = 50

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
    int per_seat
    int leftover
    int turn_limit
    int tournament
    int has_clock
    int words
    double hourglass
    int star[MAXT]
    int penalty[MAXT]
    int8_t faces[MAXT][6][6]          # faces[t][k][d]: tile t, rotation k, the side facing d
    uint64_t tilemask[MAXT][WORDS]   # the six bits of tile t
    uint64_t facemask[6][10][WORDS]  # (t, k) whose side facing d matches a number v there
    uint64_t jollymask[6][MAXT][WORDS]  # (t, k) whose side facing d matches the Jolly side of t2
    uint64_t zero[WORDS]


cdef struct St:
    uint8_t board[MAXCELLS]
    int16_t fcell[MAXF]               # the open cells (any order)
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
    int cnt[NCOUNTERS]


include "../../core/_rng.pxi"


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
        for w in range(WORDS):
            s.fit[i][w] = s.fit[last][w]
        s.board[s.fcell[i]] = FREE + i
    s.nfront = last


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
            s.board[nc] = FREE + i
            m = _mask(g, (d + 3) % 6, g.faces[t][k][d], t)
            for w in range(WORDS):
                s.fit[i][w] = m[w]
        elif code >= FREE:
            i = code - FREE
            m = _mask(g, (d + 3) % 6, g.faces[t][k][d], t)
            for w in range(WORDS):
                s.fit[i][w] &= m[w]
        else:
            conn += 1
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
            s.board[nc] = FREE + i
            for w in range(WORDS):
                s.fit[i][w] = ~(<uint64_t>0)
            for d2 in range(6):
                q2 = nq + DQ[d2]
                r2 = nr + DR[d2]
                if q2 < 0 or q2 >= W or r2 < 0 or r2 >= W:
                    continue
                c2 = q2 * W + r2
                code = s.board[c2]
                if 0 < code < FREE:
                    m = _mask(g, d2, g.faces[code - 1][s.trot[code - 1]][(d2 + 3) % 6], code - 1)
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
    cdef int i, seat, won
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
            s.points[seat] += WIN_POINTS
        else:
            s.points[seat] -= _hand_penalty(g, s, seat)
    for seat in range(g.players):
        if s.points[seat] >= TOURNAMENT_TARGET:
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
    if conn >= 3:
        s.bonus += conn - 2
        s.cnt[C_BONUSES_EARNED] += conn - 2
    elif conn == 1:
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


cdef int _cmp_int(const void* a, const void* b) noexcept nogil:
    cdef int x = (<const int*>a)[0]
    cdef int y = (<const int*>b)[0]
    return (x > y) - (x < y)


cdef int _legal(const Gm* g, const St* s, int* out) noexcept nogil:
    """ExagonState._legal_actions into ``out`` (room for MAX_ACTIONS ids); returns the count.
    At a chance node: the outcomes (the undealt tiles)."""
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
        qsort(out, k, sizeof(int), _cmp_int)
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
    """Play ``s`` to the end at random, or stop after PLAYOUT_CAP actions (a tournament whose
    turn limit is so short that no one ever reaches 50 points never ends: its returns stay 0);
    returns the number of actions."""
    cdef int count = 0
    while s.phase != P_OVER and count < PLAYOUT_CAP:
        _apply(g, s, _random_action(g, s, rng))
        count += 1
    return count


# --- the Python face --------------------------------------------------------------------------

cdef class CState:
    """An EXAGON position in C. Build it with :meth:`load` (the wrapper does: ``compiled.py``)."""

    cdef Gm g
    cdef St s
    cdef public long long last_actions

    def __init__(self, sides, star, penalty, nummask, int players, hourglass, bint tournament, int turn_limit,
                 int radius):
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
        g.per_seat = N // players
        g.leftover = N - g.per_seat * players
        g.turn_limit = turn_limit
        g.tournament = tournament
        g.has_clock = hourglass is not None
        g.hourglass = 0.0 if hourglass is None else float(hourglass)
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
        _new_deal(&self.g, &self.s)
        self.last_actions = 0

    def load(self, int phase, owner, hands, aside, table, int dealt, int to_move, int turn, int placed, int bonus,
             int passes, time_left, carry, points, winners, int end, counts):
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
        time_left, carry, points, winners, end, counts)``, as :meth:`load` takes them."""
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
                tuple([s.cnt[i] for i in range(NCOUNTERS)]))

    def copy(self):
        cdef CState c = CState.__new__(CState)
        c.g = self.g
        c.s = self.s
        c.last_actions = 0
        return c

    def current_player(self):
        return _player(&self.g, &self.s)

    def is_terminal(self):
        return self.s.phase == P_OVER

    def is_chance_node(self):
        return self.s.phase == P_DEAL

    def phase(self):
        return self.s.phase

    def time_left(self):
        return self.s.time_left if self.s.has_time else None

    def spend(self, double elapsed):
        """``time_left`` loses ``elapsed`` seconds (the caller checked that it may)."""
        self.s.time_left = self.s.time_left - elapsed

    def legal_actions(self):
        cdef int buf[MAX_ACTIONS]
        cdef int k = _legal(&self.g, &self.s, buf)
        cdef int i
        return [buf[i] for i in range(k)]

    def chance_outcomes(self):
        if self.s.phase != P_DEAL:
            return []
        outcomes = self.legal_actions()
        cdef double p = 1.0 / len(outcomes)
        return [(t, p) for t in outcomes]

    def apply(self, int action):
        """Play a legal ``action`` (unchecked: the caller checks)."""
        _apply(&self.g, &self.s, action)

    def returns(self):
        cdef double out[MAXP]
        _returns(&self.g, &self.s, out)
        cdef int i
        return [out[i] for i in range(self.g.players)]

    def sample_action(self, unsigned long long seed):
        """The action the playout loop would play here with this seed (tests: it is legal, and
        uniform over the legal actions)."""
        cdef uint64_t rng = seed
        if self.s.phase == P_OVER:
            raise ValueError("the game is over")
        return _random_action(&self.g, &self.s, &rng)

    def playouts(self, long long n, unsigned long long seed):
        """``n`` random playouts from this position (unchanged), seeded: their returns.
        ``last_actions`` is set to the actions played in all."""
        cdef uint64_t rng = seed
        cdef St work
        cdef double out[MAXP]
        cdef long long j, total = 0
        cdef int i
        result = []
        for j in range(n):
            work = self.s
            with nogil:
                total += _playout(&self.g, &work, &rng)
            _returns(&self.g, &work, out)
            result.append([out[i] for i in range(self.g.players)])
        self.last_actions = total
        return result

    def playout_actions(self, long long n, unsigned long long seed):
        """``n`` random playouts from this position (unchanged), returning only the number of
        actions played (for benchmarks: no Python object per playout)."""
        cdef uint64_t rng = seed
        cdef St work
        cdef long long j, total = 0
        with nogil:
            for j in range(n):
                work = self.s
                total += _playout(&self.g, &work, &rng)
        self.last_actions = total
        return total

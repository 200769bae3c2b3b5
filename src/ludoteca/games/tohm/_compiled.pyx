# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""TOHM compiled (Cython): the same rules as ``ludoteca.games.tohm`` on C arrays, and a random
playout loop in C. Built by ``setup.py`` (optional); used through ``ludoteca.games.tohm.compiled``.

The Python engine (``__init__.py``) is the readable reference: every function here mirrors one
there (``_legal_actions``, ``_apply``, ``_score``, ``returns``) and ``tests/test_compiled_tohm.py``
proves them equal. Phases, action ids and the board encoding are the Python engine's.
"""

from libc.stdint cimport uint64_t, uint32_t
from libc.math cimport exp

cdef enum:
    MAXC = 100      # most cells (MAX_SIDE 10 x 10)
    MAX_ACTIONS = MAXC * MAXC   # bound on legal actions at a decision (moves: filled x empty <= 2500) and outcomes
    MAXP = 5        # most players
    K_NOTHING = 0   # what a die face does (TohmGame.face_kind): NOTHING, REMOVE, MOVE, PLACE, ANY
    K_REMOVE = 1
    K_MOVE = 2
    K_PLACE = 3
    K_ANY = 4
    P_ROLL = 0
    P_ACT = 1
    P_OVER = 2
    CUR_CHANCE = -1
    CUR_TERMINAL = -4

MAX_CELLS = MAXC
MAX_PLAYERS = MAXP


cdef struct Gm:
    int rows
    int cols
    int n          # cells
    int players
    int turn_limit
    int remove0
    int move0
    int pass_id
    int numbers[MAXC]
    int tokens      # options tokens, trophies, tris (RULES.md: 5, 10, 3)
    int trophies
    int tris
    int kind[7]     # what each die face does (index 1 to 6; options face_1 .. face_6)
    int movers      # faces that move a token


cdef struct St:
    int board[MAXC]      # -1 empty, else the owner's seat
    int supply[MAXP]
    int trophies[MAXP]
    int filled
    int trophies_left
    int to_move
    int phase
    int roll             # 0 = none (Python None)
    int turn
    int cur
    # the counters of State.counters()
    int n_tris
    int n_tris_others
    int n_trophies
    int n_removes
    int n_moves
    int n_places
    int n_passes


from ludoteca.core._rng cimport _next, _below


# --- the rules (mirror of TohmState) ------------------------------------------------------------
# The C-level interface every compiled engine defines (docs/compiled.md): Gm, St, MAX_ACTIONS,
# _player, _legal, _chance, _apply, _returns, _random_action (and optionally _value); the compiled
# search (core/_mcts.pxi, included at the end) uses only these names.

cdef inline int _player(const Gm* g, const St* s) noexcept nogil:
    """current_player(): the seat to move, CUR_CHANCE (-1) at a roll, CUR_TERMINAL (-4) at the end."""
    return s.cur


cdef inline int _chance(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """One chance outcome (a fair die face) sampled with the engine's probabilities."""
    return 1 + _below(rng, 6)


cdef inline void _score(const Gm* g, St* s, int i, int owner, int mover) noexcept nogil:
    """Tris through cell ``i`` just filled by a token of ``owner`` (TohmState._score)."""
    cdef int cols = g.cols
    cdef int r = i // cols
    cdef int c = i - r * cols
    cdef int lo = c, hi = c, up = r, dn = r
    cdef int* b = s.board
    while lo > 0 and b[i - (c - lo) - 1] == owner:
        lo -= 1
    while hi < cols - 1 and b[i + (hi - c) + 1] == owner:
        hi += 1
    while up > 0 and b[(up - 1) * cols + c] == owner:
        up -= 1
    while dn < g.rows - 1 and b[(dn + 1) * cols + c] == owner:
        dn += 1
    cdef int tris = 0
    cdef int k = 0
    cdef int x
    if hi - lo + 1 >= g.tris:
        tris += 1
        for x in range(lo, hi + 1):
            b[r * cols + x] = -1
        k += hi - lo + 1
    if dn - up + 1 >= g.tris:
        tris += 1
        for x in range(up, dn + 1):
            b[x * cols + c] = -1
        k += dn - up + 1
        if hi - lo + 1 >= g.tris:
            k -= 1          # the shared cell goes back once
    if tris == 0:
        return
    s.supply[owner] += k
    s.filled -= k
    cdef int given = tris if tris <= s.trophies_left else s.trophies_left
    s.trophies[owner] += given
    s.trophies_left -= given
    s.n_tris += tris
    s.n_trophies += given
    if owner != mover:
        s.n_tris_others += tris


cdef inline void _apply(const Gm* g, St* s, int action) noexcept nogil:
    """TohmState._apply: ``action`` must be legal."""
    if s.phase == P_ROLL:
        s.roll = action
        s.phase = P_ACT
        s.cur = s.to_move
        return
    cdef int p = s.to_move
    cdef int i, f, t, owner
    cdef int* b = s.board
    if action < g.remove0:          # place
        i = action - 7
        b[i] = p
        s.supply[p] -= 1
        s.filled += 1
        s.n_places += 1
        _score(g, s, i, p, p)
    elif action < g.move0:          # remove
        i = action - g.remove0
        s.supply[b[i]] += 1
        b[i] = -1
        s.filled -= 1
        s.n_removes += 1
    elif action < g.pass_id:        # move
        f = (action - g.move0) // g.n
        t = (action - g.move0) - f * g.n
        owner = b[f]
        b[f] = -1
        b[t] = owner
        s.n_moves += 1
        _score(g, s, t, owner, p)
    else:
        s.n_passes += 1
    s.roll = 0
    s.turn += 1
    if s.trophies_left == 0 or s.turn >= g.turn_limit:
        s.phase = P_OVER
        s.cur = CUR_TERMINAL
    else:
        p += 1
        if p == g.players:
            p = 0
        s.to_move = p
        s.phase = P_ROLL
        s.cur = CUR_CHANCE


cdef int _legal(const Gm* g, const St* s, int* out) noexcept nogil:
    """TohmState._legal_actions into ``out`` (room for MAXC * MAXC ids); returns the count."""
    cdef int k = 0, i, f, t, d, ne, kind
    cdef int empty[MAXC]
    if s.phase == P_ROLL:
        for i in range(6):
            out[i] = i + 1
        return 6
    if s.phase == P_OVER:
        return 0
    d = s.roll
    kind = g.kind[d]
    if kind == K_PLACE or kind == K_ANY:
        if s.supply[s.to_move]:
            for i in range(g.n):
                if (kind == K_ANY or g.numbers[i] == d) and s.board[i] < 0:
                    out[k] = 7 + i
                    k += 1
            if k:
                return k
        out[0] = g.pass_id
        return 1
    if kind == K_REMOVE:
        if s.filled:
            for i in range(g.n):
                if s.board[i] >= 0:
                    out[k] = g.remove0 + i
                    k += 1
            return k
        out[0] = g.pass_id
        return 1
    if kind == K_MOVE and 0 < s.filled < g.n:
        ne = 0
        for i in range(g.n):
            if s.board[i] < 0:
                empty[ne] = i
                ne += 1
        for f in range(g.n):
            if s.board[f] >= 0:
                for t in range(ne):
                    out[k] = g.move0 + f * g.n + empty[t]
                    k += 1
        return k
    out[0] = g.pass_id
    return 1


cdef int _random_action(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A uniformly random legal action (a fair die at a roll), without listing the actions:
    the same distribution as ``legal[randrange(len(legal))]`` over :func:`_legal`'s list."""
    cdef int d, i, k, m, ne, nf, j, f, t, kind
    if s.phase == P_ROLL:
        return _chance(g, s, rng)
    d = s.roll
    kind = g.kind[d]
    if kind == K_PLACE or kind == K_ANY:
        if s.supply[s.to_move]:
            m = 0
            for i in range(g.n):
                if (kind == K_ANY or g.numbers[i] == d) and s.board[i] < 0:
                    m += 1
            if m:
                k = _below(rng, m)
                for i in range(g.n):
                    if (kind == K_ANY or g.numbers[i] == d) and s.board[i] < 0:
                        if k == 0:
                            return 7 + i
                        k -= 1
        return g.pass_id
    if kind == K_NOTHING:
        return g.pass_id
    nf = s.filled
    if kind == K_REMOVE:
        if nf:
            k = _below(rng, nf)
            for i in range(g.n):
                if s.board[i] >= 0:
                    if k == 0:
                        return g.remove0 + i
                    k -= 1
        return g.pass_id
    ne = g.n - nf
    if nf > 0 and ne > 0:
        k = _below(rng, nf * ne)
        j = k // ne            # the j-th filled cell ...
        k = k - j * ne         # ... to the k-th empty cell (the order of _legal)
        f = -1
        t = -1
        for i in range(g.n):
            if s.board[i] >= 0:
                if j == 0 and f < 0:
                    f = i
                j -= 1
            else:
                if k == 0 and t < 0:
                    t = i
                k -= 1
        return g.move0 + f * g.n + t
    return g.pass_id


cdef inline int _playout(const Gm* g, St* s, uint64_t* rng) noexcept nogil:
    """Play ``s`` to the end at random; returns the number of actions."""
    cdef int count = 0
    while s.phase != P_OVER:
        _apply(g, s, _random_action(g, s, rng))
        count += 1
    return count


cdef void _returns(const Gm* g, const St* s, double* out) noexcept nogil:
    """TohmState.returns(): the leaders by trophies share 1 (0 for everyone before the end)."""
    cdef int p, best = -1, nwin = 0
    if s.phase != P_OVER:
        for p in range(g.players):
            out[p] = 0.0
        return
    for p in range(g.players):
        if s.trophies[p] > best:
            best = s.trophies[p]
    for p in range(g.players):
        if s.trophies[p] == best:
            nwin += 1
    cdef double share = 1.0 / nwin
    for p in range(g.players):
        out[p] = share if s.trophies[p] == best else 0.0


# --- the evaluation of a cut-off rollout (mirror of heuristic.value) ----------------------------

cdef inline bint _run_through(const Gm* g, const int* b, int i, int p) noexcept nogil:
    """heuristic._run_through: a token of ``p`` on cell ``i`` makes a tris (``b[i]`` ignored)."""
    cdef int cols = g.cols
    cdef int r = i // cols
    cdef int c = i - r * cols
    cdef int n = 1, x
    x = c - 1
    while x >= 0 and b[r * cols + x] == p:
        n += 1
        x -= 1
    x = c + 1
    while x < cols and b[r * cols + x] == p:
        n += 1
        x += 1
    if n >= g.tris:
        return True
    n = 1
    x = r - 1
    while x >= 0 and b[x * cols + c] == p:
        n += 1
        x -= 1
    x = r + 1
    while x < g.rows and b[x * cols + c] == p:
        n += 1
        x += 1
    return n >= g.tris


cdef double _score_chance(const Gm* g, int* b, const St* s, int p) noexcept nogil:
    """heuristic.score_chance: the probability that ``p`` scores on their next roll."""
    cdef int i, e, f, faces = 0, ncells = 0
    cdef int cells[MAXC]
    cdef bint seen[7]
    cdef bint good
    for i in range(g.n):
        if b[i] < 0 and _run_through(g, b, i, p):
            cells[ncells] = i
            ncells += 1
    if ncells == 0:
        return 0.0
    if s.supply[p]:
        for i in range(7):
            seen[i] = False
        for i in range(ncells):
            seen[g.numbers[cells[i]]] = True
        for i in range(1, 7):
            if (g.kind[i] == K_PLACE and seen[i]) or g.kind[i] == K_ANY:
                faces += 1
    if g.movers == 0:
        return faces / 6.0
    for i in range(ncells):       # a 2: move a token of p from elsewhere onto a threat cell
        e = cells[i]
        for f in range(g.n):
            if b[f] == p:
                b[f] = -1
                good = _run_through(g, b, e, p)
                b[f] = p
                if good:
                    return (faces + g.movers) / 6.0
    return faces / 6.0


cdef void _value(const Gm* g, const St* s, double* out) noexcept nogil:
    """heuristic.value: winning chances per seat, a softmax of trophies plus promise (the
    returns at the end). Used by the compiled search to score a rollout cut short."""
    cdef int p, q, r, c, i, j, o, own, empty, order, n = g.players, cols = g.cols, L = g.tris
    cdef double sc[MAXP]
    cdef int builds[MAXP]
    cdef int b[MAXC]
    cdef double w, k, m, tot
    if s.phase == P_OVER:
        _returns(g, s, out)
        return
    for i in range(g.n):
        b[i] = s.board[i]
    for p in range(n):
        builds[p] = 0
    # windows of a tris's length in a line (heuristic._windows): one empty cell, the rest one owner's
    for r in range(g.rows):
        for c in range(cols - L + 1):
            i = r * cols + c
            own = -1
            empty = 0
            for j in range(L):
                o = b[i + j]
                if o < 0:
                    empty += 1
                elif own < 0:
                    own = o
                elif o != own:
                    empty = -L          # two owners: no build
            if empty == 1 and own >= 0:
                builds[own] += 1
    for r in range(g.rows - L + 1):
        for c in range(cols):
            i = r * cols + c
            own = -1
            empty = 0
            for j in range(L):
                o = b[i + j * cols]
                if o < 0:
                    empty += 1
                elif own < 0:
                    own = o
                elif o != own:
                    empty = -L
            if empty == 1 and own >= 0:
                builds[own] += 1
    for p in range(n):
        order = p - s.to_move
        if order < 0:
            order += n
        w = 1.0 if order == 0 else (0.7 if order < n - 1 else 0.55)
        sc[p] = s.trophies[p] + w * _score_chance(g, b, s, p) + 0.04 * builds[p]
    k = 1.2 + 3.0 / (1 + s.trophies_left)
    m = sc[0]
    for p in range(1, n):
        if sc[p] > m:
            m = sc[p]
    tot = 0.0
    for p in range(n):
        out[p] = exp(k * (sc[p] - m))
        tot += out[p]
    for p in range(n):
        out[p] /= tot


include "../../core/_mcts.pxi"
include "../../core/_cstate.pxi"


# --- the Python face --------------------------------------------------------------------------

cdef tuple _ROLL_OUTCOMES = tuple([(d, 1.0 / 6.0) for d in range(1, 7)])
"""The die's outcomes at every roll (the same floats as the Python engine's), built once: a copy per call."""


cdef class CState(_CStateBase):
    """A TOHM position in C. Build it with :meth:`load` (the wrapper does: ``compiled.py``)."""

    def __init__(self, int rows, int cols, numbers, int players, int turn_limit, int tokens=5, int trophies=10,
                 int tris=3, kinds=(0, 1, 2, 3, 3, 3, 3)):
        if not (3 <= rows and 3 <= cols and rows * cols <= MAXC):
            raise ValueError(f"board {rows}x{cols} is beyond the compiled engine ({MAXC} cells)")
        if not 2 <= players <= MAXP:
            raise ValueError(f"{players} players is beyond the compiled engine (2 to {MAXP})")
        if len(numbers) != rows * cols:
            raise ValueError("numbers must hold rows * cols cells")
        if tokens < 1 or trophies < 1 or tris < 2 or len(kinds) != 7 or any(not 0 <= k <= K_ANY for k in kinds):
            raise ValueError("tokens and trophies 1 or more, tris 2 or more, kinds of faces 0 to 4 for faces 0 to 6")
        cdef int n = rows * cols
        self.g.rows = rows
        self.g.cols = cols
        self.g.n = n
        self.g.players = players
        self.g.turn_limit = turn_limit
        self.g.remove0 = 7 + n
        self.g.move0 = 7 + 2 * n
        self.g.pass_id = 7 + 2 * n + n * n
        cdef int i
        self.g.tokens = tokens
        self.g.trophies = trophies
        self.g.tris = tris
        self.g.movers = 0
        for i in range(7):
            self.g.kind[i] = kinds[i]
            if i and kinds[i] == K_MOVE:
                self.g.movers += 1
        for i in range(n):
            self.g.numbers[i] = numbers[i]
        for i in range(n):
            self.s.board[i] = -1
        for i in range(MAXP):
            self.s.supply[i] = tokens if i < players else 0
            self.s.trophies[i] = 0
        self.s.filled = 0
        self.s.trophies_left = trophies
        self.s.to_move = 0
        self.s.phase = P_ROLL
        self.s.roll = 0
        self.s.turn = 0
        self.s.cur = CUR_CHANCE
        self.s.n_tris = self.s.n_tris_others = self.s.n_trophies = 0
        self.s.n_removes = self.s.n_moves = self.s.n_places = self.s.n_passes = 0

    def load(self, board, supply, trophies, int trophies_left, int to_move, int phase, roll, int turn,
             counters=None):
        """Set the position (fields of ``TohmState``; ``roll`` None or a face; counters a tuple of
        tris, tris_for_others, trophies_given, removes, moves, places, passes)."""
        cdef int i
        cdef int filled = 0
        for i in range(self.g.n):
            self.s.board[i] = board[i]
            if board[i] >= 0:
                filled += 1
        for i in range(self.g.players):
            self.s.supply[i] = supply[i]
            self.s.trophies[i] = trophies[i]
        self.s.filled = filled
        self.s.trophies_left = trophies_left
        self.s.to_move = to_move
        self.s.phase = phase
        self.s.roll = 0 if roll is None else roll
        self.s.turn = turn
        self.s.cur = CUR_CHANCE if phase == P_ROLL else (to_move if phase == P_ACT else CUR_TERMINAL)
        if counters is not None:
            (self.s.n_tris, self.s.n_tris_others, self.s.n_trophies, self.s.n_removes, self.s.n_moves,
             self.s.n_places, self.s.n_passes) = counters

    def fields(self):
        """``(board, supply, trophies, trophies_left, to_move, phase, roll, turn, counters)``."""
        cdef int i
        return ([self.s.board[i] for i in range(self.g.n)],
                [self.s.supply[i] for i in range(self.g.players)],
                [self.s.trophies[i] for i in range(self.g.players)],
                self.s.trophies_left, self.s.to_move, self.s.phase,
                None if self.s.roll == 0 else self.s.roll, self.s.turn,
                (self.s.n_tris, self.s.n_tris_others, self.s.n_trophies, self.s.n_removes, self.s.n_moves,
                 self.s.n_places, self.s.n_passes))

    def chance_outcomes(self):
        if self.s.phase != P_ROLL:
            return []
        return list(_ROLL_OUTCOMES)

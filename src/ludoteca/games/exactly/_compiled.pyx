# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""exactly compiled (Cython): the same rules as ``ludoteca.games.exactly`` on C arrays, and a random
playout loop in C. Built by ``setup.py`` (optional); used through ``ludoteca.games.exactly.compiled``.

The Python engine (``__init__.py``) is the readable reference: every function here mirrors one
there (``_legal_actions``, ``_apply``, ``_end_turn``, ``_score``, ``_new_round``,
``_cap_blocks_something``, ``returns``; ``_value`` mirrors ``heuristic.value``) and
``tests/test_compiled_exactly.py`` proves them equal. Phases, action ids and the coin encoding
(``counts[value_index * P + pile]``, pile 0 the bank, pile ``s + 1`` seat ``s``) are the Python
engine's. The bank's total is kept in plain cents (the Python engine adds BANK_OFFSET to it).

The C-level names the generic compiled search (``core/_mcts.pxi``) uses: ``MAX_ACTIONS``, ``Gm``,
``St``, ``_player``, ``_legal``, ``_chance``, ``_apply``, ``_returns``, ``_random_action``,
``_value``; the search is included after the rules and offered as ``CState.search``.
"""

from libc.math cimport exp
from libc.stdint cimport uint64_t

cdef enum:
    MAXN = 6            # most players
    MAXPILES = 7        # the bank and one pile per player
    MAX_IDS = 203       # 7 + 4 * MAXPILES * MAXPILES: every action id
    MAX_ACTIONS = 168   # most legal moves (4 values x 7 sources x 6 destinations); >= 6 chance outcomes
    NCOUNTS = 28        # 4 * MAXPILES
    PH_START = 0        # START_ROLL
    PH_ROLL = 1
    PH_MOVE = 2
    PH_OVER = 3
    SC_ROUND = 0        # start_coin "round", "game", "never"
    SC_GAME = 1
    SC_NEVER = 2
    A_PASS = 6
    A_MOVE0 = 7
    F_ZERO = 0
    F_QUESTION = 1
    COINS = 10
    MAX_SIDES = 36      # the die: at most 6 faces of each of the six kinds
    CUR_CHANCE = -1
    CUR_TERMINAL = -4

MAX_PLAYERS = MAXN
START_COINS = ("round", "game", "never")

cdef int VALUES[4]
VALUES[:] = [5, 10, 20, 50]
cdef int FACE_RANK[6]
FACE_RANK[:] = [0, 5, 4, 3, 2, 1]


cdef struct Gm:
    int players
    int piles
    int start_coin      # SC_*
    int turn_limit
    int target          # options target, cap, euros_to_win (RULES.md: 100, 150, 3)
    int cap
    int win
    int die[6]          # how many faces of the die show each face (options die_*)
    int sides           # the die's faces in all
    int die_face[MAX_SIDES]   # the face on each side of the die
    int n_faces         # the different faces (the chance outcomes, in outcome order)
    int faces[6]
    # per action id (ExactlyGame._setup): value index, source pile, destination pile; -1 for non-moves
    signed char a_v[MAX_IDS]
    signed char a_from[MAX_IDS]
    signed char a_to[MAX_IDS]


cdef struct St:
    int counts[NCOUNTS]     # coins by value_index * piles + pile
    int totals[MAXPILES]    # cents by pile (the bank's without BANK_OFFSET)
    int euros[MAXN]
    int to_move
    int phase
    int face                # -1 outside phase move
    int turn
    int ro_n                # seats in the roll-off (0: none, Python None)
    int ro_seats[MAXN]
    int ro_k                # rolls made so far
    int ro_rolls[MAXN]
    # the counters of State.counters()
    int c_rounds
    int c_euros
    int c_question
    int c_cap


from ludoteca.core._rng cimport _next, _below


# --- the rules (mirror of ExactlyState) -------------------------------------------------------

cdef inline int _face_v0(int face) noexcept nogil:
    """First value index a face lets the player move (FACE_VALUES[face][0]); ``?`` allows 0..3."""
    return 0 if face == F_QUESTION else 5 - face


cdef inline int _face_v1(int face) noexcept nogil:
    """One past the last value index of FACE_VALUES[face]."""
    return 4 if face == F_QUESTION else 6 - face


cdef inline void _new_round(const Gm* g, St* s, bint first) noexcept nogil:
    """ExactlyState._new_round: every coin in the bank, then (start_coin) a 5-cent coin each."""
    cdef int p = g.piles
    cdef int i, v
    for i in range(NCOUNTS):
        s.counts[i] = 0
    for i in range(MAXPILES):
        s.totals[i] = 0
    for v in range(4):
        s.counts[v * p] = COINS
    if g.start_coin == SC_ROUND or (first and g.start_coin == SC_GAME):
        s.counts[0] -= g.players
        for i in range(1, p):
            s.counts[i] = 1
            s.totals[i] = 5
    s.totals[0] = 0
    for v in range(4):
        s.totals[0] += VALUES[v] * s.counts[v * p]


cdef inline void _end_turn(const Gm* g, St* s) noexcept nogil:
    s.turn += 1
    s.face = -1
    if s.turn >= g.turn_limit:
        s.phase = PH_OVER
        return
    s.to_move += 1
    if s.to_move == g.players:
        s.to_move = 0
    s.phase = PH_ROLL


cdef inline void _score(const Gm* g, St* s) noexcept nogil:
    """ExactlyState._score: every player at exactly 100 cents takes a euro; the round ends."""
    cdef int i
    cdef bint won = False
    for i in range(g.players):
        if s.totals[i + 1] == g.target:
            s.euros[i] += 1
            s.c_euros += 1
            if s.euros[i] >= g.win:
                won = True
    s.c_rounds += 1
    if s.face == F_QUESTION:
        s.c_question += 1
    s.turn += 1
    s.face = -1
    if won or s.turn >= g.turn_limit:
        s.phase = PH_OVER       # the position stays as the last move left it
        return
    _new_round(g, s, False)
    s.to_move += 1
    if s.to_move == g.players:
        s.to_move = 0
    s.phase = PH_ROLL


cdef inline bint _cap_blocks_something(const Gm* g, const St* s, int face) noexcept nogil:
    cdef int p = g.piles
    cdef int t, v, f
    for t in range(1, p):
        if s.totals[t] > g.cap:
            for v in range(_face_v0(face), _face_v1(face)):
                for f in range(p):
                    if f != t and s.counts[v * p + f]:
                        return True
    return False


cdef int _player(const Gm* g, const St* s) noexcept nogil:
    """ExactlyState.current_player: the seat to move, -1 at a roll, -4 at the end."""
    if s.phase == PH_MOVE:
        return s.to_move
    if s.phase == PH_OVER:
        return CUR_TERMINAL
    return CUR_CHANCE


cdef int _legal(const Gm* g, const St* s, int* out) noexcept nogil:
    """ExactlyState._legal_actions into ``out`` (room for MAX_ACTIONS ids); returns the count.
    At a roll: the six die outcomes, as the Python engine lists them."""
    cdef int p, k, t, v, f, nopen, idx, base, j
    cdef int open_piles[MAXPILES]
    if s.phase == PH_MOVE:
        p = g.piles
        open_piles[0] = 0
        nopen = 1
        for t in range(1, p):
            if s.totals[t] <= g.cap:
                open_piles[nopen] = t
                nopen += 1
        k = 0
        for v in range(_face_v0(s.face), _face_v1(s.face)):
            idx = v * p
            for f in range(p):
                if s.counts[idx + f]:
                    base = A_MOVE0 + (idx + f) * p
                    for j in range(nopen):
                        t = open_piles[j]
                        if t != f:
                            out[k] = base + t
                            k += 1
        if k == 0:
            out[0] = A_PASS
            return 1
        return k
    if s.phase == PH_OVER:
        return 0
    for k in range(g.n_faces):
        out[k] = g.faces[k]
    return g.n_faces


cdef int _chance(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A die roll (the turn's or the roll-off's): each side of the die equally likely."""
    return g.die_face[_below(rng, g.sides)]


cdef void _apply(const Gm* g, St* s, int action) noexcept nogil:
    """ExactlyState._apply: ``action`` must be legal (a move, a pass or a die outcome)."""
    cdef int p, i, f, t, v, best, ntied, r
    cdef bint hit
    if s.phase == PH_MOVE:
        if action == A_PASS:
            _end_turn(g, s)
            return
        p = g.piles
        v = g.a_v[action]
        f = g.a_from[action]
        t = g.a_to[action]
        s.counts[v * p + f] -= 1
        s.counts[v * p + t] += 1
        s.totals[f] -= VALUES[v]
        s.totals[t] += VALUES[v]
        hit = False
        for i in range(1, p):
            if s.totals[i] == g.target:
                hit = True
                break
        if hit:
            _score(g, s)
        else:
            _end_turn(g, s)
    elif s.phase == PH_ROLL:
        if action == F_ZERO:
            _end_turn(g, s)
        else:
            s.face = action
            s.phase = PH_MOVE
            if _cap_blocks_something(g, s, action):
                s.c_cap += 1
    else:  # PH_START: the roll-off
        s.ro_rolls[s.ro_k] = action
        s.ro_k += 1
        if s.ro_k < s.ro_n:
            s.to_move = s.ro_seats[s.ro_k]
            return
        best = -1
        for i in range(s.ro_n):
            r = FACE_RANK[s.ro_rolls[i]]
            if r > best:
                best = r
        ntied = 0
        for i in range(s.ro_n):
            if FACE_RANK[s.ro_rolls[i]] == best:
                s.ro_seats[ntied] = s.ro_seats[i]   # ntied <= i: in place, in seat order
                ntied += 1
        s.to_move = s.ro_seats[0]
        s.ro_k = 0
        if ntied == 1:
            s.phase = PH_ROLL
            s.ro_n = 0
        else:
            s.ro_n = ntied


cdef void _returns(const Gm* g, const St* s, double* out) noexcept nogil:
    """ExactlyState.returns: the most euros share 1 (zeros before the end)."""
    cdef int i, best = -1, nwin = 0
    if s.phase != PH_OVER:
        for i in range(g.players):
            out[i] = 0.0
        return
    for i in range(g.players):
        if s.euros[i] > best:
            best = s.euros[i]
    for i in range(g.players):
        if s.euros[i] == best:
            nwin += 1
    cdef double share = 1.0 / nwin
    for i in range(g.players):
        out[i] = share if s.euros[i] == best else 0.0


cdef int _random_action(const Gm* g, const St* s, uint64_t* rng) noexcept nogil:
    """A uniformly random legal action (a fair die at a roll), without listing the actions: the
    same distribution as ``legal[randrange(len(legal))]`` over :func:`_legal`'s list."""
    cdef int p, t, v, f, nopen, m, c, k, idx
    cdef bint is_open[MAXPILES]
    if s.phase != PH_MOVE:
        return _chance(g, s, rng)
    p = g.piles
    is_open[0] = True
    nopen = 1
    for t in range(1, p):
        is_open[t] = s.totals[t] <= g.cap
        if is_open[t]:
            nopen += 1
    m = 0
    for v in range(_face_v0(s.face), _face_v1(s.face)):
        idx = v * p
        for f in range(p):
            if s.counts[idx + f]:
                m += nopen - is_open[f]
    if m == 0:
        return A_PASS
    k = _below(rng, m)
    for v in range(_face_v0(s.face), _face_v1(s.face)):
        idx = v * p
        for f in range(p):
            if s.counts[idx + f]:
                c = nopen - is_open[f]
                if k < c:
                    # the k-th open pile other than f, in pile order
                    for t in range(p):
                        if is_open[t] and t != f:
                            if k == 0:
                                return A_MOVE0 + (idx + f) * p + t
                            k -= 1
                k -= c
    return A_PASS  # not reached


cdef inline int _scoring_faces(const Gm* g, const St* s, int seat) noexcept nogil:
    """heuristic.scoring_faces: how many faces let ``seat`` bring their pile to exactly the target."""
    cdef int p = g.piles
    cdef int pile = seat + 1
    cdef int total = s.totals[pile]
    cdef int n = 0, v, d, f
    cdef bint ok[4]
    cdef bint any_ok = False
    for v in range(4):
        d = VALUES[v]
        ok[v] = False
        if total - d == g.target and s.counts[v * p + pile]:
            ok[v] = True
        elif total + d == g.target and total <= g.cap:
            for f in range(p):
                if f != pile and s.counts[v * p + f]:
                    ok[v] = True
                    break
        if ok[v]:
            any_ok = True
            n += g.die[5 - v]
    if any_ok:
        n += g.die[F_QUESTION]
    return n


cdef void _value(const Gm* g, const St* s, double* out) noexcept nogil:
    """heuristic.value (MCTS's evaluation of a cut-off rollout): winning chances per seat, a softmax
    of euros and scoring chances; the returns at the end. Same operations in the same order."""
    cdef int i
    cdef double f, m, tot
    cdef double x[MAXN]
    if s.phase == PH_OVER:
        _returns(g, s, out)
        return
    for i in range(g.players):
        f = _scoring_faces(g, s, i) / <double>g.sides
        x[i] = s.euros[i] + 0.5 * f * (1.0 if i == s.to_move else 0.6)
    m = x[0]
    for i in range(1, g.players):
        if x[i] > m:
            m = x[i]
    tot = 0.0
    for i in range(g.players):
        out[i] = exp(1.5 * (x[i] - m))
        tot += out[i]
    for i in range(g.players):
        out[i] = out[i] / tot


cdef inline int _playout(const Gm* g, St* s, uint64_t* rng) noexcept nogil:
    """Play ``s`` to the end at random; returns the number of actions."""
    cdef int count = 0
    while s.phase != PH_OVER:
        _apply(g, s, _random_action(g, s, rng))
        count += 1
    return count


include "../../core/_mcts.pxi"
include "../../core/_cstate.pxi"


# --- the Python face --------------------------------------------------------------------------

cdef class CState(_CStateBase):
    """An exactly position in C. Build it with :meth:`load` (the wrapper does: ``compiled.py``)."""

    def __init__(self, int players, str start_coin, int turn_limit, int target=100, int win=3, int cap=150,
                 die=(1, 1, 1, 1, 1, 1)):
        if not 2 <= players <= MAXN:
            raise ValueError(f"{players} players is beyond the compiled engine (2 to {MAXN})")
        if start_coin not in START_COINS:
            raise ValueError(f"start_coin {start_coin!r} is not one of {START_COINS}")
        if turn_limit < 1:
            raise ValueError(f"turn_limit must be at least 1, not {turn_limit}")
        if len(die) != 6 or any(not 0 <= k <= 6 for k in die) or sum(1 for k in die if k) < 2:
            raise ValueError(f"die {die!r}: six counts 0 to 6, two different faces at least")
        cdef int p = players + 1
        cdef int a, v, f, t
        self.g.target = target
        self.g.cap = cap
        self.g.win = win
        self.g.sides = 0
        self.g.n_faces = 0
        for f in range(6):
            self.g.die[f] = die[f]
            if die[f]:
                self.g.faces[self.g.n_faces] = f
                self.g.n_faces += 1
            for a in range(die[f]):
                self.g.die_face[self.g.sides] = f
                self.g.sides += 1
        self.g.players = players
        self.g.piles = p
        self.g.start_coin = START_COINS.index(start_coin)
        self.g.turn_limit = turn_limit
        for a in range(MAX_IDS):
            self.g.a_v[a] = -1
            self.g.a_from[a] = -1
            self.g.a_to[a] = -1
        for v in range(4):
            for f in range(p):
                for t in range(p):
                    a = A_MOVE0 + (v * p + f) * p + t
                    self.g.a_v[a] = v
                    self.g.a_from[a] = f
                    self.g.a_to[a] = t
        # the initial position (ExactlyGame.new_initial_state)
        _new_round(&self.g, &self.s, True)
        for a in range(MAXN):
            self.s.euros[a] = 0
            self.s.ro_seats[a] = a if a < players else 0
            self.s.ro_rolls[a] = 0
        self.s.to_move = 0
        self.s.phase = PH_START
        self.s.face = -1
        self.s.turn = 0
        self.s.ro_n = players
        self.s.ro_k = 0
        self.s.c_rounds = self.s.c_euros = self.s.c_question = self.s.c_cap = 0

    def load(self, counts, euros, int to_move, int phase, int face, int turn, ro_seats, ro_rolls,
             counters=None):
        """Set the position (fields of ``ExactlyState``: ``counts`` by value_index * piles + pile,
        ``ro_seats`` None outside the roll-off; counters a tuple of rounds, euros, question_rounds,
        cap_blocks)."""
        cdef int p = self.g.piles
        cdef int n = self.g.players
        cdef int i, v
        if len(counts) != 4 * p or len(euros) != n:
            raise ValueError("counts must hold 4 * piles entries and euros one per seat")
        if not 0 <= phase <= PH_OVER:
            raise ValueError(f"phase {phase} is not a phase of exactly")
        for i in range(NCOUNTS):
            self.s.counts[i] = 0
        for i in range(MAXPILES):
            self.s.totals[i] = 0
        for i in range(4 * p):
            self.s.counts[i] = counts[i]
        for v in range(4):
            for i in range(p):
                self.s.totals[i] += VALUES[v] * self.s.counts[v * p + i]
        for i in range(MAXN):
            self.s.euros[i] = euros[i] if i < n else 0
            self.s.ro_seats[i] = 0
            self.s.ro_rolls[i] = 0
        self.s.to_move = to_move
        self.s.phase = phase
        self.s.face = face
        self.s.turn = turn
        if ro_seats is None:
            self.s.ro_n = 0
            self.s.ro_k = 0
        else:
            if not 0 < len(ro_seats) <= n or len(ro_rolls) >= len(ro_seats):
                raise ValueError("a roll-off lists 1 to players seats and fewer rolls than seats")
            self.s.ro_n = len(ro_seats)
            self.s.ro_k = len(ro_rolls)
            for i in range(self.s.ro_n):
                self.s.ro_seats[i] = ro_seats[i]
            for i in range(self.s.ro_k):
                self.s.ro_rolls[i] = ro_rolls[i]
        if counters is not None:
            self.s.c_rounds, self.s.c_euros, self.s.c_question, self.s.c_cap = counters
        else:
            self.s.c_rounds = self.s.c_euros = self.s.c_question = self.s.c_cap = 0

    def fields(self):
        """``(counts, euros, to_move, phase, face, turn, ro_seats, ro_rolls, counters)``, as
        ExactlyState holds them (``ro_seats`` None outside the roll-off)."""
        cdef int i
        cdef int p = self.g.piles
        ro_seats = None
        if self.s.ro_n:
            ro_seats = [self.s.ro_seats[i] for i in range(self.s.ro_n)]
        return ([self.s.counts[i] for i in range(4 * p)],
                [self.s.euros[i] for i in range(self.g.players)],
                self.s.to_move, self.s.phase, self.s.face, self.s.turn,
                ro_seats, [self.s.ro_rolls[i] for i in range(self.s.ro_k)],
                (self.s.c_rounds, self.s.c_euros, self.s.c_question, self.s.c_cap))

    def totals(self):
        """Cents by pile (the bank's in plain cents)."""
        cdef int i
        return [self.s.totals[i] for i in range(self.g.piles)]

    def chance_outcomes(self):
        cdef int k
        if self.s.phase == PH_ROLL or self.s.phase == PH_START:
            return [(self.g.faces[k], self.g.die[self.g.faces[k]] / <double>self.g.sides) for k in range(self.g.n_faces)]
        return []

    def apply(self, int action):
        """Play a legal ``action`` (unchecked: the caller checks)."""
        cdef int p = self.g.piles
        cdef int limit = 6 if self.s.phase != PH_MOVE else A_MOVE0 + 4 * p * p
        cdef int lo = A_PASS if self.s.phase == PH_MOVE else 0
        if self.s.phase == PH_OVER or not lo <= action < limit:
            raise ValueError(f"{action} cannot be played here (the game is over, or not an outcome of a roll, "
                             "or not an action id of this game)")
        _apply(&self.g, &self.s, action)

# The Python face every compiled engine shares (Cython include file): ``_CStateBase``, one position
# of a game in C (``g``: the game's constants, ``s``: the position) with the methods that read, play,
# search and play out through the C-level interface of docs/compiled.md.
#
# A game's ``_compiled.pyx`` includes it after its rules and ``core/_mcts.pxi``
# (``include "../../core/_cstate.pxi"``) and declares ``cdef class CState(_CStateBase)`` with what is
# its own: ``__init__`` (the game's constants and initial position), ``load`` and ``fields`` (the
# position to and from Python), ``chance_outcomes`` (the engine's own floats), and any extra reading.
# Besides the names ``core/_mcts.pxi`` uses it needs ``CUR_CHANCE`` / ``CUR_TERMINAL`` (what
# ``_player`` answers at a chance node / at the end), ``_value`` (the evaluation of a cut-off
# rollout, per seat) and ``_playout`` (one random game played to its end in place: the number of
# actions played), and a ``players`` field in ``Gm``.

cdef int _face_legal[MAX_ACTIONS]   # legal_actions' scratch (the GIL is held while it is in use)


cdef list _per_seat(const Gm* g, const double* out):
    cdef int p
    return [out[p] for p in range(g.players)]


cdef class _CStateBase:
    """What every game's ``CState`` shares (its ``__init__`` and ``load`` are the game's)."""

    cdef Gm g
    cdef St s
    cdef public long long last_actions
    cdef public tuple last_stats

    def __cinit__(self, *args, **kwargs):
        self.last_actions = 0
        self.last_stats = (0, 0, 0)

    def copy(self):
        """An independent copy of this position (the statistics reset)."""
        cdef _CStateBase c = type(self).__new__(type(self))
        c.g = self.g
        c.s = self.s
        return c

    def current_player(self):
        return _player(&self.g, &self.s)

    def is_terminal(self):
        return _player(&self.g, &self.s) == CUR_TERMINAL

    def is_chance_node(self):
        return _player(&self.g, &self.s) == CUR_CHANCE

    def legal_actions(self):
        cdef int k = _legal(&self.g, &self.s, _face_legal)
        cdef int i
        return [_face_legal[i] for i in range(k)]

    cdef bint _is_legal(self, object action):
        if type(action) is not int or not -2147483648 <= action <= 2147483647:
            return False
        cdef int a = action
        cdef int k = _legal(&self.g, &self.s, _face_legal)
        cdef int i
        for i in range(k):
            if _face_legal[i] == a:
                return True
        return False

    def is_legal(self, action):
        """Whether ``action`` is among :meth:`legal_actions` (or the chance outcomes at a chance node),
        without building the list; anything but an int (a bool too) is not."""
        return self._is_legal(action)

    def apply(self, int action):
        """Play a legal ``action`` (unchecked: the caller checks)."""
        _apply(&self.g, &self.s, action)

    def apply_unchecked(self, int action):
        """:meth:`apply`, under the name of the Python engine's fast path (``State.apply_unchecked``):
        a game loop written for a Python state plays this one alike (the lab's)."""
        _apply(&self.g, &self.s, action)

    def play(self, action):
        """Play ``action`` when it is legal (:meth:`is_legal`): True; else False, nothing changed."""
        if not self._is_legal(action):
            return False
        _apply(&self.g, &self.s, action)
        return True

    def returns(self):
        """One value per seat: winners share 1 at the end; all 0 before the end (as ``State.returns``)."""
        cdef double out[_MCTS_MAX_SEATS]
        if _player(&self.g, &self.s) != CUR_TERMINAL:
            return [0.0] * self.g.players
        _returns(&self.g, &self.s, out)
        return _per_seat(&self.g, out)

    def value(self):
        """The evaluation of this position (the game's ``heuristic.value``), one number per seat."""
        cdef double out[_MCTS_MAX_SEATS]
        _value(&self.g, &self.s, out)
        return _per_seat(&self.g, out)

    def search(self, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True):
        """The compiled MCTS (core/_mcts.pxi) from this decision position (unchanged): the action
        it plays after ``iterations`` simulations with UCT constant ``c``, rollouts of at most
        ``cap`` actions scored by :meth:`value` when cut short (``evaluate=False``: even shares),
        seeded by ``seed``. ``last_stats`` is set to (simulations, nodes, rollout actions)."""
        return self._run_search(&self.g, iterations, c, cap, seed, evaluate)

    cdef object _run_search(self, const Gm* view, long long iterations, double c, int cap, uint64_t seed,
                            bint evaluate):
        """:meth:`search` on this position with the rules as ``view`` has them (a game may hand the
        search a copy of its constants with search-only settings: pruning, a rollout policy)."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the search needs a position where a player is to move")
        if iterations < 0 or cap < 0 or c < 0:
            raise ValueError("iterations, cap and c must not be negative")
        cdef long long stats[3]
        cdef int action
        cdef _ValueFn fn = NULL
        if evaluate:
            fn = _value
        with nogil:
            action = _search(view, &self.s, self.g.players, iterations, c, cap, seed, fn, stats)
        if action == _MCTS_NO_MEMORY:
            raise MemoryError("the compiled search ran out of memory")
        self.last_stats = (stats[0], stats[1], stats[2])
        return action

    def search_values(self, long long iterations, double c, int cap, unsigned long long seed, bint evaluate=True):
        """:meth:`search`'s root statistics (the same search, random numbers and settings): one
        ``(action, visits, sum of the returns of the seat to move)`` per root child, so an action's
        estimate is ``sum / visits`` (the analysis's per-action values)."""
        return self._run_search_values(&self.g, iterations, c, cap, seed, evaluate)

    cdef object _run_search_values(self, const Gm* view, long long iterations, double c, int cap, uint64_t seed,
                                   bint evaluate):
        """:meth:`search_values` with the rules as ``view`` has them (as :meth:`_run_search`)."""
        if _player(&self.g, &self.s) < 0:
            raise ValueError("the search needs a position where a player is to move")
        if iterations < 0 or cap < 0 or c < 0:
            raise ValueError("iterations, cap and c must not be negative")
        cdef long long stats[3]
        cdef int action, count = 0, i
        cdef _ValueFn fn = NULL
        cdef int* acts = <int*>malloc(MAX_ACTIONS * sizeof(int))
        cdef long long* visits = <long long*>malloc(MAX_ACTIONS * sizeof(long long))
        cdef double* sums = <double*>malloc(MAX_ACTIONS * sizeof(double))
        if acts == NULL or visits == NULL or sums == NULL:
            free(acts)
            free(visits)
            free(sums)
            raise MemoryError("the compiled search ran out of memory")
        if evaluate:
            fn = _value
        try:
            with nogil:
                action = _search_root(view, &self.s, self.g.players, iterations, c, cap, seed, fn, stats, NULL, NULL,
                                      0, acts, visits, sums, &count)
            if action == _MCTS_NO_MEMORY:
                raise MemoryError("the compiled search ran out of memory")
            self.last_stats = (stats[0], stats[1], stats[2])
            return [(acts[i], visits[i], sums[i]) for i in range(count)]
        finally:
            free(acts)
            free(visits)
            free(sums)

    def sample_action(self, unsigned long long seed):
        """The action the playout loop would play here with this seed (tests: it is legal, and
        uniform over the legal actions; by its probability at a chance node)."""
        cdef uint64_t rng = seed
        if _player(&self.g, &self.s) == CUR_TERMINAL:
            raise ValueError("the game is over")
        return _random_action(&self.g, &self.s, &rng)

    def playouts(self, long long n, unsigned long long seed):
        """``n`` random playouts from this position (unchanged), seeded: their returns.
        ``last_actions`` is set to the actions played in all."""
        cdef uint64_t rng = seed
        cdef St work
        cdef double out[_MCTS_MAX_SEATS]
        cdef long long j, total = 0
        result = []
        for j in range(n):
            work = self.s
            with nogil:
                total += _playout(&self.g, &work, &rng)
                _returns(&self.g, &work, out)
            result.append(_per_seat(&self.g, out))
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

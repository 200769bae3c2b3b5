# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""TOHM for two players on a 3x3 board, solved (Cython): value iteration with chance nodes.

Built by ``setup.py`` (optional); used through ``ludoteca.games.tohm.solve``, which documents the
value table. A position is seen by the seat to move: its tokens ``mine`` and the other seat's
``theirs`` (9-bit masks, bit ``i`` = cell ``r * 3 + c``), its trophies ``tm`` and the other's
``to`` (``tm + to <= 9``: at ten the game is over). ``V[index]`` is the win chance of the seat to
move, before its roll, a shared win counting 1/2 (the rules' returns). The supplies follow from
the board (five tokens each); the turn count is not part of the position (no turn limit).

The Bellman equation (RULES.md section 3): ``V(s) = 1/6 * sum over the die d of the best, over
the legal actions a with d, of the mover's value after a``: the returns when a tris gives the last
trophy, else ``1 - V`` of the next position seen by the other seat. Trophies never go back, so
the levels ``tm + to = 9, 8, ..., 0`` are solved in that order, each by Gauss-Seidel sweeps until
the largest change of a sweep is below the tolerance.
"""

cdef enum:
    NCELLS = 9
    NBOARDS = 19683      # 3 ** 9
    NPAIRS = 55          # (tm, to) with tm + to <= 9
    NTOKENS = 5
    NTROPHIES = 10

BOARDS = NBOARDS
PAIRS = NPAIRS
SIZE = NBOARDS * NPAIRS

cdef int POW3[512]       # POW3[mask] = sum of 3 ** i over the bits i of mask
cdef int POPC[512]
cdef int ROWM[NCELLS]    # the row through each cell, as a mask
cdef int COLM[NCELLS]    # the column through each cell


cdef void _init_tables():
    cdef int m, i, s, c
    for m in range(512):
        s = 0
        c = 0
        for i in range(NCELLS):
            if m >> i & 1:
                s += _p3(i)
                c += 1
        POW3[m] = s
        POPC[m] = c
    for i in range(NCELLS):
        ROWM[i] = 7 << (3 * (i // 3))
        COLM[i] = 0b001001001 << (i % 3)


cdef inline int _p3(int i):
    cdef int r = 1
    while i > 0:
        r *= 3
        i -= 1
    return r


_init_tables()


cdef inline int pair_index(int tm, int to):
    cdef int s = tm + to
    return s * (s + 1) // 2 + tm


cpdef long long index(int mine, int theirs, int tm, int to):
    """The place in the value table of the position seen by the seat to move."""
    return <long long>pair_index(tm, to) * NBOARDS + POW3[mine] + 2 * POW3[theirs]


cdef inline double _after(double[::1] V, int mine, int theirs, int tm, int to, int cell):
    """The mover's value once a token of the mover (``mine``) or of the other seat (``theirs``)
    has just filled ``cell``: its tris (RULES.md "Tris"), then the end or the other seat's turn."""
    cdef int owner_mine = (mine >> cell) & 1
    cdef int m = mine if owner_mine else theirs
    cdef int gone = 0
    cdef int tris = 0
    cdef int left, given
    if (m & ROWM[cell]) == ROWM[cell]:
        gone = ROWM[cell]
        tris = 1
    if (m & COLM[cell]) == COLM[cell]:
        gone |= COLM[cell]
        tris += 1
    if tris:
        m &= ~gone
        left = NTROPHIES - tm - to
        given = tris if tris <= left else left
        if owner_mine:
            mine = m
            tm += given
        else:
            theirs = m
            to += given
        if tm + to >= NTROPHIES:
            if tm > to:
                return 1.0
            if tm == to:
                return 0.5
            return 0.0
    return 1.0 - V[pair_index(to, tm) * NBOARDS + POW3[theirs] + 2 * POW3[mine]]


cdef double _bellman(double[::1] V, const int* numbers, int mine, int theirs, int tm, int to):
    """The right-hand side of the Bellman equation at a position seen by the mover."""
    cdef int filled = mine | theirs
    cdef int empty = (~filled) & 511
    cdef int d, i, f, t, owner_mine, b2, t2
    cdef double best, v, total = 0.0
    cdef double pass_value = 1.0 - V[pair_index(to, tm) * NBOARDS + POW3[theirs] + 2 * POW3[mine]]
    for d in range(1, 7):
        best = -1.0
        if d == 1:
            for i in range(NCELLS):
                if filled >> i & 1:
                    if mine >> i & 1:
                        v = 1.0 - V[pair_index(to, tm) * NBOARDS + POW3[theirs] + 2 * POW3[mine & ~(1 << i)]]
                    else:
                        v = 1.0 - V[pair_index(to, tm) * NBOARDS + POW3[theirs & ~(1 << i)] + 2 * POW3[mine]]
                    if v > best:
                        best = v
        elif d == 2:
            if filled != 0 and empty != 0:
                for f in range(NCELLS):
                    if not (filled >> f & 1):
                        continue
                    owner_mine = mine >> f & 1
                    for t in range(NCELLS):
                        if not (empty >> t & 1):
                            continue
                        if owner_mine:
                            v = _after(V, (mine & ~(1 << f)) | (1 << t), theirs, tm, to, t)
                        else:
                            v = _after(V, mine, (theirs & ~(1 << f)) | (1 << t), tm, to, t)
                        if v > best:
                            best = v
        elif POPC[mine] < NTOKENS:
            for i in range(NCELLS):
                if numbers[i] == d and (empty >> i & 1):
                    v = _after(V, mine | (1 << i), theirs, tm, to, i)
                    if v > best:
                        best = v
        if best < 0.0:  # nothing possible with this die: the turn passes
            best = pass_value
        total += best
    return total / 6.0


def bellman(double[::1] V, numbers, int mine, int theirs, int tm, int to):
    """The right-hand side of the Bellman equation at one position (for tests and polishing)."""
    cdef int nums[NCELLS]
    for i in range(NCELLS):
        nums[i] = numbers[i]
    return _bellman(V, nums, mine, theirs, tm, to)


def solve(double[::1] V, numbers, double tol, progress=None):
    """Gauss-Seidel value iteration on ``V`` (``SIZE`` doubles, the starting values, updated in
    place) for the 3x3 board ``numbers`` (nine die numbers 3-6, row by row), level by level of
    trophies given, until a sweep of a level changes no value by ``tol`` or more. ``progress``
    (optional) is called after every sweep with ``(level, sweep, largest_change)``; levels go from
    9 to 0 trophies given. Returns the number of sweeps over all levels."""
    if V.shape[0] != NBOARDS * NPAIRS:
        raise ValueError(f"the value table holds {NBOARDS * NPAIRS} values, not {V.shape[0]}")
    cdef int nums[NCELLS]
    cdef int i
    for i in range(NCELLS):
        nums[i] = numbers[i]
        if not 3 <= nums[i] <= 6:
            raise ValueError(f"a cell number is 3 to 6, not {nums[i]}")
    # the boards a position can have: at most five tokens of each seat
    cdef int nb = 0
    cdef int mines[NBOARDS]
    cdef int theirss[NBOARDS]
    cdef int mine, theirs
    for mine in range(512):
        if POPC[mine] > NTOKENS:
            continue
        for theirs in range(512):
            if theirs & mine or POPC[theirs] > NTOKENS:
                continue
            mines[nb] = mine
            theirss[nb] = theirs
            nb += 1
    cdef int level, tm, to, k, sweep, sweeps = 0
    cdef long long base, j
    cdef double delta, v, old, diff
    for level in range(NTROPHIES - 1, -1, -1):
        sweep = 0
        while True:
            delta = 0.0
            for tm in range(level + 1):
                to = level - tm
                base = <long long>pair_index(tm, to) * NBOARDS
                for k in range(nb):
                    mine = mines[k]
                    theirs = theirss[k]
                    j = base + POW3[mine] + 2 * POW3[theirs]
                    v = _bellman(V, nums, mine, theirs, tm, to)
                    old = V[j]
                    V[j] = v
                    diff = v - old if v > old else old - v
                    if diff > delta:
                        delta = diff
            sweep += 1
            sweeps += 1
            if progress is not None:
                progress(level, sweep, delta)
            if delta < tol:
                break
    return sweeps

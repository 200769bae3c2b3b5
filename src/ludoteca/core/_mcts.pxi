# The compiled Monte-Carlo tree search (Cython include file): the algorithm of
# ``ludoteca.agents.mcts`` for perfect-information games, on a game's compiled engine.
#
# A game's ``_compiled.pyx`` includes it *after* its rules (``include "../../core/_mcts.pxi"``) and
# after ``from ludoteca.core._rng cimport _next, _below`` (core/_rng.pxd); it uses only the C-level
# interface every compiled engine defines (docs/compiled.md):
#
#     MAX_ACTIONS, Gm, St, _player, _legal, _chance, _apply, _returns, _random_action
#     (optional) _value, passed to _search as a function pointer (NULL: even shares at a cut-off)
#
# ``_search`` returns the action; ``_search_root`` is the same search that may also roll out with
# a game's policy, limit the root to given actions (a game's pruning) and hand back the root's
# per-action visits and value sums (TRI adds them up over determinized worlds).
#
# The search (UCT, as agents/mcts.py):
# * every decision node maximises the value of the player who moves there; a simulation backs up
#   the whole returns vector and each edge keeps the value of the player who chose it;
# * chance nodes are never chosen: each simulation samples the outcome with ``_chance`` (the
#   engine's probabilities) and follows (or grows) the child of that outcome;
# * a node is expanded one untried action per simulation, picked uniformly among the untried ones;
#   a fully expanded node picks the child maximising ``w/n + c*sqrt(ln N / n)``;
# * rollouts are uniformly random (``_random_action``) for at most ``cap`` actions (chance
#   included); a rollout cut short is scored by ``_value`` (even shares without one);
# * the search runs ``iterations`` simulations and plays the most visited action (ties: the better
#   mean, then the smaller id). One seed fixes the whole search (SplitMix64, core/_rng.pxd).
#
# Nodes live in one C array (a pool grown with realloc, indices instead of pointers), freed when
# the search ends; no Python object is touched inside the loop (it runs without the GIL).

from libc.stdlib cimport malloc, realloc, free, qsort
from libc.math cimport log, sqrt

ctypedef void (*_ValueFn)(const Gm* g, const St* s, double* out) noexcept nogil
ctypedef int (*_PolicyFn)(const Gm* g, const St* s, uint64_t* rng) noexcept nogil

cdef enum:
    _MCTS_MAX_SEATS = 16        # the largest player count a search backs up
    _MCTS_NO_MEMORY = -1        # _search's answers that are not actions
    _MCTS_NOT_DECISION = -2


cdef struct _Node:
    int action        # the edge that leads here (a decision action or a chance outcome)
    int n             # visits of that edge
    double w          # sum of the returns of the player who chose the edge (chance: unused)
    int child         # first child (-1: none); children form a list through ``sibling``
    int sibling
    int n_legal       # decision node: its number of legal actions (-1: not listed yet)
    int n_kids        # children grown so far


cdef struct _Tree:
    _Node* nodes
    int size
    int cap
    int* path          # nodes of the current simulation (root excluded) ...
    int* owner         # ... and the seat who chose each edge (-1 after chance)
    int path_cap
    int* legal         # scratch: MAX_ACTIONS actions
    int* kids          # scratch: MAX_ACTIONS actions


cdef int _tree_node(_Tree* t, int action) noexcept nogil:
    """A fresh node (its index), or -1 when memory runs out."""
    cdef _Node* grown
    cdef int cap
    if t.size == t.cap:
        cap = t.cap * 2
        grown = <_Node*>realloc(t.nodes, cap * sizeof(_Node))
        if grown == NULL:
            return -1
        t.nodes = grown
        t.cap = cap
    cdef int i = t.size
    t.size += 1
    cdef _Node* nd = &t.nodes[i]
    nd.action = action
    nd.n = 0
    nd.w = 0.0
    nd.child = -1
    nd.sibling = -1
    nd.n_legal = -1
    nd.n_kids = 0
    return i


cdef int _tree_push(_Tree* t, int depth, int node, int owner) noexcept nogil:
    """Record step ``depth`` of the path; 0, or -1 when memory runs out."""
    cdef int* p
    cdef int* o
    cdef int cap
    if depth == t.path_cap:
        cap = t.path_cap * 2
        p = <int*>realloc(t.path, cap * sizeof(int))
        if p == NULL:
            return -1
        t.path = p
        o = <int*>realloc(t.owner, cap * sizeof(int))
        if o == NULL:
            return -1
        t.owner = o
        t.path_cap = cap
    t.path[depth] = node
    t.owner[depth] = owner
    return 0


cdef int _cmp_int(const void* a, const void* b) noexcept nogil:
    cdef int x = (<const int*>a)[0]
    cdef int y = (<const int*>b)[0]
    return (x > y) - (x < y)


cdef int _untried(_Tree* t, int node, int k, uint64_t* rng) noexcept nogil:
    """A uniformly random action among the ``k`` legal ones (in ``t.legal``) that ``node`` has no
    child for yet."""
    cdef _Node* nd = &t.nodes[node]
    cdef int m = nd.n_kids
    cdef int j, lo, hi, mid, a, found
    if m == 0:
        return t.legal[_below(rng, k)]
    j = 0
    cdef int ch = nd.child
    while ch >= 0:
        t.kids[j] = t.nodes[ch].action
        j += 1
        ch = t.nodes[ch].sibling
    qsort(t.kids, m, sizeof(int), _cmp_int)
    cdef int r = _below(rng, k - m)     # the r-th untried action in legal order
    for j in range(k):
        a = t.legal[j]
        lo = 0
        hi = m
        found = 0
        while lo < hi:
            mid = (lo + hi) >> 1
            if t.kids[mid] < a:
                lo = mid + 1
            elif t.kids[mid] > a:
                hi = mid
            else:
                found = 1
                break
        if not found:
            if r == 0:
                return a
            r -= 1
    return t.legal[0]   # not reached: fewer children than legal actions


cdef int _search(const Gm* g, const St* start, int players, long long iterations, double c, int cap,
                 uint64_t seed, _ValueFn value, long long* stats) noexcept nogil:
    """UCT from ``start`` (a decision node) for ``iterations`` simulations: the most visited action,
    or _MCTS_NO_MEMORY / _MCTS_NOT_DECISION. ``stats`` (3 numbers) receives the simulations run,
    the nodes grown and the rollout actions played."""
    return _search_root(g, start, players, iterations, c, cap, seed, value, stats, NULL, NULL, 0, NULL, NULL, NULL,
                        NULL)


cdef int _search_root(const Gm* g, const St* start, int players, long long iterations, double c, int cap,
                      uint64_t seed, _ValueFn value, long long* stats, _PolicyFn policy,
                      const int* root_only, int n_root_only,
                      int* actions, long long* visits, double* sums, int* count) noexcept nogil:
    """:func:`_search` (the same search, random numbers and answer when ``root_only`` and
    ``actions`` are NULL), with three additions:

    * ``policy`` (not NULL): rollouts play its actions (a game's light policy; at a chance node it
      must sample an outcome) instead of ``_random_action``'s;
    * ``root_only`` (not NULL): the root considers only these ``n_root_only`` legal actions (a
      game's pruning by its cheap ranking, as ``mcts``'s ``prune``; every deeper node keeps its
      whole legal list);
    * ``actions`` (not NULL): the root's statistics are handed back: ``count[0]`` root children,
      and for each one its action, visits and sum of the returns of the seat to move
      (``actions``, ``visits``, ``sums``: room for MAX_ACTIONS each). A search on several
      determinizations of a hidden position (TRI's ``compiled.search``) adds these up per action
      over its worlds."""
    stats[0] = stats[1] = stats[2] = 0
    if actions != NULL:
        count[0] = 0
    if _player(g, start) < 0 or players < 1 or players > _MCTS_MAX_SEATS:
        return _MCTS_NOT_DECISION
    cdef _Tree t
    t.cap = 1024
    t.path_cap = 256
    t.size = 0
    t.nodes = <_Node*>malloc(t.cap * sizeof(_Node))
    t.path = <int*>malloc(t.path_cap * sizeof(int))
    t.owner = <int*>malloc(t.path_cap * sizeof(int))
    t.legal = <int*>malloc(MAX_ACTIONS * sizeof(int))
    t.kids = <int*>malloc(MAX_ACTIONS * sizeof(int))
    cdef int answer = _MCTS_NO_MEMORY
    cdef int failed = 0
    cdef uint64_t rng = seed
    cdef St s
    cdef double ret[_MCTS_MAX_SEATS]
    cdef long long it = 0, rollout_actions = 0
    cdef int node, cur, a, ch, best, depth, k, steps, q, owner, root = -1
    cdef double logn, v, best_v, mean, best_mean = 0.0
    cdef _Node* nd
    if t.nodes != NULL and t.path != NULL and t.owner != NULL and t.legal != NULL and t.kids != NULL:
        root = _tree_node(&t, -1)
    failed = root < 0
    while not failed and it < iterations:
        s = start[0]
        node = root
        depth = 0
        # --- selection and expansion
        while True:
            cur = _player(g, &s)
            if cur == -4:                               # terminal inside the tree
                _returns(g, &s, ret)
                break
            if cur < 0:                                 # chance: sample, follow or grow the child
                a = _chance(g, &s, &rng)
                ch = t.nodes[node].child
                while ch >= 0 and t.nodes[ch].action != a:
                    ch = t.nodes[ch].sibling
                if ch < 0:
                    ch = _tree_node(&t, a)
                    if ch < 0:
                        failed = 1
                        break
                    nd = &t.nodes[node]
                    t.nodes[ch].sibling = nd.child
                    nd.child = ch
                    nd.n_kids += 1
                _apply(g, &s, a)
                if _tree_push(&t, depth, ch, -1) < 0:
                    failed = 1
                    break
                depth += 1
                node = ch
                continue
            nd = &t.nodes[node]
            if nd.n_legal < 0 or nd.n_kids < nd.n_legal:  # expand one untried action, then roll out
                if node == root and root_only != NULL:
                    for k in range(n_root_only):
                        t.legal[k] = root_only[k]
                    k = n_root_only
                else:
                    k = _legal(g, &s, t.legal)
                nd.n_legal = k
                a = _untried(&t, node, k, &rng)
                ch = _tree_node(&t, a)
                if ch < 0:
                    failed = 1
                    break
                nd = &t.nodes[node]                     # the pool may have moved
                t.nodes[ch].sibling = nd.child
                nd.child = ch
                nd.n_kids += 1
                _apply(g, &s, a)
                if _tree_push(&t, depth, ch, cur) < 0:
                    failed = 1
                    break
                depth += 1
                # rollout: random actions (chance included) for at most ``cap`` actions
                steps = 0
                while True:
                    q = _player(g, &s)
                    if q == -4:
                        _returns(g, &s, ret)
                        break
                    if steps >= cap:
                        if value != NULL:
                            value(g, &s, ret)
                        else:
                            for q in range(players):
                                ret[q] = 1.0 / players
                        break
                    if policy != NULL:
                        _apply(g, &s, policy(g, &s, &rng))
                    else:
                        _apply(g, &s, _random_action(g, &s, &rng))
                    steps += 1
                rollout_actions += steps
                break
            # UCT over the children (every legal action has one)
            logn = log(<double>nd.n) if nd.n > 1 else 0.0
            best = -1
            best_v = -1e300
            ch = nd.child
            while ch >= 0:
                v = t.nodes[ch].w / t.nodes[ch].n + c * sqrt(logn / t.nodes[ch].n)
                if v > best_v:
                    best_v = v
                    best = ch
                ch = t.nodes[ch].sibling
            _apply(g, &s, t.nodes[best].action)
            if _tree_push(&t, depth, best, cur) < 0:
                failed = 1
                break
            depth += 1
            node = best
        if failed:
            break
        # --- backup: the whole returns vector, each edge keeps its chooser's value
        t.nodes[root].n += 1
        for k in range(depth):
            nd = &t.nodes[t.path[k]]
            nd.n += 1
            owner = t.owner[k]
            if owner >= 0:
                nd.w += ret[owner]
        it += 1
    if not failed:
        # the most visited action (ties: the better mean, then the smaller id)
        best = -1
        ch = t.nodes[root].child
        while ch >= 0:
            nd = &t.nodes[ch]
            mean = nd.w / nd.n if nd.n else 0.0
            if best < 0 or nd.n > t.nodes[best].n or (nd.n == t.nodes[best].n and (
                    mean > best_mean or (mean == best_mean and nd.action < t.nodes[best].action))):
                best = ch
                best_mean = mean
            ch = nd.sibling
        if actions != NULL:                             # the root's statistics, for the caller
            k = 0
            ch = t.nodes[root].child
            while ch >= 0:
                actions[k] = t.nodes[ch].action
                visits[k] = t.nodes[ch].n
                sums[k] = t.nodes[ch].w
                k += 1
                ch = t.nodes[ch].sibling
            count[0] = k
        if best >= 0:
            answer = t.nodes[best].action
        elif root_only != NULL and n_root_only > 0:     # no simulation asked for: the first action
            answer = root_only[0]
        else:
            k = _legal(g, start, t.legal)
            answer = t.legal[0] if k else _MCTS_NOT_DECISION
    stats[0] = it
    stats[1] = t.size
    stats[2] = rollout_actions
    free(t.nodes)
    free(t.path)
    free(t.owner)
    free(t.legal)
    free(t.kids)
    return answer

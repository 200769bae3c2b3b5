# TRI's information-set Monte-Carlo tree search in C (Cython include file): the search of every TRI
# decision of ``strong`` — a position that hides a battle secret from the seat to move
# (``TriState.worlds(seat)`` is not None: a card choice), without reading that secret, and a position
# hiding nothing from it (one world: the position), whose tree still lets no seat see another's
# secret. ``_compiled.pyx`` includes it after ``core/_mcts.pxi`` (it reuses that file's node pool,
# ``_Node`` / ``_Tree`` / ``_tree_node`` / ``_untried``) and reaches it through ``CState.ismcts``;
# ``compiled.search`` calls it for every decision.
#
# The algorithm is ``agents/mcts.py``'s for hidden information (Cowling, Powley & Whitehouse 2012,
# information-set MCTS with one tree per seat):
#
# * every simulation starts from a fresh determinization: one of the seat's worlds (the hidden
#   battle values: attacker's roll, defender's roll, attacker's card), drawn by its weight — the
#   worlds and weights of ``TriState.worlds(seat)``, the sampler of the Python search;
# * each seat grows its own tree, whose first edge is what it alone knows of the world (its own roll,
#   the attacker its card: ``_is_private``; one edge for the searching seat, whose worlds differ only
#   in what it cannot see; the Python search has no such edge, so there another seat's choices
#   ignore its own roll), and whose other edges carry only what that seat observes of an action
#   (``TriState.action_label``): another seat's battle roll or the attacker's secret card is one
#   edge ``_HIDDEN`` whatever its value, so a seat's choice is one node for every value it cannot
#   see, and its statistics are the average over them (no seat, in the search, sees a secret of
#   another: nobody best-responds to a card it could not know);
# * the defender's card is public; the reveal that it completes (both rolls and the attacker's card)
#   is a further edge in every seat's tree, keyed by the revealed values, so every node of a tree
#   holds positions with the same legal actions (hands are public; what follows a battle is
#   known once it is revealed);
# * decisions: the seat to move expands one untried action of its own node — with ``ordered`` the
#   first untried one of the node's list (best first by the cheap ranking where pruned; the card
#   model's card first at a card choice: ``_is_first_untried``), as ``mcts`` expands its candidates
#   best first; without it one at random (``_untried``) — else picks the child maximising
#   ``w/n + c*sqrt(ln N / n)``; chance is sampled
#   with the engine's probabilities; every seat's tree follows (or grows) the edge it observes;
# * rollouts, pruning and the leaf evaluation are the compiled search's (``_policy``, ``g.prune_k``,
#   ``_value``); ``g.cards_by_model`` (optional) makes card choices below the root play the card
#   model's card; the root keeps every legal action;
# * after ``iterations`` simulations the most visited action of the seat's root is played (ties: the
#   better mean, then the smaller id). One seed fixes the whole search (SplitMix64).
#
# Nothing here reads a hidden value before a world has set it: the position passed in is itself a
# world (``compiled.search`` builds it from ``worlds(seat)``), and every simulation overwrites the
# three battle secrets with its world's before the first read.

cdef enum:
    _HIDDEN = -1            # the label of an action a seat does not observe
    _REVEAL0 = 1000000      # reveal edges: _REVEAL0 + (attacker roll * 8 + defender roll) * 8 + card index


cdef inline int _is_label(const St* s, int a, int q) noexcept nogil:
    """What seat ``q`` observes of ``a`` played in ``s`` (before it is applied): the action itself,
    or ``_HIDDEN`` for another seat's battle roll or the attacker's card (``TriState.action_label``;
    the reveal is a separate edge, :func:`_is_reveal`)."""
    if s.phase != BATTLE:
        return a
    if s.b_step == A_ROLL or s.b_step == A_CARD:
        return a if q == s.b_att else _HIDDEN
    if s.b_step == D_ROLL:
        return a if q == s.b_def else _HIDDEN
    return a


cdef inline int _is_private(const St* s, int q) noexcept nogil:
    """What seat ``q`` knows of the battle secrets of ``s`` (a world at the root): its own roll, and
    the attacker its card; 0 outside a battle. The first edge of each seat's tree, so that another
    seat's choices in the search depend on what it knows (its roll) and on nothing else."""
    if s.phase != BATTLE:
        return 0
    if q == s.b_att:
        return 1 + s.b_aroll * 8 + (CARD_IDX[s.b_acard] + 1 if s.b_acard >= 0 else 0)
    if q == s.b_def:
        return 64 + s.b_droll
    return 0


cdef inline int _is_reveal(const St* s) noexcept nogil:
    """The label of the reveal completed by the defender's card in ``s`` (before it is applied)."""
    return _REVEAL0 + (s.b_aroll * 8 + s.b_droll) * 8 + CARD_IDX[s.b_acard]


cdef int _is_child(_Tree* t, int node, int label) noexcept nogil:
    """The child of ``node`` along ``label``, grown when missing (-1: out of memory)."""
    cdef int ch = t.nodes[node].child
    while ch >= 0 and t.nodes[ch].action != label:
        ch = t.nodes[ch].sibling
    if ch >= 0:
        return ch
    ch = _tree_node(t, label)
    if ch < 0:
        return -1
    t.nodes[ch].sibling = t.nodes[node].child
    t.nodes[node].child = ch
    t.nodes[node].n_kids += 1
    return ch


cdef int _is_first_untried(_Tree* t, int node, const St* s, const Gm* g, int k) noexcept nogil:
    """The first of the ``k`` actions in ``t.legal`` (the node's list: best first when pruned) that
    ``node`` has no child for; at a card choice the card model's card comes first (as ``mcts``
    expands the cheap ranking's best first)."""
    cdef int j, a, ch, m = -1
    if s.phase == BATTLE and (s.b_step == A_CARD or s.b_step == D_CARD):
        m = _model_card(g, s)
        if m >= 0:
            ch = t.nodes[node].child
            while ch >= 0 and t.nodes[ch].action != m:
                ch = t.nodes[ch].sibling
            if ch < 0:
                for j in range(k):
                    if t.legal[j] == m:
                        return m
    for j in range(k):
        a = t.legal[j]
        ch = t.nodes[node].child
        while ch >= 0 and t.nodes[ch].action != a:
            ch = t.nodes[ch].sibling
        if ch < 0:
            return a
    return t.legal[0]


cdef int _is_grow(int** path, int** owner, int* cap, int players) noexcept nogil:
    """Double the room of the per-seat paths and of the owners (0, or -1 when memory runs out)."""
    cdef int q
    cdef int* p
    cdef int grown = cap[0] * 2
    for q in range(players):
        p = <int*>realloc(path[q], grown * sizeof(int))
        if p == NULL:
            return -1
        path[q] = p
    p = <int*>realloc(owner[0], grown * sizeof(int))
    if p == NULL:
        return -1
    owner[0] = p
    cap[0] = grown
    return 0


cdef int _ismcts(const Gm* g, const St* start, const int* secrets, const double* weights, int n_worlds,
                 long long iterations, double c, int cap, uint64_t seed, _ValueFn value, _PolicyFn policy,
                 long long* stats, int ordered) noexcept nogil:
    """Information-set MCTS for the seat to move in ``start`` over its ``n_worlds`` worlds: world
    ``k`` sets the attacker's roll, the defender's roll and the attacker's card to ``secrets[3k ..
    3k+2]`` (the engine's encoding: 0 / -1 for none) and is drawn with weight ``weights[k]``. The
    action played, or _MCTS_NO_MEMORY / _MCTS_NOT_DECISION; ``stats`` as :func:`_search`."""
    stats[0] = stats[1] = stats[2] = 0
    cdef int seat = _player(g, start)
    cdef int players = g.players
    if seat < 0 or n_worlds < 1 or players > MAXP:
        return _MCTS_NOT_DECISION
    cdef Gm g0 = g[0]                                  # the root keeps every legal action
    g0.cards_by_model = 0
    cdef _Tree t
    t.cap = 1024
    t.path_cap = 0
    t.size = 0
    t.path = NULL
    t.owner = NULL
    t.nodes = <_Node*>malloc(t.cap * sizeof(_Node))
    t.legal = <int*>malloc(MAX_ACTIONS * sizeof(int))
    t.kids = <int*>malloc(MAX_ACTIONS * sizeof(int))
    cdef int* root_legal = <int*>malloc(MAX_ACTIONS * sizeof(int))
    cdef int* path[MAXP]
    cdef int* owner = <int*>malloc(256 * sizeof(int))
    cdef int path_cap = 256
    cdef int top[MAXP]                                  # each seat's tree
    cdef int node[MAXP]
    cdef int q, k, failed = 0, n_root = 0, root = -1    # root: the seat's own node, below its first edge
    for q in range(MAXP):
        path[q] = NULL
    for q in range(players):
        path[q] = <int*>malloc(path_cap * sizeof(int))
        if path[q] == NULL:
            failed = 1
    if t.nodes == NULL or t.legal == NULL or t.kids == NULL or root_legal == NULL or owner == NULL:
        failed = 1
    for q in range(players):
        if not failed:
            top[q] = _tree_node(&t, -1)
            failed = top[q] < 0
    cdef double total = 0.0
    for k in range(n_worlds):
        total += weights[k]
    cdef St s = start[0]
    s.b_aroll = secrets[0]
    s.b_droll = secrets[1]
    s.b_acard = secrets[2]
    if not failed:
        n_root = _legal(&g0, &s, root_legal)
        root = _is_child(&t, top[seat], _is_private(&s, seat))
        failed = root < 0
    cdef int answer = _MCTS_NO_MEMORY
    cdef uint64_t rng = seed
    cdef double ret[MAXP]
    cdef long long it = 0, rollout_actions = 0
    cdef int cur, a, ch, best, depth, steps, expanded, reveal, label, w, nd_i
    cdef double x, acc, logn, v, best_v, mean, best_mean = 0.0
    cdef _Node* nd
    while not failed and it < iterations:
        # a fresh determinization: a world drawn by weight (as agents/mcts.py draws its worlds)
        x = (<double>(_next(&rng) >> 11) * (1.0 / 9007199254740992.0)) * total
        acc = 0.0
        w = n_worlds - 1
        for k in range(n_worlds - 1):
            acc += weights[k]
            if x < acc:
                w = k
                break
        s = start[0]
        s.b_aroll = secrets[3 * w]
        s.b_droll = secrets[3 * w + 1]
        s.b_acard = secrets[3 * w + 2]
        for q in range(players):                              # each seat's first edge: what it knows
            node[q] = _is_child(&t, top[q], _is_private(&s, q))
            if node[q] < 0:
                failed = 1
                break
            path[q][0] = node[q]
        if failed:
            break
        owner[0] = -1
        depth = 1
        expanded = 0
        while True:
            cur = _player(g, &s)
            if cur == CUR_TERMINAL:
                _returns(g, &s, ret)
                break
            if cur < 0:
                a = _chance(g, &s, &rng)
            else:
                nd_i = node[cur]
                nd = &t.nodes[nd_i]
                if nd.n_legal < 0 or nd.n_kids < nd.n_legal:   # expand an untried action, then roll out
                    if nd_i == root:
                        for k in range(n_root):
                            t.legal[k] = root_legal[k]
                        k = n_root
                    else:
                        k = _legal(g, &s, t.legal)
                    nd.n_legal = k
                    if ordered:
                        a = _is_first_untried(&t, nd_i, &s, g, k)
                    else:
                        a = _untried(&t, nd_i, k, &rng)
                    expanded = 1
                else:                                          # UCT over the seat's own children
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
                    a = t.nodes[best].action
            reveal = s.phase == BATTLE and s.b_step == D_CARD
            if depth + 2 > path_cap and _is_grow(path, &owner, &path_cap, players) < 0:
                failed = 1
                break
            for q in range(players):                           # every seat follows what it observes
                label = a if q == cur else _is_label(&s, a, q)
                ch = _is_child(&t, node[q], label)
                if ch < 0:
                    failed = 1
                    break
                node[q] = ch
                path[q][depth] = ch
            if failed:
                break
            owner[depth] = cur if cur >= 0 else -1
            depth += 1
            if reveal:
                label = _is_reveal(&s)
            _apply(g, &s, a)
            if reveal:                                         # both rolls and the card, public now
                for q in range(players):
                    ch = _is_child(&t, node[q], label)
                    if ch < 0:
                        failed = 1
                        break
                    node[q] = ch
                    path[q][depth] = ch
                if failed:
                    break
                owner[depth] = -1
                depth += 1
            if expanded:                                       # rollout, at most ``cap`` actions
                steps = 0
                while True:
                    cur = _player(g, &s)
                    if cur == CUR_TERMINAL:
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
        if failed:
            break
        for q in range(players):                               # backup in every seat's tree
            t.nodes[top[q]].n += 1
            for k in range(depth):
                nd = &t.nodes[path[q][k]]
                nd.n += 1
                if owner[k] >= 0:
                    nd.w += ret[owner[k]]
        it += 1
    if not failed:
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
        if best >= 0:
            answer = t.nodes[best].action
        elif n_root > 0:                                       # no simulation asked for
            answer = root_legal[0]
        else:
            answer = _MCTS_NOT_DECISION
    stats[0] = it
    stats[1] = t.size
    stats[2] = rollout_actions
    free(t.nodes)
    free(t.legal)
    free(t.kids)
    free(root_legal)
    free(owner)
    for q in range(MAXP):
        free(path[q])
    return answer

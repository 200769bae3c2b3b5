"""Announcements and the last move, end to end in Chromium.

A TOHM table (the human against a random AI) is played to its end by clicking the board while a
spectator with ``prefers-reduced-motion: reduce`` watches. Events the game announces (a tris, the
end) show for a moment over the board with the log's own words, and stay in the log; for the
spectator the announcement does not animate. The log's newest line and the last move's cell are
highlighted.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.core.game import Game, State
from ludoteca.core.registry import load_game
from ludoteca.web.launch import running_server
from ludoteca.web.lobby.lobby import new_table_id
from ludoteca.web.master.tables import hash_token
from ludoteca.web.repository.store import AppendRequest, Repository, SeatData, TableData, database_url
from tests.browser.test_browser_play import STATE_JS, click_move, create_via_lobby, state

WAIT_MS = 60_000
"""How long a page may take to show what is awaited: generous, since a busy machine slows the
browser, the server and the hourglass's turn alike (a wait ends as soon as its condition holds)."""


def wait_state(page: Any, condition: str, arg: Any = None) -> None:
    page.wait_for_function(f"(arg) => {{ const s = ({STATE_JS})(); return s && ({condition}); }}", arg=arg,
                           timeout=WAIT_MS)


def wait_seq_above(page: Any, seq: int) -> None:
    wait_state(page, "s.seq > arg", seq)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# every text the announcement shows, as it appears (announcements last 3 s: a move may hide one)
WATCH_JS = """() => {
  window.__announced = [];
  let seen = null;
  new MutationObserver(() => {
    const a = document.getElementById("announce");
    if (!a || !a.classList.contains("show") || a.dataset.n === seen) return;
    seen = a.dataset.n;
    for (const line of a.querySelectorAll(".announce-line")) window.__announced.push(line.textContent);
  }).observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
}"""


def open_page(browser: Any, **options: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(WAIT_MS)
    return ctx, page, errors


def announced(page: Any) -> list[str]:
    return list(page.evaluate("window.__announced"))


def log_lines(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#log li").all_inner_texts()]


def test_tohm_announces_tris_and_the_end_and_marks_the_last_move(server: str, browser: Any,
                                                                  artifacts: Path) -> None:
    ctx, page, errors = open_page(browser)
    url = create_via_lobby(page, server, "tohm", ["open", "ai:random"], "Ann", {"turn_limit": 40})
    page.evaluate(WATCH_JS)
    ctx_s, watcher, errors_s = open_page(browser, reduced_motion="reduce")
    watcher.goto(url)
    wait_state(watcher, "s.status === 'playing'")
    watcher.evaluate(WATCH_JS)
    assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is False
    assert watcher.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is True

    rng = random.Random(11)
    checked_last_move = False
    for _ in range(500):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        if s["status"] != "playing":
            break
        placing = page.locator("#board .cell.legal:not(.move-from)").count() > 0 and s["phase"] != "roll"
        click_move(page, "tohm", rng)
        wait_seq_above(page, s["seq"])
        # the log's newest line is highlighted, and only that one
        assert page.locator("#log li.last-entry").count() == 1
        assert page.locator("#log li").last.get_attribute("class").split().count("last-entry") == 1
        if placing and not checked_last_move:
            # the cell just played is marked on the board (the AI may have played since: some cell is)
            page.wait_for_function("() => document.querySelectorAll('#board .cell.last-move').length > 0")
            checked_last_move = True
            page.screenshot(path=str(artifacts / "announce-last-move.png"))
        if any(t.startswith("tris for") for t in announced(page)) and not (artifacts / "announce-tris.png").exists():
            page.screenshot(path=str(artifacts / "announce-tris.png"))
    else:
        raise AssertionError("the game did not end")
    assert checked_last_move

    for p in (page, watcher):
        wait_state(p, "s.status === 'over'")
        # the end is announced with the log's own words, and the log keeps it
        p.wait_for_function("() => (window.__announced || []).some((t) => t.startsWith('game over'))")
        end = [t for t in announced(p) if t.startswith("game over")][-1]
        assert any(end in line for line in log_lines(p))
        # every tris of the log was announced to the player (a tris is an announced kind of TOHM)
    tris_log = [part for line in log_lines(page) for part in line.split(" · ") if part.startswith("tris for")]
    tris_shown = [t for t in announced(page) if t.startswith("tris for")]
    assert sorted(tris_shown) == sorted(tris_log)
    # a roll is not announced: only the announced kinds are
    assert all(t.startswith(("tris for", "game over")) for t in announced(page) + announced(watcher))

    box = page.locator("#announce")
    assert box.is_visible() and "game over" in box.inner_text()
    assert page.evaluate("getComputedStyle(document.getElementById('announce')).transitionDuration") != "0s"
    page.screenshot(path=str(artifacts / "announce-end.png"))
    # reduced motion: the announcement appears without a transition
    assert watcher.locator("#announce").is_visible()
    durations = watcher.evaluate("getComputedStyle(document.getElementById('announce')).transitionDuration")
    assert set(d.strip() for d in durations.split(",")) == {"0s"}
    watcher.screenshot(path=str(artifacts / "announce-reduced-motion.png"))
    # it goes away after a few seconds (the log keeps the line)
    page.wait_for_function("() => !document.getElementById('announce').classList.contains('show')", timeout=WAIT_MS)
    box.wait_for(state="hidden", timeout=WAIT_MS)  # once its fade-out ends
    assert errors == [] and errors_s == []
    ctx.close()
    ctx_s.close()


# --- every kind of announcement, on tables stored at the very move that makes it ---------
#
# A seeded game is played by the engine until the human (seat 0, "Ann") is to move where a legal
# move makes the event; the table is stored with that record (repository API, as the server stores
# tables) and served by a real server; Ann opens it and plays the move by clicking the board. The
# announcement is watched as it appears, with the log's own words, in the page's language.

Finder = Callable[[State], list[dict[str, Any]] | None]


def search(game: str, players: int, options: dict[str, Any], pick: Finder, seeds: range,
           steps: int = 1500) -> tuple[Game, list[tuple[int | None, dict[str, Any]]], list[dict[str, Any]]]:
    """Seeded random games until ``pick`` (asked whenever seat 0 is to move) names the moves to make."""
    g = load_game(game, players=players, **options)
    for seed in seeds:
        rng = random.Random(seed)
        st = g.new_initial_state()
        record: list[tuple[int | None, dict[str, Any]]] = []
        for _ in range(steps):
            if st.is_terminal():
                break
            seat: int | None
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
                seat = None
            else:
                seat = st.current_player()
                if seat == 0:
                    final = pick(st)
                    if final:
                        return g, record, final
                action = rng.choice(st.legal_actions())
            record.append((seat, st.action_to_json(action)))
            st.apply_action(action)
    raise AssertionError(f"no {game} position found for the scenario")


def after(st: State, *moves: dict[str, Any]) -> tuple[State, list[str]]:
    """The position after ``moves`` and the kinds of their events."""
    c = st.clone()
    seen: list[str] = []
    for m in moves:
        seen += [e.kind for e in c.apply_action(c.action_from_json(m))]
    return c, seen


def legal_json(st: State) -> list[dict[str, Any]]:
    return [st.action_to_json(a) for a in st.legal_actions()]


def tohm_tris(st: State) -> list[dict[str, Any]] | None:
    for a in legal_json(st):
        if "place" in a and "tris" in after(st, a)[1]:
            return [a]
    return None


def exactly_euro(st: State) -> list[dict[str, Any]] | None:
    for a in legal_json(st):
        if "coin" in a:
            kinds = after(st, a)[1]
            if "euro" in kinds and "new_round" in kinds and a["from"] != a["to"]:
                return [a]
    return None


def tri_battle_void(st: State) -> list[dict[str, Any]] | None:
    battle = st.observation(0).get("battle")
    if not battle or battle["step"] != "defender_card":
        return None
    for a in legal_json(st):
        c, kinds = after(st, a)
        if "battle" in kinds and c.observation(0).get("battle", {}) and c.current_player() == 0:
            voids = [v for v in legal_json(c) if "void" in v]
            if voids:
                return [a, voids[0]]
    return None


def single_target(st: State, a: dict[str, Any]) -> bool:
    """A placement or an expansion that is the only action on its triangle (one click plays it)."""
    kind = next(iter(a))
    if kind not in ("place", "expand"):
        return False
    targets = [b["teleport"]["to"] if "teleport" in b else next(iter(b.values())) for b in legal_json(st)]
    return targets.count(a[kind]) == 1


def tri_elimination(st: State) -> list[dict[str, Any]] | None:
    for a in legal_json(st):
        if single_target(st, a):
            kinds = after(st, a)[1]
            if "eliminated" in kinds and "elimination_income" in kinds:
                return [a]
    return None


def tri_income(st: State) -> list[dict[str, Any]] | None:
    """A move that ends the third round: the last player's turn, or the battle Ann defends in it."""
    def income(c: State) -> bool:
        return c.is_chance_node() and c.observation(None)["phase"] == "income_roll"

    for a in legal_json(st):
        if "card" not in a and not single_target(st, a):
            continue
        c, _ = after(st, a)
        if income(c):
            return [a]
        if not c.is_chance_node() and c.current_player() == 0:
            for v in legal_json(c):
                if "void" in v and income(after(c, v)[0]):
                    return [a, v]
    return None


def exagon_bonus(st: State) -> list[dict[str, Any]] | None:
    for a in legal_json(st):
        if "place" in a:
            c, kinds = after(st, a)
            if "bonus_earned" in kinds and not c.is_terminal() and {"stop": True} in legal_json(c):
                return [a, {"stop": True}]
    return None


def exagon_perfect(st: State) -> list[dict[str, Any]] | None:
    for a in legal_json(st):
        if "place" in a and "perfect_fit" in after(st, a)[1]:
            return [a]
    return None


def exagon_turn(st: State) -> list[dict[str, Any]] | None:
    obs = st.observation(None)
    return [{"wait": True}] if obs["phase"] == "turn" and obs["placed_this_turn"] == 0 else None


# a tile set where nearly everything fits (five sides of 5): a perfect fit comes soon
EASY_TILES = [{"id": i, "sides": [5, 5, 5, 5, 5, v], "star": 25 + (v if isinstance(v, int) else 0), "star_points": 3}
              for i, v in enumerate([1, 2, 3, 4, 6, 7, 8, 9, "J", "X"])] + [
    {"id": 10 + i, "sides": [5, 5, 5, 5, a, b], "star": 20 + a + b, "star_points": 3}
    for i, (a, b) in enumerate([(1, 2), (2, 1), (3, 4), (4, 3), (6, 7), (7, 6), (8, 9), (9, 8), (1, 3), (3, 1),
                                (2, 4), (4, 2), (6, 8), (8, 6), (7, 9), (9, 7), (1, 4), (4, 1), (2, 3), (3, 2)])]

# name: game, players, options, finder, seeds, the page's language, the announcements expected (prefixes)
SCENARIOS: dict[str, tuple[str, int, dict[str, Any], Finder, range, str, list[str]]] = {
    "tohm-tris": ("tohm", 2, {}, tohm_tris, range(1, 200), "it", ["tris per Ann"]),
    "exactly-euro": ("exactly", 2, {}, exactly_euro, range(1, 200), "en",
                     ["exactly 100¢: ", "new round: every coin goes back to the bank"]),
    "tri-battle-void": ("tri", 2, {}, tri_battle_void, range(1, 200), "it", ["battaglia in ", ", che torna vuoto"]),
    "tri-elimination": ("tri", 3, {}, tri_elimination, range(1, 300), "en",
                        [" is out", "new cards for the elimination: "]),
    "tri-income": ("tri", 2, {}, tri_income, range(1, 200), "en", ["new cards: the income die shows "]),
    "exagon-bonus": ("exagon", 2, {"clock": None}, exagon_bonus, range(1, 300), "en",
                     ["Ann earns ", "Ann loses "]),
    "exagon-perfect": ("exagon", 2, {"clock": None, "tiles": EASY_TILES}, exagon_perfect, range(189, 600), "en",
                       ["a perfect fit for Ann!", "game over"]),
    "exagon-hourglass": ("exagon", 2, {"clock": 10}, exagon_turn, range(1, 50), "en", ["Ann's hourglass ran out"]),
}


def store_tables(data: str, scenarios: dict[str, tuple[str, int, dict[str, Any], Finder, range]]
                 ) -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    """One stored table per scenario, as the server stores tables (name -> (table id, Ann's token, moves)):
    Ann (seat 0) is to move where the scenario's finder stopped; the other seats are people away."""
    repo = Repository(database_url(data, None))
    tables = {}
    try:
        for name, (game, players, options, finder, seeds) in scenarios.items():
            g, record, moves = search(game, players, options, finder, seeds)
            token = secrets.token_urlsafe(16)
            others = ["Bob", "Cy"][:players - 1]
            seats = [SeatData("human", None, "Ann", hash_token(token))] + [
                SeatData("human", None, other, hash_token(secrets.token_urlsafe(16))) for other in others]
            now = time.time()
            table = TableData(id=new_table_id(), game=game, options=g.record_options(), seed=1, status="playing",
                              created_at=now, updated_at=now, seats=seats)
            repo.create_table(table)
            repo.append_batch([AppendRequest(table_id=table.id, first_seq=0, actions=record)])
            tables[name] = (table.id, token, moves)
    finally:
        repo.close()
    return tables


def open_as_ann(page: Any, base: str, table_id: str, token: str) -> None:
    """Ann's browser: her seat's token is kept (as after she sat down), and the table opens."""
    page.goto(base + "/")
    page.evaluate("([id, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat: 0, token}))",
                  [table_id, token])
    page.goto(f"{base}/t/{table_id}")


@pytest.fixture(scope="module")
def stored() -> Iterator[tuple[str, str]]:
    """A server and its data folder: each test stores its scenario's table there when it begins, so
    the table is loaded (and an hourglass starts) only when the test opens it, however long the
    tests before it took on a busy machine."""
    import tempfile

    with tempfile.TemporaryDirectory() as data, running_server(data, "--ai-delay", "0.2") as base:
        yield base, data


def play_move(page: Any, game: str, move: dict[str, Any]) -> None:
    """Ann's move, made on the board as a person makes it (clicks, and a button where the game has one)."""
    board = page.locator("#board")
    if "wait" in move:
        return
    if game == "tohm":
        board.locator(f'[data-cell="{move["place"][0]},{move["place"][1]}"]').click()
    elif game == "exactly":
        board.locator(f'.stack.legal[data-cell="{move["from"]}:{move["coin"]}"]').click()
        board.locator(f'.pile.dest[data-pile="{move["to"]}"]').click(position={"x": 14, "y": 14})
    elif game == "tri":
        if "card" in move:
            board.locator(f'.card.legal[data-card="{move["card"]}"]').first.click()
        else:
            kind = next(iter(move))
            board.locator(f'.highlights [data-tri="{",".join(map(str, move[kind]))}"]').click()
    elif game == "exagon":
        if "stop" in move:
            page.click("#stop")
            return
        p = move["place"]
        board.locator(f'[data-hand-tile="{p["tile"]}"]').click()
        board.locator(f'.spot.legal[data-spot="{p["at"][0]},{p["at"][1]}"]').click()
        page.click("#place")


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_kind_of_event_is_announced(name: str, stored: tuple[str, str], browser: Any,
                                          artifacts: Path) -> None:
    base, data = stored
    game, _, _, _, _, lang, expected = SCENARIOS[name]
    table_id, token, moves = store_tables(data, {name: SCENARIOS[name][:5]})[name]
    ctx, page, errors = open_page(browser, locale="it-IT" if lang == "it" else "en-US")
    # watching from the first moment of the page: the hourglass runs from when the server loads the table,
    # and on a loaded machine it may run out right after the page's first snapshot
    page.add_init_script(f"({WATCH_JS})()")
    open_as_ann(page, base, table_id, token)
    wait_state(page, "s.you === 0" if "wait" in moves[0] else "s.you === 0 && s.mine")
    page.screenshot(path=str(artifacts / f"announce-{name}-{lang}-before.png"))
    for move in moves:
        seq = state(page)["seq"]
        play_move(page, game, move)
        if "wait" not in move:
            wait_seq_above(page, seq)
            if move is not moves[-1]:
                wait_state(page, "s.mine")
    for prefix in expected:
        page.wait_for_function("(p) => (window.__announced || []).some((t) => t.includes(p))", arg=prefix,
                               timeout=WAIT_MS)
    shown = announced(page)
    page.screenshot(path=str(artifacts / f"announce-{name}-{lang}.png"))
    log = " · ".join(log_lines(page))
    for prefix in expected:
        text = next(t for t in shown if prefix in t)
        # a clear sentence: whole words, the numbers filled in, and the same words in the log
        assert not re.search(r"undefined|\{\w+\}|NaN", text), text
        assert text in log, (text, log)
    assert errors == []
    ctx.close()

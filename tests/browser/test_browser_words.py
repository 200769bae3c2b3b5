"""The player's words in a real browser, on a phone, in English and in Italian:

- a refused move is a toast in the page's language naming the move with the game's words (its
  client's ``refusal``), with no JSON;
- a tap that arrives after the same move was played for the player (the forced move) shows nothing;
- ``tn`` picks the catalog's plural form for n = 1 and n = 2.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ludoteca.registry import GAMES, game_class
from tests.browser.conftest import language_context, watch_errors
from tests.browser.test_browser_play import wait_state
from tests.browser.test_browser_table_life import post
from tests.test_player_words import JSON_MARKS, PLURAL_SAMPLE, illegal_action

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

RECEIVED_JS = """() => {
  const s = window.ludoteca;
  window.__received = [];
  s.ws.addEventListener("message", (ev) => { try { window.__received.push(JSON.parse(ev.data)); } catch {} });
}"""


def open_seat(page: Any, base: str, table: str, seat: int, token: str) -> None:
    page.goto(base + "/")
    page.evaluate("([id, seat, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat, token}))",
                  [table, seat, token])
    page.goto(f"{base}/t/{table}")
    wait_state(page, "s.you === arg", seat)


def settle(page: Any) -> None:
    """Wait until the page has handled every message it received so far."""
    page.evaluate("() => window.ludoteca.chain.then(() => true)")


def hide_toast(page: Any) -> None:
    page.evaluate("() => { const t = document.getElementById('toast'); t.textContent = ''; "
                  "t.classList.remove('show'); }")


@pytest.mark.parametrize("lang", ["en", "it"])
def test_refusals_are_words_late_taps_are_quiet_and_plurals_follow_the_catalog(server: str, browser: Any,
                                                                                lang: str) -> None:
    game = GAMES[0]
    n = game_class(game).min_players
    made = post(server, "/api/tables", {"game": game, "players": n, "sit": 0, "name": "Ann",
                                        "seats": [{"kind": "open"}] * n})
    tokens = [made["token"]] + [post(server, f"/api/tables/{made['id']}/join", {"seat": s, "name": f"Bob{s}"})["token"]
                                for s in range(1, n)]
    ctx = language_context(browser, lang, 390, 844)
    page = ctx.new_page()
    errors = watch_errors(page)
    try:
        open_seat(page, server, made["id"], 0, tokens[0])
        wait_state(page, "s.status === 'playing' && s.to_move !== null")
        mover = page.evaluate("() => window.ludoteca.msg.to_move")
        if mover != 0:
            open_seat(page, server, made["id"], mover, tokens[mover])
        wait_state(page, "s.mine")
        page.evaluate(f"({RECEIVED_JS})()")

        # plural forms: the catalog's, by the language's rule
        singular, plural = PLURAL_SAMPLE
        forms = page.evaluate("""async ([a, b]) => {
          const {tn} = await import("/static/js/i18n.js");
          return [1, 2].map((n) => tn(a, b, n, {title: "T", table: "x"}));
        }""", [singular, plural])
        assert forms == ({"en": ["T · 1 player · table x", "T · 2 players · table x"],
                          "it": ["T · 1 giocatore · tavolo x", "T · 2 giocatori · tavolo x"]}[lang])

        # a move not legal now: a toast in words, the game's own when its client has them
        legal = page.evaluate("() => window.ludoteca.msg.legal")
        bad = illegal_action(game, legal)
        hide_toast(page)
        page.evaluate("(a) => window.ludoteca.ws.send(JSON.stringify("
                      "{type: 'action', action: a, seq: window.ludoteca.seq}))", bad)
        page.wait_for_selector("#toast.show")
        toast = page.inner_text("#toast")
        assert toast and not JSON_MARKS.search(toast), toast
        own = page.evaluate("""async ([name, a]) => {
          const client = await import(`/games/${encodeURIComponent(name)}/client.js`);
          return client.refusal ? client.refusal(a, (s) => String(s)) : null;
        }""", [game, bad])
        if own:
            assert toast == own
        if lang == "it":
            assert toast.startswith(("Ora ", "Questa ")), toast

        # the move played, then the same tap arriving late: no toast
        hide_toast(page)
        seq = page.evaluate("() => window.ludoteca.seq")
        move = json.loads(json.dumps(legal[0]))
        page.evaluate("""([a, seq]) => {
          const ws = window.ludoteca.ws;
          ws.send(JSON.stringify({type: "action", action: a, seq}));
          ws.send(JSON.stringify({type: "action", action: a, seq, ref: "late"}));
        }""", [move, seq])
        page.wait_for_function("() => (window.__received || []).some((m) => m.ref === 'late')")
        settle(page)
        late = page.evaluate("() => window.__received.find((m) => m.ref === 'late')")
        assert late["code"] == "stale" and late["quiet"] is True
        assert page.evaluate("() => window.ludoteca.seq") > seq
        assert not page.evaluate("() => document.getElementById('toast').classList.contains('show')")
        assert page.inner_text("#toast") == ""
        assert errors == []
    finally:
        ctx.close()

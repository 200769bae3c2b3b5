"""Cross-site attacks and the lobby's new features, in real Chromium against a real server.

A page served by another loopback origin (a small ``http.server`` on another port) tries what
a hostile site could: open the table's websocket and sit down, create a table and take a seat
with a cross-site POST, and frame the table page (clickjacking). Against the server as shipped
all of it fails; against a server started with ``--allowed-origin`` for that page the websocket
and the POSTs work (so the test does see an attack that gets through), while framing is still
refused. The lobby tests: unlisted tables stay out of the list, a stalled table says whom it
waits for, and a rematch keeps a player's seat until they take it back.
Screenshots go to ``test-artifacts/security-*.png``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import http.server
import json
import random
import re
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.launch import running_server

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CSP_WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
"""

ATTACK = """<!doctype html>
<html><head><meta charset="utf-8"><title>Free prizes</title></head>
<body><h1>Free prizes (a page of another site)</h1>
<iframe id="frame" src="{base}/t/{table}" width="700" height="450"></iframe>
<script>
const R = window.results = {{ws: "pending", wsMessages: [], create: "pending", join: "pending"}};
const ws = new WebSocket("{ws_base}/ws/{table}");
ws.onopen = () => {{ R.ws = "open"; ws.send(JSON.stringify({{type: "join", seat: 1, name: "Mallory"}})); }};
ws.onmessage = (e) => {{ R.wsMessages.push(JSON.parse(e.data).type); }};
ws.onerror = () => {{ if (R.ws === "pending") R.ws = "error"; }};
ws.onclose = (e) => {{ R.wsClose = e.code; if (R.ws === "pending") R.ws = "closed"; }};
const post = (path, body) => fetch("{base}" + path, {{method: "POST", mode: "no-cors",
  headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify(body)}});
post("/api/tables", {{game: "tohm", players: 2, sit: 0, name: "Mallory"}})
  .then(() => {{ R.create = "sent"; }}, () => {{ R.create = "failed"; }});
post("/api/tables/{table}/join", {{seat: 2, name: "Mallory"}})
  .then(() => {{ R.join = "sent"; }}, () => {{ R.join = "failed"; }});
</script></body></html>
"""


@pytest.fixture(scope="module")
def attacker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Another origin: a static file server on its own loopback port; yields (base URL, its directory)."""
    root = tmp_path_factory.mktemp("attacker")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def call(base: str, path: str, body: Any = None) -> tuple[int, Any]:
    """An HTTP request as a program (no Origin header): (status, JSON)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def new_page(browser: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_init_script(CSP_WATCH)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(20_000)
    return ctx, page, errors


def run_attack(browser: Any, base: str, attacker: tuple[str, Path], shot: Path) -> dict[str, Any]:
    """A 3-seat table (Ann at seat 0) attacked from the other origin; what the page and the server saw."""
    status, made = call(base, "/api/tables", {"game": "tohm", "players": 3, "sit": 0, "name": "Ann"})
    assert status == 201
    table = made["id"]
    tables_before = len(call(base, "/api/tables")[1]["tables"])
    origin, root = attacker
    name = f"attack-{table}.html"
    (root / name).write_text(ATTACK.format(base=base, ws_base=base.replace("http", "ws", 1), table=table))
    ctx, page, _ = new_page(browser)
    page.goto(f"{origin}/{name}")
    page.wait_for_function("() => results.ws !== 'pending' && results.create !== 'pending' "
                           "&& results.join !== 'pending'")
    page.wait_for_timeout(1500)  # let the websocket's answers and the frame arrive
    results = page.evaluate("() => results")
    framed = [f for f in page.frames if f is not page.main_frame]
    assert len(framed) == 1
    frame = framed[0]
    results["frame_url"] = frame.url
    results["frame_has_table"] = frame.evaluate("() => !!document.getElementById('board')") \
        if frame.url.startswith(base) else False
    page.screenshot(path=str(shot))
    ctx.close()
    summary = call(base, f"/api/tables/{table}")[1]
    results["seats"] = [s["kind"] for s in summary["seats"]]
    results["new_tables"] = len(call(base, "/api/tables")[1]["tables"]) - tables_before
    return results


def test_another_origin_can_neither_use_the_server_nor_frame_it(browser: Any, attacker: tuple[str, Path],
                                                                artifacts: Path, tmp_path: Path) -> None:
    with running_server(str(tmp_path / "data")) as base:
        got = run_attack(browser, base, attacker, artifacts / "security-attack-refused.png")
    assert got["ws"] in ("error", "closed") and got["wsMessages"] == [], got
    assert got["seats"] == ["human", "open", "open"], "nobody sat down from the other origin"
    assert got["new_tables"] == 0, "no table was created from the other origin"
    assert not got["frame_has_table"], got["frame_url"]


def test_an_allowed_origin_may_use_the_server_but_never_frame_it(browser: Any, attacker: tuple[str, Path],
                                                                 artifacts: Path, tmp_path: Path) -> None:
    with running_server(str(tmp_path / "data"), "--allowed-origin", attacker[0]) as base:
        got = run_attack(browser, base, attacker, artifacts / "security-attack-allowed-origin.png")
    assert got["ws"] == "open" and "snapshot" in got["wsMessages"] and "joined" in got["wsMessages"], got
    assert got["seats"] == ["human", "human", "human"]
    assert got["new_tables"] == 1
    assert not got["frame_has_table"], got["frame_url"]


# --- the lobby -----------------------------------------------------------------------------

async def _play(base: str, table: str, token: str, seed: int) -> None:
    """One human seat playing random legal moves over the websocket until the game is over."""
    try:
        from websockets.asyncio.client import connect
    except ImportError:  # websockets < 13
        from websockets import connect  # type: ignore[no-redef]
    rng = random.Random(seed)
    async with connect(base.replace("http", "ws", 1) + f"/ws/{table}") as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        last: dict[str, Any] | None = None
        async for raw in ws:
            m = json.loads(raw)
            if m["type"] == "error" and m["code"] == "rate_limited" and last is not None:
                await asyncio.sleep(0.5)
                m = last  # the move was refused unread: send it again
            elif m["type"] not in ("snapshot", "update"):
                continue
            if m["status"] == "over":
                return
            if m["legal"]:
                last = m
                await asyncio.sleep(0.03)  # stay under the server's 20 messages per second
                await ws.send(json.dumps({"type": "action", "action": rng.choice(m["legal"]), "seq": m["seq"]}))


def finished_tohm(base: str) -> tuple[str, str, str]:
    status, made = call(base, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Ann"})
    assert status == 201
    table = made["id"]
    bob = call(base, f"/api/tables/{table}/join", {"seat": 1, "name": "Bob"})[1]["token"]

    async def both() -> None:
        await asyncio.wait_for(asyncio.gather(_play(base, table, made["token"], 1), _play(base, table, bob, 2)), 120)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright runs its own loop in this thread
        pool.submit(asyncio.run, both()).result()
    assert call(base, f"/api/tables/{table}")[1]["status"] == "over"
    return table, made["token"], bob


@pytest.fixture(scope="module")
def lobby_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("lobby-data")
    with running_server(str(data), "--stall-after", "0", "--rematch-hold", "600") as base:
        yield base


def test_unlisted_tables_and_stalled_tables_in_the_lobby(lobby_server: str, browser: Any, artifacts: Path) -> None:
    base = lobby_server
    # a game whose player to move went away: shown as stalled, with whom it waits for
    status, made = call(base, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Ann"})
    assert status == 201
    stalled = made["id"]
    call(base, f"/api/tables/{stalled}/join", {"seat": 1, "name": "Bob"})
    to_move = call(base, f"/api/tables/{stalled}")[1]["waiting_for"]
    ctx, page, errors = new_page(browser)
    page.goto(base + "/")
    page.fill("#name", "Cleo")
    page.select_option("#game", "tohm")
    page.check("#unlisted")
    page.click("#create-btn")
    page.wait_for_url(f"{base}/t/**")
    hidden = page.url.rstrip("/").split("/")[-1]
    page.wait_for_function("() => window.ludoteca && window.ludoteca?.msg && window.ludoteca?.msg?.you === 0")
    assert call(base, f"/api/tables/{hidden}")[1]["unlisted"] is True
    page.goto(base + "/")
    row = page.locator("#table-list tr", has=page.locator(f"a[href='/t/{stalled}']"))
    row.wait_for()
    assert page.locator(f"#table-list a[href='/t/{hidden}']").count() == 0, "an unlisted table is not in the lobby"
    page.locator(f"#my-table-list a[href='/t/{hidden}']").wait_for()  # but its creator finds it in "Your tables"
    assert "stalled" in row.inner_text()
    assert f"waiting for {['Ann', 'Bob'][to_move]} (away) for under a minute" in row.inner_text()
    page.screenshot(path=str(artifacts / "security-lobby.png"))
    page.click(f"a[href='/t/{stalled}']")  # a spectator opens the stalled game
    page.wait_for_function("() => document.getElementById('banner').textContent.includes('is away')")
    assert f"{['Ann', 'Bob'][to_move]} is away" in page.inner_text("#banner")
    page.screenshot(path=str(artifacts / "security-stalled-table.png"))
    assert page.evaluate("() => window.__csp") == [] and errors == []
    ctx.close()


def test_a_rematch_keeps_the_seat_until_its_player_takes_it_back(lobby_server: str, browser: Any,
                                                                 artifacts: Path) -> None:
    base = lobby_server
    old, ann, _ = finished_tohm(base)
    new = call(base, f"/api/tables/{old}/rematch", {})[1]["id"]  # made by someone else first
    ctx_e, eve, errors_e = new_page(browser)
    eve.goto(f"{base}/t/{new}")
    eve.locator("#seats .held").first.wait_for()
    assert eve.locator("button.sit").count() == 0
    held = eve.locator("#seats .held").all_inner_texts()
    assert len(held) == 2 and all(re.fullmatch(rf"kept for {who} for (10:00|9:[0-5]\d)", text)
                                  for who, text in zip(["Ann", "Bob"], held, strict=True)), held
    eve.screenshot(path=str(artifacts / "security-rematch-held.png"))
    lobby = eve.context.new_page()
    lobby.goto(base + "/")
    row = lobby.locator("#table-list tr", has=lobby.locator(f"a[href='/t/{new}']"))
    row.wait_for()
    assert "(kept for Ann), (kept for Bob)" in row.inner_text() and "watch" in row.inner_text()
    lobby.close()
    # the previous player's browser still holds the old table's token: it takes the seat back
    ctx_a, page, errors_a = new_page(browser)
    page.goto(f"{base}/t/{new}")
    page.evaluate("([old, token]) => localStorage.setItem(`ludoteca.seat.${old}`, JSON.stringify({seat: 0, token}))",
                  [old, ann])
    page.reload()
    page.click("button.sit")
    page.wait_for_function("() => window.ludoteca?.msg && window.ludoteca?.msg?.you === 0")
    assert call(base, f"/api/tables/{new}")[1]["seats"][0]["name"] == "Ann"
    page.screenshot(path=str(artifacts / "security-rematch-taken-back.png"))
    eve.wait_for_function("() => window.ludoteca?.msg?.seats?.[0]?.kind === 'human'")
    eve.wait_for_function("() => document.querySelectorAll('#seats .held').length === 1")
    assert eve.locator("#seats .held").inner_text().startswith("kept for Bob for ")
    assert eve.locator("#name-row").is_hidden(), "no seat to take: no name to type"
    for p, errors in ((eve, errors_e), (page, errors_a)):
        assert p.evaluate("() => window.__csp") == [] and errors == []
    ctx_e.close()
    ctx_a.close()

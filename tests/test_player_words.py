"""Every word a player reads is in their language and in player terms.

- a refused move over the real websocket is told in the page's language, with no JSON and no engine
  words (the engine's reason names JSON fields and seats by number); the refused move comes back as
  ``action`` so that the page names it with the game's words (its client's ``refusal``);
- a move for a position that has moved on (a tap that crossed a forced move played for the player)
  gets a quiet ``stale`` answer, which the page does not show;
- the log and event texts of every game (asked of the registry), at its smallest and largest table,
  hold no JSON and no coordinates, in English and in Italian;
- a text whose grammar depends on a count takes the catalog's plural form (gettext's msgid_plural,
  Babel's plural rule) for n = 1 and n = 2, in English and in Italian.

The browser's own modules run in Node (skipped without ``node``) with the catalog the server serves.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from ludoteca.i18n import web_plurals
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.app import create_app
from ludoteca.web.languages import catalog_body
from tests.conftest import game_dir
from tests.test_web_api import WS

pytestmark = pytest.mark.timeout(300)

SRC = Path(__file__).resolve().parents[1] / "src" / "ludoteca"
NODE = shutil.which("node") or shutil.which("nodejs")
JSON_MARKS = re.compile(r'[{}\[\]"]')
COORDINATES = re.compile(r"-?\d+,-?\d+")
"""A place written as the engine writes it: "2,0", "-3,1", "2,0,E" (a list of tiles reads "14, 21")."""
ENGINE_WORDS = ("not legal", "to act", "player 0", "is not an action", "unknown", "rotation")


# --- the websocket ------------------------------------------------------------------------------------
@contextmanager
def server(folder: Path) -> Iterator[TestClient]:
    """A server on a SQLite file of its own in ``folder`` (never the repository's default ``data/``)."""
    app = create_app(database=None, data_dir=str(folder), ai_delay=0, rate=10_000, burst=10_000)
    with TestClient(app) as client:
        yield client


@contextmanager
def seated(client: TestClient, table: str, token: str, lang: str) -> Iterator[WS]:
    with client.websocket_connect(f"/ws/{table}?lang={lang}") as raw:
        ws = WS(raw)
        ws.until(lambda m: m["type"] == "snapshot")
        ws.send({"type": "auth", "token": token})
        ws.until(lambda m: m["type"] == "snapshot" and m["you"] is not None)
        yield ws


def human_table(client: TestClient, game: str) -> tuple[str, list[str]]:
    """A table of ``game`` at its smallest size, every seat a person; returns its id and the seats' tokens."""
    n = game_class(game).min_players
    made = client.post("/api/tables", json={"game": game, "players": n, "seats": [{"kind": "open"}] * n,
                                            "sit": 0, "name": "Ann"})
    assert made.status_code == 201, made.text
    table = made.json()["id"]
    tokens = [made.json()["token"]]
    for seat in range(1, n):
        joined = client.post(f"/api/tables/{table}/join", json={"seat": seat, "name": f"Bob{seat}"})
        assert joined.status_code == 200, joined.text
        tokens.append(joined.json()["token"])
    return table, tokens


def illegal_action(game: str, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A well-formed move of ``game`` that is not among ``legal`` (the moves of the position now)."""
    state = load_game(game, players=game_class(game).min_players).new_initial_state()
    shown = {json.dumps(a, sort_keys=True) for a in legal}
    for action in range(state.game.num_distinct_actions()):
        try:
            data = state.action_to_json(action)
        except (ValueError, KeyError, IndexError, TypeError):
            continue
        if json.dumps(data, sort_keys=True) not in shown and "timeout" not in data:
            return data
    raise AssertionError(f"{game}: no illegal move found")


def player_words(message: str) -> None:
    assert message and not JSON_MARKS.search(message), message
    assert not any(word in message for word in ENGINE_WORDS), message


@pytest.mark.parametrize("game", GAMES)
def test_a_refused_move_is_told_in_the_players_words_and_a_late_tap_is_quiet(game: str, tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, tokens = human_table(client, game)
        messages: dict[str, str] = {}
        for lang in ("en", "it"):
            with seated(client, table, tokens[0], lang) as ann:
                state = ann.last
                assert state is not None and state["status"] == "playing"
                mover = state["to_move"]
            with seated(client, table, tokens[mover], lang) as ws:
                state = ws.last
                assert state is not None
                seq, legal = state["seq"], state["legal"]
                # a move not legal now: words, no JSON, the move sent back for the page to name
                bad = illegal_action(game, legal)
                ws.send({"type": "action", "action": bad, "seq": seq})
                error = ws.error()
                assert error["code"] == "illegal" and not error.get("quiet")
                assert error["action"] == bad
                player_words(error["message"])
                messages[lang] = error["message"]
                # something that is no move at all
                ws.send({"type": "action", "action": {"fly": True}, "seq": seq})
                error = ws.error()
                assert error["code"] == "illegal"
                player_words(error["message"])
        assert messages["en"] != messages["it"]  # said in the page's language

        # the forced move played for the player, then the player's own tap on it arriving late: quiet
        with seated(client, table, tokens[mover], "it") as ws:
            state = ws.last
            assert state is not None
            seq, played = state["seq"], state["legal"][0]
            ws.send({"type": "action", "action": played, "seq": seq})
            after = ws.state_at_least(seq + 1)
            ws.send({"type": "action", "action": played, "seq": seq, "ref": "late"})
            late = ws.until(lambda m: m.get("ref") == "late")
            assert late["type"] == "error" and late["code"] == "stale" and late["quiet"] is True
            player_words(late["message"])
            # the same tap without the position it was made in: still the move just made, still quiet
            still_legal = after["to_move"] == mover and json.dumps(played, sort_keys=True) in {
                json.dumps(a, sort_keys=True) for a in after["legal"] or []}
            if not still_legal:
                ws.send({"type": "action", "action": played, "ref": "late2"})
                late = ws.until(lambda m: m.get("ref") == "late2")
                assert late["code"] == "stale" and late["quiet"] is True, late
            ws.send({"type": "ping", "ref": "p"})
            pong = ws.until(lambda m: m["type"] == "pong")
            assert pong["seq"] == after["seq"]  # nothing else was played


# --- the texts of the games, with the browser's own modules in Node ------------------------------------------
RUNNER = """
import {readFileSync} from "node:fs";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
globalThis.__LANG = input.lang;
globalThis.__CATALOG = input.catalog;
const i18n = await import("./static/js/i18n.js");
const common = await import("./static/js/common.js");
const out = {games: {}, plurals: {}};
for (const [game, runs] of Object.entries(input.games)) {
  const client = await import(`./games/${game}/client.js`);
  out.games[game] = runs.map((data) => {
    const names = data.names;
    const texts = [];
    for (const line of common.logLines(client, data.entries, names)) texts.push(line.text);
    for (const e of data.entries) {
      for (const ev of e.events) texts.push(common.eventText(client, ev, names));
      texts.push(...common.announcements(client, e.events, names));
      if (e.seat !== null && client.refusal) texts.push(client.refusal(e.action, common.whoOf(names)));
      if (e.seat !== null) texts.push(common.describe(client, e.action, names));
    }
    for (const p of data.positions) {
      texts.push(client.phaseText(p, {names, you: null, toMove: p.to_move}));
      names.forEach((_, i) => texts.push(client.seatInfo(p, i)));
    }
    return texts.filter((x) => x !== null && x !== undefined);
  });
}
for (const [singular, plural] of input.plurals) {
  out.plurals[singular] = [1, 2, 5].map((n) => i18n.tn(singular, plural, n, {title: "T", table: "x"}));
}
process.stdout.write(JSON.stringify(out));
"""


def node_root(tmp: Path) -> Path:
    """The page's modules laid out for Node: the real i18n.js, its catalog given by the runner."""
    static = tmp / "static" / "js"
    shutil.copytree(SRC / "web" / "static" / "js", static)
    i18n = (static / "i18n.js").read_text()
    marker = "const CATALOG = await loadCatalog(LANG);"
    assert marker in i18n
    i18n = i18n.replace(marker, "const CATALOG = globalThis.__CATALOG || {};")
    i18n = i18n.replace("export const LANG = ", "export const LANG = globalThis.__LANG || ")
    (static / "i18n.js").write_text(i18n)
    for game in GAMES:
        text = (game_dir(game) / "client.js").read_text().replace('"/static/js/', '"../../static/js/')
        (tmp / "games" / game).mkdir(parents=True)
        (tmp / "games" / game / "client.js").write_text(text)
    (tmp / "run.mjs").write_text(RUNNER)
    return tmp


def play(game: str, players: int, seed: int, steps: int) -> dict[str, Any]:
    """A seeded random game as the table page gets it: entries with their events, and positions."""
    rng = random.Random(seed)
    state = load_game(game, players=players).new_initial_state()
    entries: list[dict[str, Any]] = []
    positions = [state.observation(None)]
    for _ in range(steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            seat = None
        else:
            action = rng.choice(state.legal_actions())
            seat = state.current_player()
        data = state.action_to_json(action)
        events = [v for e in state.apply_action(action) if (v := e.view(None, everything=True)) is not None]
        entries.append({"i": len(entries), "seat": seat, "action": data, "events": events})
        positions.append(state.observation(None))
    names = ["Ann", "Bob", "Cy", "Dee", "Eve", "Flo", "Gus", "Hal"][:players]
    return {"names": names, "entries": entries, "positions": positions}


PLURAL_SAMPLE = ("{title} · {n} player · table {table}", "{title} · {n} players · table {table}")
"""A message of the shell's catalog with a plural form (the table page's title)."""


@pytest.fixture(scope="module")
def node_texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    root = node_root(tmp_path_factory.mktemp("words"))
    games = {game: [play(game, n, seed, 700) for seed, n in enumerate(
        sorted({game_class(game).min_players, game_class(game).max_players}), start=1)] for game in GAMES}
    out: dict[str, Any] = {}
    for lang in ("en", "it"):
        catalog = json.loads(catalog_body(lang)[0])
        path = root / f"input-{lang}.json"
        path.write_text(json.dumps({"lang": lang, "catalog": catalog, "games": games, "plurals": [PLURAL_SAMPLE]}))
        done = subprocess.run([str(NODE), str(root / "run.mjs"), str(path)], capture_output=True, text=True,
                              timeout=240, cwd=root, check=False)
        assert done.returncode == 0, done.stderr
        out[lang] = json.loads(done.stdout)
    return out


@pytest.mark.parametrize("game", GAMES)
def test_log_and_event_texts_hold_no_json_and_no_coordinates(game: str, node_texts: dict[str, Any]) -> None:
    for lang in ("en", "it"):
        runs = node_texts[lang]["games"][game]
        assert runs and all(len(texts) > 50 for texts in runs)
        for texts in runs:
            for text in texts:
                assert not JSON_MARKS.search(text), (lang, text)
                assert not COORDINATES.search(text), (lang, text)
                assert not re.search(r"undefined|\bnull\b|NaN|\{\w+\}", text), (lang, text)
                assert "rotation" not in text and "rotazione" not in text, (lang, text)


def test_plural_forms_follow_the_catalog_for_one_and_two(node_texts: dict[str, Any]) -> None:
    singular, plural = PLURAL_SAMPLE
    rule, forms = web_plurals("it")
    assert rule.replace(" ", "") == "(n!=1)"  # Babel's CLDR rule for Italian, as the .po header writes it
    italian = forms[singular]
    assert len(italian) == 2 and "giocatore" in italian[0] and "giocatori" in italian[1]
    en = node_texts["en"]["plurals"][singular]
    it = node_texts["it"]["plurals"][singular]
    assert en == [singular.replace("{title}", "T").replace("{table}", "x").replace("{n}", str(n)) if n == 1
                  else plural.replace("{title}", "T").replace("{table}", "x").replace("{n}", str(n)) for n in (1, 2, 5)]
    assert it == ["T · 1 giocatore · tavolo x", "T · 2 giocatori · tavolo x", "T · 5 giocatori · tavolo x"]


def test_plural_rule_reads_gettext_expressions_without_eval() -> None:
    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    script = f"""
const {{pluralRule}} = await import({json.dumps((SRC / "web" / "static" / "js" / "i18n.js").as_uri())});
const rules = {{
  it: pluralRule("(n != 1)"),
  fr: pluralRule("(n > 1)"),
  pl: pluralRule("(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)"),
  broken: pluralRule("n +"),
}};
const out = {{}};
for (const [k, f] of Object.entries(rules)) out[k] = [0, 1, 2, 5, 12, 22].map(f);
process.stdout.write(JSON.stringify(out));
"""
    done = subprocess.run([str(NODE), "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["it"] == [1, 0, 1, 1, 1, 1]
    assert out["fr"] == [0, 0, 1, 1, 1, 1]
    assert out["pl"] == [2, 0, 1, 2, 2, 1]
    assert out["broken"] == out["it"]  # a rule that does not read: English's

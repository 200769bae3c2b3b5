"""The four games' browser clients (games/<name>/client.js) checked outside a browser, with Node.

Real games are played by the engines (seeded), and every log entry's events go through the
client's texts exactly as the table page makes them (web/static/js/common.js: eventText, entryText,
announcements, lastMoveCells), in English and in Italian (the merged catalog the server serves):

- every text of every event, action and phase is a full sentence: no "undefined", no "{name}" left;
- every Italian text of the client is translated (games/<name>/locale/it.po) with the same fields;
- every announced kind of event is announced, and in Italian in Italian words;
- the log names cells and triangles as the board labels them, never by coordinates;
- ``lastMoveCells`` names what the last move touched, as the board names it.

Skipped without ``node`` (Debian's nodejs).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po

from ludoteca.core.registry import load_game
from ludoteca.i18n import web_translations
from ludoteca.registry import GAMES
from tests.conftest import game_dir, hint, options_for, players_near

SRC = Path(__file__).resolve().parents[1] / "src" / "ludoteca"
NODE = shutil.which("node") or shutil.which("nodejs")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")

# the page's i18n module, without a page: the catalog comes from the runner
I18N_STUB = """
export const LANGUAGES = ["en", "it"];
export const LANGUAGE_NAMES = {en: "English", it: "Italiano"};
export const COOKIE = "ludoteca_lang";
export const LANG = globalThis.__LANG || "en";
const MESSAGES = globalThis.__MESSAGES || {};
export function t(msgid, params = null) {
  const text = Object.hasOwn(MESSAGES, msgid) && MESSAGES[msgid] ? MESSAGES[msgid] : msgid;
  if (!params) return text;
  return text.replace(/\\{(\\w+)\\}/g, (all, name) => (Object.hasOwn(params, name) ? String(params[name]) : all));
}
export function tn(singular, plural, n, params = {}) {
  return t(n === 1 ? singular : plural, {...params, n});
}
export function setLanguage() {}
"""

RUNNER = """
import {readFileSync} from "node:fs";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
globalThis.__LANG = input.lang;
globalThis.__MESSAGES = input.messages;
const common = await import("./static/js/common.js");
const out = {};
for (const [game, data] of Object.entries(input.games)) {
  const client = await import(`./games/${game}/client.js`);
  const names = data.names;
  const entries = data.entries.map((e) => ({
    text: common.entryText(client, e, names),
    events: e.events.map((ev) => common.eventText(client, ev, names)),
    announced: common.announcements(client, e.events, names),
    last: client.lastMoveCells ? client.lastMoveCells(e.events) : null,
  }));
  const positions = data.positions.map((p) => ({
    phase: client.phaseText(p, {names, you: null, toMove: p.to_move}),
    seats: names.map((_, i) => client.seatInfo(p, i)),
  }));
  out[game] = {entries, positions, announce: Object.keys(client.ANNOUNCE || {})};
}
process.stdout.write(JSON.stringify(out));
"""

NAMES = ["Ann", "Bob", "Cy"]


def node_root(tmp: Path) -> Path:
    """The page's modules laid out for Node: the shared ones, the stub catalog, the four clients."""
    static = tmp / "static" / "js"
    shutil.copytree(SRC / "web" / "static" / "js", static)
    (static / "i18n.js").write_text(I18N_STUB)
    for game in GAMES:
        text = (game_dir(game) / "client.js").read_text()
        text = text.replace('"/static/js/', '"../../static/js/')
        (tmp / "games" / game).mkdir(parents=True)
        (tmp / "games" / game / "client.js").write_text(text)
    (tmp / "run.mjs").write_text(RUNNER)
    return tmp


def play(game: str, seed: int, players: int, steps: int, **options: Any) -> dict[str, Any]:
    """A seeded random game: its log entries (the events every viewer may see) and positions."""
    rng = random.Random(seed)
    state = load_game(game, players=players, **options).new_initial_state()
    entries: list[dict[str, Any]] = []
    positions = [state.observation(None)]
    strings: list[str] = []
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
        strings.append(state.action_to_string(action))
        events = [v for e in state.apply_action(action) if (v := e.view(None, everything=True)) is not None]
        entries.append({"i": len(entries), "seat": seat, "action": data, "events": events})
        positions.append(state.observation(None))
    return {"names": NAMES[:players], "entries": entries, "positions": positions, "strings": strings,
            "over": state.is_terminal()}


def client_game(game: str) -> dict[str, Any]:
    """The seeded random game whose log the clients read: the game's ``CLIENT_GAME`` hint (seed, players,
    steps, options), else seed 1 with two players (three when it can), 2000 steps and no clock."""
    players = players_near(game, 3)
    default = {"seed": 1, "players": players, "steps": 2000, "options": options_for(game, players)}
    spec = {**default, **hint(game, "CLIENT_GAME", {})}
    options = {k: v for k, v in spec["options"].items() if k != "players"}
    return play(game, spec["seed"], spec["players"], spec["steps"], **options)


@pytest.fixture(scope="module")
def games() -> dict[str, dict[str, Any]]:
    return {game: client_game(game) for game in GAMES}


def run_clients(root: Path, lang: str, games: dict[str, dict[str, Any]]) -> dict[str, Any]:
    data = {"lang": lang, "messages": web_translations(lang),
            "games": {g: {k: d[k] for k in ("names", "entries", "positions")} for g, d in games.items()}}
    path = root / f"input-{lang}.json"
    path.write_text(json.dumps(data))
    done = subprocess.run([str(NODE), str(root / "run.mjs"), str(path)], capture_output=True, text=True, timeout=120,
                          cwd=root, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory, games: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    root = node_root(tmp_path_factory.mktemp("clients"))
    return {lang: run_clients(root, lang, games) for lang in ("en", "it")}


BROKEN = re.compile(r"undefined|\bnull\b|NaN|\[object|\{\w+\}")


@pytest.mark.parametrize("game", GAMES)
def test_client_is_valid_javascript(game: str) -> None:
    done = subprocess.run([str(NODE), "--check", str(game_dir(game) / "client.js")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


MSGID = re.compile(r'\bt\(\s*"((?:[^"\\]|\\.)*)"')


@pytest.mark.parametrize("game", GAMES)
def test_every_text_of_the_client_has_its_italian(game: str) -> None:
    source = (game_dir(game) / "client.js").read_text()
    ids = {json.loads(f'"{m}"') for m in MSGID.findall(source)}
    assert len(ids) >= 10  # the texts are found (Pig, the smallest client, has 15)
    with (game_dir(game) / "locale" / "it.po").open("rb") as f:
        catalog = read_po(f, locale="it")
    assert str(catalog.locale) == "it"
    italian = {m.id: m.string for m in catalog if m.id}
    missing = sorted(ids - {k for k, v in italian.items() if v})
    assert missing == [], f"{game}: no Italian for {missing}"
    fields = re.compile(r"\{(\w+)\}")
    for msgid in ids:
        assert set(fields.findall(italian[msgid])) == set(fields.findall(msgid)), msgid
    # the catalog the server serves has them (a shared text may be worded by the shell's catalog)
    served = web_translations("it")
    assert all(served.get(msgid) for msgid in ids)


@pytest.mark.parametrize("game", GAMES)
def test_every_event_and_phase_reads_as_a_sentence_in_both_languages(
        game: str, games: dict[str, dict[str, Any]], texts: dict[str, dict[str, Any]]) -> None:
    for lang in ("en", "it"):
        out = texts[lang][game]
        assert len(out["entries"]) == len(games[game]["entries"]) > 20
        for entry in out["entries"]:
            for text in [entry["text"], *[x for x in entry["events"] if x], *entry["announced"]]:
                assert not BROKEN.search(text), (lang, text)
        for pos in out["positions"]:
            for text in [pos["phase"], *pos["seats"]]:
                assert text and not BROKEN.search(text), (lang, text)
    # Italian is Italian: each log line differs from its English (names and numbers aside)
    same = [(en["text"], it["text"]) for en, it in zip(texts["en"][game]["entries"], texts["it"][game]["entries"],
                                                       strict=True) if en["text"] == it["text"]]
    assert same == []


@pytest.mark.parametrize("game", GAMES)
def test_every_announced_kind_is_announced(game: str, games: dict[str, dict[str, Any]],
                                           texts: dict[str, dict[str, Any]]) -> None:
    kinds = set(texts["en"][game]["announce"]) | {"end"}
    seen: set[str] = set()
    for entry, en, it in zip(games[game]["entries"], texts["en"][game]["entries"], texts["it"][game]["entries"],
                             strict=True):
        announced = [e for e in entry["events"] if e["kind"] in kinds and not e.get("secret")]
        seen |= {e["kind"] for e in announced}
        assert len(en["announced"]) == len(it["announced"]) == len(announced)
        for a, b in zip(en["announced"], it["announced"], strict=True):
            assert a != b  # said in the page's language
    assert "end" in seen if games[game]["over"] else True
    assert len(seen) >= 2, f"{game}: the seeded game announces too little ({seen})"


def test_log_names_places_as_the_board_labels_them(games: dict[str, dict[str, Any]],
                                                  texts: dict[str, dict[str, Any]]) -> None:
    """A move's log line names its cell or triangle by the board's labels (column letter, row number:
    "B3"; a triangle by its side), never by the terminal's coordinates or EXAGON's axial places."""
    def square(r: int, c: int) -> str:
        return f"{chr(65 + c)}{r + 1}"

    coordinate = re.compile(r"-?\d+,-?\d+")  # "2,0" or "-3,1" (a list of tiles is "14, 21")
    sides = {"N": "top", "E": "right", "S": "bottom", "W": "left"}
    checked = 0
    for game in ("tohm", "tri", "exagon"):
        for entry, en, it in zip(games[game]["entries"], texts["en"][game]["entries"], texts["it"][game]["entries"],
                                 strict=True):
            assert not coordinate.search(en["text"]) and not coordinate.search(it["text"]), (game, en["text"])
            a = entry["action"]
            if game == "tohm" and "place" in a:
                assert f"on {square(*a['place'])}" in en["text"], en["text"]
                checked += 1
            if game == "tri":
                for kind in ("place", "expand", "attack"):
                    if kind in a:
                        r, c, d = a[kind]
                        assert f"{sides[d]} triangle of {square(r, c)}" in en["text"], en["text"]
                        checked += 1
            if game == "exagon" and "place" in a:
                assert f"tile {a['place']['tile']}" in en["text"] and "rotation" not in en["text"], en["text"]
                assert "side" in en["text"] or "middle" in en["text"], en["text"]
                checked += 1
    assert checked > 30


def test_last_move_cells_name_what_the_move_touched(games: dict[str, dict[str, Any]],
                                                    texts: dict[str, dict[str, Any]]) -> None:
    # TOHM: the cell a token was placed on now holds the mover's token; a move marks both of its cells
    g = games["tohm"]
    marked = 0
    for k, (entry, out) in enumerate(zip(g["entries"], texts["en"]["tohm"]["entries"], strict=True)):
        action, after = entry["action"], g["positions"][k + 1]
        if "place" in action:
            r, c = action["place"]
            assert out["last"] == [f"{r},{c}"]
            tris = [e for e in entry["events"] if e["kind"] == "tris"]
            assert after["board"][r][c] == (None if tris else entry["seat"])
            marked += 1
        elif "move" in action:
            assert out["last"] == [",".join(map(str, action["move"][0])), ",".join(map(str, action["move"][1]))]
        elif "remove" in action:
            assert out["last"] == [",".join(map(str, action["remove"]))]
        else:
            assert out["last"] == []
    assert marked > 5
    # exactly: the coin's two stacks, "pile:value" as the board names them
    g = games["exactly"]
    moved = 0
    for entry, out in zip(g["entries"], texts["en"]["exactly"]["entries"], strict=True):
        a = entry["action"]
        if "coin" in a:
            assert out["last"] == [f"{a['from']}:{a['coin']}", f"{a['to']}:{a['coin']}"]
            moved += 1
        else:
            assert out["last"] == []
    assert moved > 10
    # TRI: a placement or an expansion marks the triangle now held; an attack its target
    g = games["tri"]
    kinds: set[str] = set()
    for k, (entry, out) in enumerate(zip(g["entries"], texts["en"]["tri"]["entries"], strict=True)):
        a, after = entry["action"], g["positions"][k + 1]
        for kind in ("place", "expand", "attack", "void"):
            if kind in a:
                key = ",".join(map(str, a[kind]))
                assert key in out["last"], (a, out["last"])
                kinds.add(kind)
                if kind in ("place", "expand"):
                    assert after["owner"][key] == entry["seat"]
                if kind == "void":
                    assert key not in after["owner"]
        if "teleport" in a:
            assert ",".join(map(str, a["teleport"]["to"])) in out["last"]
        if "card" in a or "roll" in a or "income" in a:
            assert all(re.fullmatch(r"\d+,\d+,[NESW]", x) for x in out["last"])
    assert {"place", "expand", "attack"} <= kinds
    # EXAGON: the place of the tile just put on the table
    g = games["exagon"]
    placed = 0
    for k, (entry, out) in enumerate(zip(g["entries"], texts["en"]["exagon"]["entries"], strict=True)):
        a, after = entry["action"], g["positions"][k + 1]
        if "place" in a:
            at = ",".join(map(str, a["place"]["at"]))
            assert out["last"] == [at]
            if not any(e["kind"] == "tournament_game" for e in entry["events"]):  # (else a new game is dealt)
                assert any(",".join(map(str, t["at"])) == at and t["tile"] == a["place"]["tile"]
                           for t in after["table"])
            placed += 1
        elif "give" in a or "stop" in a or "pass" in a:
            assert out["last"] == []
    assert placed > 5

"""The browser boards say the rules their table was created with, not RULES.md's numbers.

A table created with other rulebook numbers (the options) is drawn by the game's client
(games/<name>/client.js) outside a browser, with Node and a small stand-in for the page's DOM: the
texts the board draws and its seat and phase lines must carry the table's numbers. Expected values
are the options the test sets (and, for the default table, RULES.md's): exactly's target, cap and
euros to win (RULES.md 1), TOHM's trophies and die faces (RULES.md 3), TRI's teleports (RULES.md 2),
EXAGON's tournament target (RULES.md 4). Skipped without ``node``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ludoteca.core.registry import load_game
from ludoteca.i18n import web_translations
from tests.test_game_clients import NODE, node_root

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs)")

# a DOM good enough for a client's render(ctx): elements keep their attributes, text and children
DOM = """
class Node {
  constructor(tag) {
    this.tag = tag; this.attrs = {}; this.children = []; this.textContent = ""; this.style = {}; this.dataset = {};
    const names = new Set();
    this.classList = {add: (...c) => c.forEach((x) => names.add(x)), contains: (x) => names.has(x),
      remove: (x) => names.delete(x), toggle: (x) => names.has(x) ? names.delete(x) : names.add(x)};
  }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return Object.hasOwn(this.attrs, k) ? this.attrs[k] : null; }
  appendChild(c) { this.children.push(c); return c; }
  append(...cs) { for (const c of cs) this.children.push(c); }
  replaceChildren(...cs) { this.children = cs; }
  addEventListener() {}
  querySelector() { return null; }
  querySelectorAll() { return []; }
}
globalThis.document = {
  createElementNS: (ns, tag) => new Node(tag),
  createElement: (tag) => new Node(tag),
  createTextNode: (text) => { const n = new Node("#text"); n.textContent = text; return n; },
  querySelector: () => null,
  getElementById: () => null,
};
globalThis.CSS = {escape: (s) => s};
function texts(node, out = []) {
  if (node.textContent !== "" && node.textContent !== undefined) out.push(String(node.textContent));
  if (node.attrs && node.attrs["aria-label"]) out.push(node.attrs["aria-label"]);
  for (const c of node.children || []) texts(c, out);
  return out;
}
"""

RUNNER = DOM + """
import {readFileSync} from "node:fs";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
globalThis.__LANG = input.lang;
globalThis.__MESSAGES = input.messages;
const out = [];
for (const c of input.cases) {
  const client = await import(`./games/${c.game}/client.js`);
  const names = ["Ann", "Bob"];
  const root = document.createElementNS(null, "svg");
  const controls = document.createElement("div");
  client.render({svg: root, controls, pos: c.pos, legal: c.legal, ui: {}, colors: ["#c00", "#00c"], names, you: 0,
    seats: [], toMove: c.pos.to_move, act: () => {}, redraw: () => {}, replay: false, status: "playing"});
  out.push({board: texts(root), phase: client.phaseText(c.pos, {names, you: 0, toMove: c.pos.to_move}),
    seats: names.map((_, i) => client.seatInfo(c.pos, i))});
}
process.stdout.write(JSON.stringify(out));
"""


def position(game: str, rolls: tuple[dict[str, Any], ...] = (), **options: Any) -> tuple[dict[str, Any], list[Any]]:
    """The position of a two-player table of ``game`` with ``options`` after the chance outcomes
    ``rolls``, and its legal moves (JSON) as the table sends them."""
    state = load_game(game, players=2, **options).new_initial_state()
    for roll in rolls:
        state.apply_action(state.action_from_json(roll))
    legal = [] if state.is_chance_node() else [state.action_to_json(a) for a in state.legal_actions()]
    return state.observation(None), legal


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = node_root(tmp_path_factory.mktemp("clients"))
    (path / "rules.mjs").write_text(RUNNER)
    return path


def draw(root: Path, lang: str, *cases: tuple[str, tuple[dict[str, Any], list[Any]]]) -> list[dict[str, Any]]:
    """Each (game, (position, legal)) drawn by its client in ``lang``: the board's texts, the phase and
    seat lines."""
    data = {"lang": lang, "messages": web_translations(lang),
            "cases": [{"game": g, "pos": pos, "legal": legal} for g, (pos, legal) in cases]}
    path = root / f"rules-{lang}.json"
    path.write_text(json.dumps(data))
    done = subprocess.run([str(NODE), str(root / "rules.mjs"), str(path)], capture_output=True, text=True,
                          timeout=120, cwd=root, check=False)
    assert done.returncode == 0, done.stderr
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def test_exactly_shows_the_tables_target_cap_and_euros_to_win(root: Path) -> None:
    changed, default = draw(root, "en", ("exactly", position("exactly", target=120, cap=200, euros_to_win=2)),
                            ("exactly", position("exactly")))
    board = " | ".join(changed["board"])
    assert "target: exactly 120¢" in board and "2 euros win" in board and "closed above 200¢" in board
    assert "100¢" not in board and "150¢" not in board
    # every seat starts with a 5-cent coin (RULES.md 1, start_coin "round"): 5 of the table's 120 cents
    assert changed["seats"] == ["5¢ of 120¢ in the pile · 0 of 2 euros"] * 2
    default_board = " | ".join(default["board"])
    assert "target: exactly 100¢" in default_board and "3 euros win" in default_board
    assert "closed above 150¢" in default_board
    assert default["seats"][0] == "5¢ of 100¢ in the pile · 0 of 3 euros"


def test_exactly_without_a_cap_and_one_euro_to_win(root: Path) -> None:
    (out,) = draw(root, "en", ("exactly", position("exactly", cap=850, euros_to_win=1)))
    board = " | ".join(out["board"])
    assert "piles never close" in board and "1 euro wins" in board
    assert out["seats"][1] == "5¢ of 100¢ in the pile · 0 of 1 euro"


def test_exactly_in_italian(root: Path) -> None:
    (out,) = draw(root, "it", ("exactly", position("exactly", target=120, cap=200, euros_to_win=2)))
    board = " | ".join(out["board"])
    assert "obiettivo: esattamente 120¢" in board and "pile chiuse oltre 200¢" in board
    assert out["seats"][0] == "5¢ su 120¢ nella pila · 0 euro su 2"


def test_tohm_shows_the_tables_trophies_and_die(root: Path) -> None:
    # 15 trophies; a 1 does nothing; 3 to 6 place on any empty cell (options face_1, place_anywhere)
    options = {"trophies": 15, "face_1": False, "place_anywhere": True}
    one, three, default = draw(root, "en",
                               ("tohm", position("tohm", ({"roll": 1},), **options)),
                               ("tohm", position("tohm", ({"roll": 3},), **options)),
                               ("tohm", position("tohm", ({"roll": 1},))))
    assert "Trophies left: 15 of 15" in one["board"]
    assert one["phase"] == "rolled 1 — this face does nothing: the turn passes"
    assert three["phase"] == "rolled 3 — place a token on any empty cell"
    assert "Trophies left: 10 of 10" in default["board"]
    assert default["phase"] == "rolled 1 — remove any token"


def test_tohm_in_italian(root: Path) -> None:
    (out,) = draw(root, "it", ("tohm", position("tohm", ({"roll": 1},), trophies=15, face_1=False)))
    assert "Mostrocoppe rimaste: 15 su 15" in out["board"]
    assert out["phase"] == "uscito 1 — questa faccia non fa nulla: il turno passa"


def test_tri_without_teleports_draws_no_teleport(root: Path) -> None:
    off, on = draw(root, "en", ("tri", position("tri", teleports=False)), ("tri", position("tri")))
    assert any("no teleports at this table" in t for t in off["board"])
    assert not any("teleport unused" in t for t in off["board"])
    assert any("★ closed square, teleport unused" in t for t in on["board"])


def test_exagon_tournament_says_its_target(root: Path) -> None:
    changed, default = draw(root, "en", ("exagon", position("exagon", tournament=True, tournament_target=80)),
                            ("exagon", position("exagon", tournament=True)))
    assert all(s.endswith("0 points of 80") for s in changed["seats"])
    assert all(s.endswith("0 points of 50") for s in default["seats"])
    (it,) = draw(root, "it", ("exagon", position("exagon", tournament=True, tournament_target=80)))
    assert all(s.endswith("0 punti su 80") for s in it["seats"])

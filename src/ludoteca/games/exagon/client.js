// EXAGON: hexagonal tiles with coloured numbers, legal spots, rotation, the hand and bonuses.
import {andList, h, pressable, refocus, svg} from "/static/js/common.js";
import {t, tn} from "/static/js/i18n.js";

// One fixed colour per number 1-9 (and the Jolly / Exagon areas).
export const NUMBER_COLORS = {
  1: "#e6194b", 2: "#f58231", 3: "#ffe119", 4: "#9dd13b", 5: "#2e9e4f",
  6: "#42c6d4", 7: "#3a5fcd", 8: "#8e3fb8", 9: "#e055b8", J: "#ffffff", X: "#222222",
};
const DARK_TEXT = new Set([3, 4, 6, "J"]);
const R3 = Math.sqrt(3);

function center(q, r, R) {
  return [R * R3 * (q + r / 2), R * 1.5 * r];
}

function hexPoints(x, y, R) {
  const pts = [];
  for (let k = 0; k < 6; k++) {
    const a = (Math.PI / 180) * (30 + 60 * k);
    pts.push(`${x + R * Math.cos(a)},${y + R * Math.sin(a)}`);
  }
  return pts.join(" ");
}

/** Draw ``tile`` centred at (x, y), corner radius R, rotation rot. */
export function drawTile(parent, tile, x, y, R, rot, opts = {}) {
  const g = svg("g", {class: "tile", "data-tile": tile.id, opacity: opts.opacity}, parent);
  for (let i = 0; i < 6; i++) {
    const d = (i + rot) % 6;
    const th = (-60 * d * Math.PI) / 180;
    const a1 = th - Math.PI / 6, a2 = th + Math.PI / 6;
    const v = tile.sides[i];
    svg("polygon", {
      points: `${x},${y} ${x + R * Math.cos(a1)},${y + R * Math.sin(a1)} ${x + R * Math.cos(a2)},${y + R * Math.sin(a2)}`,
      fill: NUMBER_COLORS[v] || "#ccc", stroke: "#333", "stroke-width": Math.max(0.6, R * 0.025),
    }, g);
    const tr = R * 0.6;
    svg("text", {x: x + tr * Math.cos(th), y: y + tr * Math.sin(th), "text-anchor": "middle", "dominant-baseline": "central",
      "font-size": R * 0.34, "font-weight": "bold", fill: DARK_TEXT.has(v) ? "#222" : "#fff", text: v}, g);
  }
  svg("polygon", {points: hexPoints(x, y, R), fill: "none", stroke: opts.stroke || "#222",
    "stroke-width": opts.strokeWidth || Math.max(1, R * 0.05)}, g);
  if (R >= 22) {
    svg("circle", {cx: x, cy: y, r: R * 0.22, fill: "#fffbe8", stroke: "#8a6d12", "stroke-width": 1}, g);
    svg("text", {x, y, "text-anchor": "middle", "dominant-baseline": "central", "font-size": R * 0.2,
      "font-weight": "bold", fill: "#5c4300", text: tile.star}, g);
  }
  return g;
}

export function phaseText(pos, ctx) {
  if (pos.phase === "deal") return t("dealing…");
  if (pos.phase === "over") return t("game over");
  if (pos.phase === "opening") return pos.table.length ? t("attach one tile touching the first") : t("put any tile in the middle");
  const n = pos.placed_this_turn, b = pos.bonus;
  const placed = n === 0 ? t("no tile placed yet this turn") : tn("{n} tile placed this turn", "{n} tiles placed this turn", n);
  if (!b) return placed;
  return t("{placed} · {bonuses}", {placed, bonuses: tn("{n} bonus", "{n} bonuses", b)});
}

// The tournament's points that end it (RULES.md: 50); a table with another target says it in its position
// (tournament_target, written only then: _option_keys in games/exagon/__init__.py).
const RULEBOOK_TOURNAMENT_TARGET = 50;

/** The points that end the tournament whose position is ``pos``. */
export function tournamentTarget(pos) {
  return Number.isInteger(pos.tournament_target) ? pos.tournament_target : RULEBOOK_TOURNAMENT_TARGET;
}

export function seatInfo(pos, i) {
  const n = pos.hands[i].length;
  const tiles = tn("{n} tile in hand", "{n} tiles in hand", n);
  if (!pos.scores) return tiles;
  return t("{tiles} · {points}", {tiles, points: tn("{n} point of {target}", "{n} points of {target}", pos.scores[i],
    {target: tournamentTarget(pos)})});
}

/** A tile in words: its number and the numbers of its six sides (J: Jolly, X: Exagon). */
function tileText(tile) {
  return t("tile {id} (star {star}; sides {sides})", {id: tile.id, star: tile.star, sides: tile.sides.join(" ")});
}

export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const root = ctx.svg;
  const R = 46;
  const tiles = new Map(pos.tiles.map((t) => [t.id, t]));

  const places = legal.filter((a) => a.place).map((a) => a.place);
  const gives = legal.filter((a) => a.give);
  const playable = new Set(places.map((p) => p.tile));
  for (const a of gives) playable.add(a.give.tile);
  if (ui.tile !== undefined && ui.tile !== null && !playable.has(ui.tile)) ui.tile = null;
  const spots = new Map(); // "q,r" -> rotations, for the selected tile
  const anySpot = new Set();
  for (const p of places) {
    const k = p.at.join(",");
    anySpot.add(k);
    if (p.tile === ui.tile) {
      if (!spots.has(k)) spots.set(k, []);
      spots.get(k).push(p.rot);
    }
  }
  if (ui.spot && !spots.has(ui.spot)) ui.spot = null;

  // bounds of the table, the spots and a margin
  const cells = [...pos.table.map((t) => t.at), ...[...anySpot].map((k) => k.split(",").map(Number))];
  if (!cells.length) cells.push([0, 0]);
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const [q, r] of cells) {
    const [x, y] = center(q, r, R);
    minX = Math.min(minX, x - R); maxX = Math.max(maxX, x + R);
    minY = Math.min(minY, y - R); maxY = Math.max(maxY, y + R);
  }
  minX -= R; maxX += R; minY -= R * 0.6; maxY += R * 0.6;
  const boardW = Math.max(maxX - minX, 560);
  const cx0 = (minX + maxX) / 2;
  minX = cx0 - boardW / 2; maxX = cx0 + boardW / 2;

  // the hand shown: yours, or the hand of the player to move
  const handSeat = ctx.you !== null && ctx.you !== undefined ? ctx.you : ctx.toMove;
  const hand = handSeat !== null && handSeat !== undefined ? pos.hands[handSeat] : [];
  // phones (the max-width of style.css's phone block): the hand wraps to the width on screen, not the board's
  const narrow = typeof window !== "undefined" && !!window.matchMedia
    && window.matchMedia("(max-width: 600px), (max-height: 500px)").matches;
  const seen = boardW; // the board fits the screen (style.css): the hand spans its width
  const handTop = maxY + 20;
  const heightWith = (r) => handTop + 34 + Math.max(1, Math.ceil(hand.length / Math.max(1, Math.floor(seen / (r * R3 + 6)))))
    * (r * 2 + 6) - minY;
  // on a phone the hand's tiles keep a size to tap (about 26 px from the centre to a corner on the screen) however large
  // the table grows: the smallest radius that gives it, as the board is scaled to fit the screen's width and height
  let HR = 27;
  if (narrow && root.parentElement) {
    const wide = root.parentElement.clientWidth, high = parseFloat(getComputedStyle(root).maxHeight) || window.innerHeight;
    const onScreen = (r) => r * Math.min(wide / boardW, high / heightWith(r));
    const sizes = [27, 32, 38, 45, 54, 64].filter((r) => r <= boardW / 5);
    HR = sizes.find((r) => onScreen(r) >= 26) || sizes.reduce((a, b) => (onScreen(b) > onScreen(a) ? b : a), 27);
  }
  const HW = HR * R3 + 6, perRow = Math.max(1, Math.floor(seen / HW));
  const handX = minX + Math.max(0, (boardW - seen - 10) / 2);
  const H = heightWith(HR);
  root.setAttribute("viewBox", `${minX} ${minY} ${boardW} ${H}`);
  if (narrow && !ui.centred && root.parentElement) { // once: the table's middle in view, not its left edge
    ui.centred = true;
    const wrap = root.parentElement;
    requestAnimationFrame(() => { wrap.scrollLeft = (wrap.scrollWidth - wrap.clientWidth) / 2; });
  }
  svg("rect", {x: minX, y: minY, width: boardW, height: maxY - minY, fill: "#f7f3ea", "aria-hidden": "true"}, root);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", t("EXAGON table: the tiles placed (places written q,r, the first tile at 0,0) and a hand"));
  const seatName = (i) => names[i] || t("Seat {n}", {n: i + 1});

  // the hand (first in the focus order: a tile is chosen, then a spot on the table)
  const whose = handSeat === ctx.you ? t("Your hand ({n})", {n: hand.length})
    : t("{name}'s hand ({n})", {name: seatName(handSeat), n: hand.length});
  svg("text", {x: handX + 10, y: handTop + 12, "font-size": 15, "font-weight": "bold", fill: "#333",
    text: handSeat === null || handSeat === undefined ? "" : whose}, root);
  if (handSeat !== null && handSeat !== undefined) {
    svg("circle", {cx: handX + 190, cy: handTop + 7, r: 7, fill: colors[handSeat], "aria-hidden": "true"}, root);
  }
  const handLayer = svg("g", {class: "hand"}, root);
  hand.forEach((id, k) => {
    const x = handX + 10 + HW / 2 + (k % perRow) * HW, y = handTop + 30 + HR + Math.floor(k / perRow) * (HR * 2 + 6);
    const can = playable.has(id);
    const tile = tiles.get(id);
    const g = drawTile(handLayer, tile, x, y, HR, 0, {
      opacity: legal.length && !can ? 0.45 : 1,
      stroke: ui.tile === id ? "#d7263d" : can ? "#c08a00" : "#222", strokeWidth: ui.tile === id ? 5 : can ? 3 : 1.5,
    });
    g.setAttribute("data-hand-tile", id);
    if (can) {
      g.classList.add("clickable", "legal");
      pressable(g, ui.tile === id ? t("{tile} in your hand, chosen: press again to choose another", {tile: tileText(tile)})
        : t("{tile} in your hand: choose it", {tile: tileText(tile)}), `hand:${id}`, ui,
      () => { ui.tile = ui.tile === id ? null : id; ui.spot = null; ctx.redraw(); });
      if (ui.tile === id) g.setAttribute("aria-pressed", "true");
    } else {
      g.setAttribute("role", "img");
      g.setAttribute("aria-label", t("{tile} in the hand", {tile: tileText(tile)}));
    }
  });

  // the table
  const board = svg("g", {class: "exagon-board"}, root);
  for (const tt of pos.table) {
    const [x, y] = center(tt.at[0], tt.at[1], R);
    const tile = tiles.get(tt.tile);
    const g = drawTile(board, tile, x, y, R, tt.rot);
    const at = tt.at.join(",");
    g.setAttribute("data-cell", at); // the last move is marked on it (web/static/js/common.js)
    g.setAttribute("role", "img");
    g.setAttribute("aria-label", t("{tile} at {at}, rotation {rot}", {tile: tileText(tile), at, rot: tt.rot}));
  }
  // legal spots
  const spotLayer = svg("g", {class: "spots"}, root);
  const chosen = ui.tile !== null && ui.tile !== undefined ? ui.tile : null;
  for (const k of anySpot) {
    const [q, r] = k.split(",").map(Number);
    const [x, y] = center(q, r, R);
    const active = spots.has(k);
    const poly = svg("polygon", {points: hexPoints(x, y, R * 0.94), class: active ? "hl-place clickable legal spot" : "spot",
      fill: active ? "#ffd40055" : "#0000000d", stroke: active ? "#c08a00" : "#9a917c",
      "stroke-width": active ? 3 : 1.5, "stroke-dasharray": "6 4", "data-spot": k}, spotLayer);
    if (active) {
      const fits = spots.get(k).length;
      const label = ui.spot === k
        ? t("spot {at}, chosen for tile {tile}: press again to turn it", {at: k, tile: chosen})
        : tn("spot {at}: put tile {tile} here ({n} way fits)", "spot {at}: put tile {tile} here ({n} ways fit)", fits,
          {at: k, tile: chosen});
      pressable(poly, label, `spot:${k}`, ui, () => {
        if (ui.spot === k) { ui.rotIdx = ((ui.rotIdx || 0) + 1) % spots.get(k).length; }
        else { ui.spot = k; ui.rotIdx = 0; }
        ctx.redraw();
      });
    } else {
      poly.setAttribute("aria-hidden", "true");
    }
  }
  // the preview of the chosen placement
  if (ui.spot) {
    const [q, r] = ui.spot.split(",").map(Number);
    const [x, y] = center(q, r, R);
    const rots = spots.get(ui.spot);
    const rot = rots[(ui.rotIdx || 0) % rots.length];
    const g = drawTile(root, tiles.get(ui.tile), x, y, R, rot, {opacity: 0.9, stroke: "#f0b400", strokeWidth: 5});
    g.classList.add("clickable", "preview");
    pressable(g, t("tile {tile} shown at {at}, rotation {rot}: press to turn it, then Place tile",
      {tile: ui.tile, at: ui.spot, rot}), "preview", ui, () => { ui.rotIdx = ((ui.rotIdx || 0) + 1) % rots.length; ctx.redraw(); });
  }

  // controls
  if (!ctx.controls) { refocus(root, ui); return; }
  const c = ctx.controls;
  if (places.length && (ui.tile === null || ui.tile === undefined)) {
    c.append(h("span", {class: "muted"}, t("Choose a tile in your hand (outlined in gold), then a highlighted spot.")));
  }
  if (ui.tile !== null && ui.tile !== undefined && !ui.spot && spots.size) {
    c.append(h("span", {class: "muted"}, t("Tile {tile}: click a highlighted spot on the table.", {tile: ui.tile})));
  }
  if (ui.spot) {
    const rots = spots.get(ui.spot);
    const rot = rots[(ui.rotIdx || 0) % rots.length];
    c.append(h("button", {id: "rotate", onclick: () => { ui.rotIdx = ((ui.rotIdx || 0) + 1) % rots.length; ctx.redraw(); },
      disabled: rots.length < 2 ? true : null},
    tn("Rotate ⟳ ({n} way fits)", "Rotate ⟳ ({n} ways fit)", rots.length)));
    const [q, r] = ui.spot.split(",").map(Number);
    c.append(h("button", {class: "primary", id: "place",
      onclick: () => ctx.act({place: {tile: ui.tile, at: [q, r], rot}})}, t("Place tile")));
    c.append(h("button", {onclick: () => { ui.spot = null; ctx.redraw(); }}, t("Cancel")));
  }
  if (ui.tile !== null && ui.tile !== undefined) {
    for (const a of gives.filter((g) => g.give.tile === ui.tile)) {
      c.append(h("button", {onclick: () => ctx.act(a)}, t("Give tile {tile}: {name} gets it", {tile: ui.tile, name: seatName(a.give.to)})));
    }
  }
  const stop = legal.find((a) => a.stop);
  if (stop) c.append(h("button", {id: "stop", onclick: () => ctx.act(stop)}, t("Stop (end my turn)")));
  const pass = legal.find((a) => a.pass);
  if (pass) c.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, t("Pass")));
  refocus(root, ui);
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
// A placement is said by the tiles it went next to and the sides that matched (the placed event), never by
// coordinates or rotation numbers.

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a, who) {
  if ("deal" in a) return t("deals tile {tile}", {tile: a.deal});
  if ("place" in a) return t("places tile {tile}", {tile: a.place.tile});
  if ("give" in a) return t("gives tile {tile} away: {name} gets it", {tile: a.give.tile, name: who(a.give.to)});
  if ("stop" in a) return t("stops and ends the turn");
  if ("pass" in a) return t("passes");
  if ("timeout" in a) return t("runs out of time");
  return null;
}

/** A refused move in the player's words (the table's toast when the server refuses it). */
export function refusal(a) {
  if ("place" in a) return t("Tile {tile} cannot go there now.", {tile: a.place.tile});
  if ("give" in a) return t("You cannot give tile {tile} away now.", {tile: a.give.tile});
  if ("stop" in a) return t("You cannot stop now.");
  if ("pass" in a) return t("You cannot pass now.");
  return null;
}

/** Where a tile went: next to which tiles (those it matches: under lenient matching a touched tile whose side
 * does not match is not named), and how many sides matched. */
function placedText(e) {
  const next = e.next_to || [];
  if (!next.length) {
    if (e.opening && !e.connections) return t("in the middle of the table");
    return tn("{n} side matches", "{n} sides match", e.connections || 0);
  }
  const tiles = andList(next.map(String));
  if (next.length === 1) return t("next to tile {tiles}: 1 side matches", {tiles});
  return tn("next to tiles {tiles}: {n} side matches", "next to tiles {tiles}: {n} sides match", next.length, {tiles});
}

/** A chance outcome in words (``seat``: whom it is for, or null). */
export function outcome(o, seat, who) {
  if (!("deal" in o)) return null;
  return seat === null || seat === undefined ? t("tile {tile} is drawn", {tile: o.deal})
    : t("{name} is dealt tile {tile}", {name: who(seat), tile: o.deal});
}

const REASONS = {
  last_tile: () => t("a hand is empty"), perfect_fit: () => t("a perfect fit"), blocked: () => t("every player passed"),
  turn_limit: () => t("the turn limit"),
};

const scoresText = (scores, who) => (scores || []).map((p, i) => `${who(i)} ${p}`).join(", ");

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  placed: (e) => placedText(e), // the move says which tile; this says where it went
  given: () => null,
  stop: () => null,
  pass: () => null,
  dealt: (e, who) => t("{name} is dealt tile {tile}", {name: who(e.seat), tile: e.tile}),
  table_tile: (e) => t("tile {tile} starts the table", {tile: e.tile}),
  set_aside: (e) => tn("{n} tile is set aside unseen", "{n} tiles are set aside unseen", e.count),
  // (the events name no connections: how many earn a bonus and go on is the table's, options bonus_3.. and go_on)
  bonus_earned: (e, who) => tn("{name} earns {n} bonus with this tile's connections; the turn goes on",
    "{name} earns {n} bonuses with this tile's connections; the turn goes on", e.count, {name: who(e.seat)}),
  bonus_spent: (e, who) => t("{name} spends a bonus: the tile has too few connections, but the turn goes on",
    {name: who(e.seat)}),
  bonuses_lost: (e, who) => tn("{name} loses {n} unspent bonus", "{name} loses {n} unspent bonuses", e.count,
    {name: who(e.seat)}),
  perfect_fit: (e, who) => t("all six sides of tile {tile} match: a perfect fit for {name}!",
    {name: who(e.seat), tile: e.tile}),
  hourglass: () => null, // the clock shows it
  timeout: (e, who) => timeoutText(e, who), // the shared event, said with what it cost
  new_game: (e, who) => t("the next game of the tournament is dealt (points: {scores})", {scores: scoresText(e.scores, who)}),
  tournament_game: (e, who) => tn("a game of the tournament is over ({reason}): {names} won; points: {scores}",
    "a game of the tournament is over ({reason}): {names} won; points: {scores}", (e.winners || []).length,
    {reason: REASONS[e.reason] ? REASONS[e.reason]() : e.reason, names: andList((e.winners || []).map(who)),
      scores: scoresText(e.scores, who)}),
};

/** The hourglass running out (the shared ``timeout`` event, with what it cost). */
function timeoutText(e, who) {
  const n = e.bonuses_lost || 0;
  if (n > 0) {
    return tn("{name}'s hourglass ran out: the turn ends and {n} unspent bonus is lost",
      "{name}'s hourglass ran out: the turn ends and {n} unspent bonuses are lost", n, {name: who(e.seat)});
  }
  return t("{name}'s hourglass ran out: the turn ends", {name: who(e.seat)});
}

/** Consecutive chance entries of one kind shown as one log line (the deal of the hands). */
export const LOG_GROUPS = {
  deal: (entries) => t("the tiles are dealt ({n})", {n: entries.length}),
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {perfect_fit: true, bonus_earned: true, bonuses_lost: true, tournament_game: true,
  timeout: true};

/** The places of the last move ("q,r"): the tile placed (or the table's first tile). */
export function lastMoveCells(events) {
  const out = [];
  for (const e of events) {
    if ((e.kind === "placed" || e.kind === "table_tile") && Array.isArray(e.at)) out.push(e.at.join(","));
  }
  return out;
}

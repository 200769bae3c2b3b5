// TOHM: the numbered grid, the players' tokens, the die and the trophies.
import {drawDie, h, key, pressable, refocus, shortName, svg} from "/static/js/common.js";
import {t, tn} from "/static/js/i18n.js";

const CELL = 84;
const NUMBER_TINT = {3: "#f6e7c8", 4: "#e3efd9", 5: "#dbe8f4", 6: "#f1dde6"};

// What each die face (1 to 6) does on RULES.md's die; a table with another die says it in its position's
// "faces" (face_keys in games/tohm/__init__.py): "nothing", "remove", "move", "place" or "place_anywhere".
const RULEBOOK_FACES = ["remove", "move", "place", "place", "place", "place"];

/** What a roll of ``r`` does at the table whose position is ``pos``. */
export function faceKind(pos, r) {
  return (Array.isArray(pos.faces) && pos.faces.length === 6 ? pos.faces : RULEBOOK_FACES)[r - 1];
}

/** The trophies the table started with (option ``trophies``): those left and those taken. */
export function trophiesTotal(pos) {
  return pos.trophies_left + pos.trophies.reduce((s, x) => s + x, 0);
}

export function phaseText(pos, ctx) {
  if (pos.phase === "over") return t("game over");
  if (pos.phase === "roll") return t("rolling the die…");
  const r = pos.roll;
  const kind = faceKind(pos, r);
  if (kind === "remove") return t("rolled {roll} — remove any token", {roll: r});
  if (kind === "move") return t("rolled {roll} — move any token to an empty cell", {roll: r});
  if (kind === "place_anywhere") return t("rolled {roll} — place a token on any empty cell", {roll: r});
  if (kind === "nothing") return t("rolled {roll} — this face does nothing: the turn passes", {roll: r});
  return t("rolled {roll} — place a token on an empty {roll}", {roll: r});
}

export function seatInfo(pos, i) {
  const tr = pos.trophies[i], sup = pos.supply[i];
  return [tn("{n} trophy", "{n} trophies", tr), tn("{n} token in supply", "{n} tokens in supply", sup)].join(" · ");
}

/** A cell as the board labels it: its column's letter and its row's number ("B3": second column, third row). */
export function cellName(c) {
  const [r, col] = (Array.isArray(c) ? c : String(c).split(",")).map(Number);
  return `${String.fromCharCode(65 + col)}${r + 1}`;
}

function monster(parent, cx, cy, r, color, seat) {
  const g = svg("g", {class: "token", "data-seat": seat}, parent);
  svg("circle", {cx, cy, r, fill: color, stroke: "#222", "stroke-width": 2}, g);
  // a small horrible monster: two eyes and a jagged mouth
  svg("circle", {cx: cx - r * 0.35, cy: cy - r * 0.2, r: r * 0.2, fill: "#fff"}, g);
  svg("circle", {cx: cx + r * 0.35, cy: cy - r * 0.2, r: r * 0.2, fill: "#fff"}, g);
  svg("circle", {cx: cx - r * 0.35, cy: cy - r * 0.17, r: r * 0.09, fill: "#111"}, g);
  svg("circle", {cx: cx + r * 0.35, cy: cy - r * 0.17, r: r * 0.09, fill: "#111"}, g);
  const m = [];
  for (let k = 0; k <= 6; k++) m.push(`${cx - r * 0.5 + k * r / 6},${cy + r * 0.3 + (k % 2 ? r * 0.18 : 0)}`);
  svg("polyline", {points: m.join(" "), fill: "none", stroke: "#fff", "stroke-width": 2.5}, g);
  return g;
}

function trophy(parent, x, y, s, color) {
  const g = svg("g", {transform: `translate(${x},${y})`}, parent);
  svg("path", {d: `M${s * 0.2} 0 H${s * 0.8} V${s * 0.3} C${s * 0.8} ${s * 0.6} ${s * 0.2} ${s * 0.6} ${s * 0.2} ${s * 0.3} Z`,
    fill: color, stroke: "#7a5b00", "stroke-width": 1.2}, g);
  svg("rect", {x: s * 0.45, y: s * 0.5, width: s * 0.1, height: s * 0.25, fill: color}, g);
  svg("rect", {x: s * 0.28, y: s * 0.75, width: s * 0.44, height: s * 0.12, fill: color, stroke: "#7a5b00", "stroke-width": 1}, g);
  return g;
}

export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const rows = pos.rows, cols = pos.cols;
  const W = cols * CELL, H = rows * CELL;
  const side = 240;
  const root = ctx.svg;
  // phones (the max-width of style.css's phone block): the die and the trophies go under the board, not beside it
  const stacked = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const vbW = stacked ? Math.max(W, side) + 36 : W + side + 36;
  // a phone with a wide board: the players' trophies beside the die and the trophies left, all a little larger
  const twoCol = stacked && W >= 390;
  const sideScale = twoCol ? Math.min(1.3, W / 390) : 1;
  const sideH = twoCol ? Math.max(200, 20 + pos.players * 24) * sideScale : 200 + pos.players * 24;
  const vbH = stacked ? H + 36 + sideH + 10 : Math.max(H, 330) + 36;
  root.setAttribute("viewBox", `-26 -26 ${vbW} ${vbH}`);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", t("TOHM board: {rows} rows by {cols} columns, cells named by column letter and row number",
    {rows, cols}));
  const seatName = (s) => names[s] || t("Seat {n}", {n: s + 1});

  const places = new Map(), removes = new Map(), moves = new Map();
  for (const a of legal) {
    if (a.place) places.set(key(a.place), a);
    else if (a.remove) removes.set(key(a.remove), a);
    else if (a.move) {
      const k = key(a.move[0]);
      if (!moves.has(k)) moves.set(k, []);
      moves.get(k).push(a);
    }
  }
  const from = ui.moveFrom;
  const targets = new Map();
  if (from && moves.has(from)) for (const a of moves.get(from)) targets.set(key(a.move[1]), a);

  // the columns' letters and the rows' numbers the texts name cells by (cellName)
  const coords = svg("g", {class: "coords", "aria-hidden": "true"}, root);
  for (let c = 0; c < cols; c++) {
    svg("text", {x: c * CELL + CELL / 2, y: -8, "text-anchor": "middle", "font-size": 14, fill: "#5c5342",
      text: String.fromCharCode(65 + c)}, coords);
  }
  for (let r = 0; r < rows; r++) {
    svg("text", {x: -14, y: r * CELL + CELL / 2 + 5, "text-anchor": "middle", "font-size": 14, fill: "#5c5342", text: r + 1},
      coords);
  }

  const board = svg("g", {class: "tohm-board"}, root);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const n = pos.layout[r][c];
      const x = c * CELL, y = r * CELL, k = `${r},${c}`;
      const cell = svg("g", {class: "cell", "data-cell": k}, board);
      svg("rect", {x, y, width: CELL, height: CELL, fill: NUMBER_TINT[n] || "#eee", stroke: "#8a7f6a", "stroke-width": 2}, cell);
      svg("text", {x: x + CELL / 2, y: y + CELL / 2, "text-anchor": "middle", "dominant-baseline": "central",
        "font-size": 40, "font-weight": "bold", fill: "#0002", text: n}, cell);
      svg("text", {x: x + 8, y: y + 18, "font-size": 15, fill: "#5c5342", "font-weight": "bold", text: n}, cell);
      const owner = pos.board[r][c];
      const taken = owner !== null && owner !== undefined;
      if (taken) monster(cell, x + CELL / 2, y + CELL / 2, CELL * 0.32, colors[owner], owner);
      // what the cell is, for a screen reader: its place, its number and whose token is on it
      const what = taken ? t("cell {cell} (number {number}), {name}'s token", {cell: cellName(k), number: n, name: seatName(owner)})
        : t("cell {cell} (number {number}), empty", {cell: cellName(k), number: n});
      let action = null, cls = null, label = "";
      if (places.has(k)) { action = places.get(k); cls = "hl-place"; label = t("{cell}: place a token here", {cell: what}); }
      else if (removes.has(k)) { action = removes.get(k); cls = "hl-remove"; label = t("{cell}: remove this token", {cell: what}); }
      else if (targets.has(k)) { action = targets.get(k); cls = "hl-place"; label = t("{cell}: move the token here", {cell: what}); }
      if (from === k) svg("rect", {x: x + 3, y: y + 3, width: CELL - 6, height: CELL - 6, class: "hl-select"}, cell);
      if (action) {
        svg("rect", {x: x + 4, y: y + 4, width: CELL - 8, height: CELL - 8, rx: 6, class: cls}, cell);
        cell.classList.add("clickable", "legal");
        pressable(cell, label, `cell:${k}`, ui, () => ctx.act(action));
      } else if (moves.has(k)) {
        if (from !== k) svg("rect", {x: x + 4, y: y + 4, width: CELL - 8, height: CELL - 8, rx: 6, class: "hl-place",
          style: "fill:none"}, cell);
        cell.classList.add("clickable", "legal", "move-from");
        label = from === k ? t("{cell}: chosen to move; press again to choose another token", {cell: what})
          : t("{cell}: choose this token to move", {cell: what});
        pressable(cell, label, `cell:${k}`, ui, () => { ui.moveFrom = from === k ? null : k; ctx.redraw(); });
        if (from === k) cell.setAttribute("aria-pressed", "true");
      } else {
        cell.setAttribute("role", "img");
        cell.setAttribute("aria-label", what);
      }
    }
  }

  // side: the die, the trophies left, the players' trophies
  const sx = stacked ? 0 : W + 30;
  const side0 = stacked ? H + 20 : 0;
  const sideG = svg("g", {class: "side", transform: `translate(0, ${side0}) scale(${sideScale})`}, root);
  svg("text", {x: sx, y: 14, "font-size": 14, fill: "#444", text: t("Die")}, sideG);
  const die = drawDie(sideG, sx, 24, 64, pos.roll, {dim: pos.roll === null});
  die.setAttribute("role", "img");
  die.setAttribute("aria-label", pos.roll === null ? t("the die, not rolled yet") : t("the die shows {n}", {n: pos.roll}));
  const total = trophiesTotal(pos);
  svg("text", {x: sx, y: 118, "font-size": 14, fill: "#444",
    text: tn("Trophies left: {left} of {n}", "Trophies left: {left} of {n}", total, {left: pos.trophies_left})}, sideG);
  // the trophies left as cups in two rows (as many as the table has, up to 20); more: one cup and their number
  const cups = svg("g", {"aria-hidden": "true"}, sideG);
  if (total <= 20) {
    const perRow = Math.max(5, Math.ceil(total / 2)), step = Math.min(30, 150 / perRow);
    for (let k = 0; k < pos.trophies_left; k++) {
      trophy(cups, sx + (k % perRow) * step, 126 + Math.floor(k / perRow) * step, step - 4, "#f2c94c");
    }
  } else if (pos.trophies_left) {
    trophy(cups, sx, 126, 26, "#f2c94c");
    svg("text", {x: sx + 32, y: 146, "font-size": 16, "font-weight": "bold", fill: "#444", text: `× ${pos.trophies_left}`}, cups);
  }
  let y = twoCol ? 4 : 200;
  const px = twoCol ? sx + 165 : sx;
  for (let i = 0; i < pos.players; i++) {
    svg("circle", {cx: px + 8, cy: y + 8, r: 8, fill: colors[i], stroke: "#222", "aria-hidden": "true"}, sideG);
    const p = {name: shortName(names[i], 12), trophies: pos.trophies[i], supply: pos.supply[i]};
    svg("text", {x: px + 22, y: y + 13, "font-size": 13, fill: "#222",
      text: tn("{name}: {n} troph. · {supply} left", "{name}: {n} troph. · {supply} left", pos.trophies[i], p)},
    sideG);
    y += 24;
  }

  if (from && ctx.controls) {
    ctx.controls.append(h("span", {class: "muted"}, t("Now click an empty cell to move the token there.")),
      h("button", {onclick: () => { ui.moveFrom = null; ctx.redraw(); }}, t("Cancel")));
  }
  const pass = legal.find((a) => a.pass);
  if (pass && ctx.controls) {
    ctx.controls.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, t("Pass")));
  }
  refocus(root, ui);
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
// Cells are named as the board labels them (cellName): column letter and row number, "B3".

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a) {
  if ("roll" in a) return t("rolls {n}", {n: a.roll});
  if ("place" in a) return t("places a token on {cell}", {cell: cellName(a.place)});
  if ("remove" in a) return t("removes the token on {cell}", {cell: cellName(a.remove)});
  if ("move" in a) return t("moves the token on {from} to {to}", {from: cellName(a.move[0]), to: cellName(a.move[1])});
  if ("pass" in a) return t("passes");
  return null;
}

/** A refused move in the player's words (the table's toast when the server refuses it). */
export function refusal(a) {
  if ("place" in a) return t("You cannot place a token on {cell} now.", {cell: cellName(a.place)});
  if ("remove" in a) return t("You cannot remove the token on {cell} now.", {cell: cellName(a.remove)});
  if ("move" in a) return t("You cannot move the token on {from} to {to} now.", {from: cellName(a.move[0]), to: cellName(a.move[1])});
  if ("pass" in a) return t("You cannot pass now.");
  return null;
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  placed: () => null, // the move itself says it
  moved: () => null,
  removed: (e, who) => (e.owner !== undefined && e.owner !== e.seat
    ? t("{name}'s token goes back to the supply", {name: who(e.owner)}) : null),
  pass: () => null, // the move itself says it
  tris: (e, who) => {
    const p = {name: who(e.owner), cells: (e.cells || []).map(cellName).join(" "), left: e.trophies_left};
    const row = e.line === "row";
    if (!e.trophy) {
      return row ? t("tris for {name} in a row ({cells}): no trophy left to take", p)
        : t("tris for {name} in a column ({cells}): no trophy left to take", p);
    }
    if (e.trophies_left === 1) {
      return row ? t("tris for {name} in a row ({cells}): a trophy, 1 left", p)
        : t("tris for {name} in a column ({cells}): a trophy, 1 left", p);
    }
    return row ? t("tris for {name} in a row ({cells}): a trophy, {left} left", p)
      : t("tris for {name} in a column ({cells}): a trophy, {left} left", p);
  },
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {tris: true};

/** The cells of the last move ("r,c"): where a token was placed, or where it moved from and to. */
export function lastMoveCells(events) {
  const out = [];
  for (const e of events) {
    if (e.kind === "placed" || e.kind === "removed") out.push(`${e.cell[0]},${e.cell[1]}`);
    else if (e.kind === "moved") out.push(`${e.from[0]},${e.from[1]}`, `${e.to[0]},${e.to[1]}`);
  }
  return out;
}

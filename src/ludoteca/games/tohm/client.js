// TOHM: the numbered grid, the players' tokens, the die and the trophies.
import {drawDie, h, key, svg} from "/static/js/common.js";

const CELL = 84;
const NUMBER_TINT = {3: "#f6e7c8", 4: "#e3efd9", 5: "#dbe8f4", 6: "#f1dde6"};

export function phaseText(pos, ctx) {
  if (pos.phase === "over") return "game over";
  if (pos.phase === "roll") return "rolling the die…";
  const r = pos.roll;
  const what = r === 1 ? "remove any token" : r === 2 ? "move any token to an empty cell"
    : `place a token on an empty ${r}`;
  return `rolled ${r} — ${what}`;
}

export function seatInfo(pos, i) {
  return `${pos.trophies[i]} troph${pos.trophies[i] === 1 ? "y" : "ies"} · ${pos.supply[i]} token${pos.supply[i] === 1 ? "" : "s"} in supply`;
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
  const side = 200;
  const root = ctx.svg;
  // phones (the max-width of style.css's phone block): the die and the trophies go under the board, not beside it
  const stacked = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const vbW = stacked ? Math.max(W, side) + 20 : W + side + 20;
  const vbH = stacked ? H + 20 + 200 + pos.players * 24 + 10 : Math.max(H, 330) + 20;
  root.setAttribute("viewBox", `-10 -10 ${vbW} ${vbH}`);
  // phones (style.css): the board keeps its natural scale (a cell 84 px, readable text) and scrolls
  root.style.setProperty("--board-min-width", `${vbW}px`);

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
      if (owner !== null && owner !== undefined) monster(cell, x + CELL / 2, y + CELL / 2, CELL * 0.32, colors[owner], owner);
      let action = null, cls = null;
      if (places.has(k)) { action = places.get(k); cls = "hl-place"; }
      else if (removes.has(k)) { action = removes.get(k); cls = "hl-remove"; }
      else if (targets.has(k)) { action = targets.get(k); cls = "hl-place"; }
      if (from === k) svg("rect", {x: x + 3, y: y + 3, width: CELL - 6, height: CELL - 6, class: "hl-select"}, cell);
      if (action) {
        svg("rect", {x: x + 4, y: y + 4, width: CELL - 8, height: CELL - 8, rx: 6, class: cls}, cell);
        cell.classList.add("clickable", "legal");
        cell.addEventListener("click", () => ctx.act(action));
      } else if (moves.has(k)) {
        if (from !== k) svg("rect", {x: x + 4, y: y + 4, width: CELL - 8, height: CELL - 8, rx: 6, class: "hl-place",
          style: "fill:none"}, cell);
        cell.classList.add("clickable", "legal", "move-from");
        cell.addEventListener("click", () => { ui.moveFrom = from === k ? null : k; ctx.redraw(); });
      }
    }
  }

  // side: the die, the trophies left, the players' trophies
  const sx = stacked ? 0 : W + 30;
  const side0 = stacked ? H + 20 : 0;
  const sideG = svg("g", {class: "side", transform: `translate(0, ${side0})`}, root);
  svg("text", {x: sx, y: 14, "font-size": 14, fill: "#444", text: "Die"}, sideG);
  drawDie(sideG, sx, 24, 64, pos.roll, {dim: pos.roll === null});
  svg("text", {x: sx, y: 118, "font-size": 14, fill: "#444", text: `Trophies left: ${pos.trophies_left}`}, sideG);
  for (let k = 0; k < pos.trophies_left; k++) trophy(sideG, sx + (k % 5) * 30, 126 + Math.floor(k / 5) * 30, 26, "#f2c94c");
  let y = 200;
  for (let i = 0; i < pos.players; i++) {
    svg("circle", {cx: sx + 8, cy: y + 8, r: 8, fill: colors[i], stroke: "#222"}, sideG);
    svg("text", {x: sx + 22, y: y + 13, "font-size": 13, fill: "#222",
      text: `${(names[i] || "").slice(0, 12)}: ${pos.trophies[i]} troph. · ${pos.supply[i]} left`}, sideG);
    y += 24;
  }

  if (from && ctx.controls) {
    ctx.controls.append(h("span", {class: "muted"}, "Now click an empty cell to move the token there."),
      h("button", {onclick: () => { ui.moveFrom = null; ctx.redraw(); }}, "Cancel"));
  }
  const pass = legal.find((a) => a.pass);
  if (pass && ctx.controls) ctx.controls.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, "Pass"));
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
const cell = (c) => `row ${c[0] + 1} col ${c[1] + 1}`;

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a) {
  if ("roll" in a) return `rolls ${a.roll}`;
  if ("place" in a) return `places on ${cell(a.place)}`;
  if ("remove" in a) return `removes the token on ${cell(a.remove)}`;
  if ("move" in a) return `moves ${cell(a.move[0])} → ${cell(a.move[1])}`;
  return null;
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  placed: () => null, // the move itself says it
  moved: () => null,
  removed: (e, who) => (e.owner !== undefined && e.owner !== e.seat ? `${who(e.owner)}'s token goes back` : null),
  pass: () => null, // the move itself says it
  tris: (e, who) => `tris for ${who(e.owner)} (${e.line})${e.trophy ? ": a trophy" : ""}`
    + (e.trophies_left !== undefined ? `, ${e.trophies_left} left` : ""),
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

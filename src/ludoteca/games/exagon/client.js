// EXAGON: hexagonal tiles with coloured numbers, legal spots, rotation, the hand and bonuses.
import {h, svg} from "/static/js/common.js";

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

/** Draw tile ``t`` centred at (x, y), corner radius R, rotation rot. */
export function drawTile(parent, t, x, y, R, rot, opts = {}) {
  const g = svg("g", {class: "tile", "data-tile": t.id, opacity: opts.opacity}, parent);
  for (let i = 0; i < 6; i++) {
    const d = (i + rot) % 6;
    const th = (-60 * d * Math.PI) / 180;
    const a1 = th - Math.PI / 6, a2 = th + Math.PI / 6;
    const v = t.sides[i];
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
      "font-weight": "bold", fill: "#5c4300", text: t.star}, g);
  }
  return g;
}

export function phaseText(pos, ctx) {
  if (pos.phase === "deal") return "dealing…";
  if (pos.phase === "over") return "game over";
  if (pos.phase === "opening") return pos.table.length ? "attach one tile touching the first" : "put any tile in the middle";
  const bonus = pos.bonus ? ` · ${pos.bonus} bonus${pos.bonus === 1 ? "" : "es"}` : "";
  return `placed ${pos.placed_this_turn} tile${pos.placed_this_turn === 1 ? "" : "s"} this turn${bonus}`;
}

export function seatInfo(pos, i) {
  const n = pos.hands[i].length;
  const score = pos.scores ? ` · ${pos.scores[i]} points` : "";
  return `${n} tile${n === 1 ? "" : "s"} in hand${score}`;
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
  const narrow = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const seen = narrow && root.parentElement ? Math.min(boardW, root.parentElement.clientWidth / 1.3 - 10) : boardW;
  const HR = 27, HW = HR * R3 + 6, perRow = Math.max(1, Math.floor(seen / HW));
  const handX = minX + Math.max(0, (boardW - seen - 10) / 2); // under the middle of the table, shown first on phones
  const handRows = Math.max(1, Math.ceil(hand.length / perRow));
  const handTop = maxY + 20;
  const H = handTop + 34 + handRows * (HR * 2 + 6) - minY;
  root.setAttribute("viewBox", `${minX} ${minY} ${boardW} ${H}`);
  // phones (style.css): never smaller than this (a hand tile 61 px wide, its numbers 12 px), the board scrolls
  root.style.setProperty("--board-min-width", `${Math.round(boardW * 1.3)}px`);
  if (narrow && !ui.centred && root.parentElement) { // once: the table's middle in view, not its left edge
    ui.centred = true;
    const wrap = root.parentElement;
    requestAnimationFrame(() => { wrap.scrollLeft = (wrap.scrollWidth - wrap.clientWidth) / 2; });
  }
  svg("rect", {x: minX, y: minY, width: boardW, height: maxY - minY, fill: "#f7f3ea"}, root);

  // the table
  const board = svg("g", {class: "exagon-board"}, root);
  for (const t of pos.table) {
    const [x, y] = center(t.at[0], t.at[1], R);
    drawTile(board, tiles.get(t.tile), x, y, R, t.rot);
  }
  // legal spots
  const spotLayer = svg("g", {class: "spots"}, root);
  for (const k of anySpot) {
    const [q, r] = k.split(",").map(Number);
    const [x, y] = center(q, r, R);
    const active = spots.has(k);
    const poly = svg("polygon", {points: hexPoints(x, y, R * 0.94), class: active ? "hl-place clickable legal spot" : "spot",
      fill: active ? "#ffd40055" : "#0000000d", stroke: active ? "#c08a00" : "#9a917c",
      "stroke-width": active ? 3 : 1.5, "stroke-dasharray": "6 4", "data-spot": k}, spotLayer);
    if (active) {
      poly.addEventListener("click", () => {
        if (ui.spot === k) { ui.rotIdx = ((ui.rotIdx || 0) + 1) % spots.get(k).length; }
        else { ui.spot = k; ui.rotIdx = 0; }
        ctx.redraw();
      });
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
    g.addEventListener("click", () => { ui.rotIdx = ((ui.rotIdx || 0) + 1) % rots.length; ctx.redraw(); });
  }

  // the hand
  const who = handSeat === ctx.you ? "Your hand" : `${names[handSeat] || ""}'s hand`;
  svg("text", {x: handX + 10, y: handTop + 12, "font-size": 15, "font-weight": "bold", fill: "#333",
    text: handSeat === null || handSeat === undefined ? "" : `${who} (${hand.length})`}, root);
  if (handSeat !== null && handSeat !== undefined) {
    svg("circle", {cx: handX + 190, cy: handTop + 7, r: 7, fill: colors[handSeat]}, root);
  }
  const handLayer = svg("g", {class: "hand"}, root);
  hand.forEach((id, k) => {
    const x = handX + 10 + HW / 2 + (k % perRow) * HW, y = handTop + 30 + HR + Math.floor(k / perRow) * (HR * 2 + 6);
    const can = playable.has(id);
    const g = drawTile(handLayer, tiles.get(id), x, y, HR, 0, {
      opacity: legal.length && !can ? 0.45 : 1,
      stroke: ui.tile === id ? "#d7263d" : can ? "#c08a00" : "#222", strokeWidth: ui.tile === id ? 5 : can ? 3 : 1.5,
    });
    g.setAttribute("data-hand-tile", id);
    if (can) {
      g.classList.add("clickable", "legal");
      g.addEventListener("click", () => { ui.tile = ui.tile === id ? null : id; ui.spot = null; ctx.redraw(); });
    }
  });

  // controls
  if (!ctx.controls) return;
  const c = ctx.controls;
  if (places.length && (ui.tile === null || ui.tile === undefined)) {
    c.append(h("span", {class: "muted"}, "Choose a tile in your hand (outlined in gold), then a highlighted spot."));
  }
  if (ui.tile !== null && ui.tile !== undefined && !ui.spot && spots.size) {
    c.append(h("span", {class: "muted"}, `Tile ${ui.tile}: click a highlighted spot on the table.`));
  }
  if (ui.spot) {
    const rots = spots.get(ui.spot);
    const rot = rots[(ui.rotIdx || 0) % rots.length];
    c.append(h("button", {id: "rotate", onclick: () => { ui.rotIdx = ((ui.rotIdx || 0) + 1) % rots.length; ctx.redraw(); },
      disabled: rots.length < 2 ? true : null}, `Rotate ⟳ (${rots.length} fit${rots.length === 1 ? "s" : ""})`));
    const [q, r] = ui.spot.split(",").map(Number);
    c.append(h("button", {class: "primary", id: "place",
      onclick: () => ctx.act({place: {tile: ui.tile, at: [q, r], rot}})}, "Place tile"));
    c.append(h("button", {onclick: () => { ui.spot = null; ctx.redraw(); }}, "Cancel"));
  }
  if (ui.tile !== null && ui.tile !== undefined) {
    for (const a of gives.filter((g) => g.give.tile === ui.tile)) {
      c.append(h("button", {onclick: () => ctx.act(a)}, `Give tile ${ui.tile} to ${names[a.give.to]}`));
    }
  }
  const stop = legal.find((a) => a.stop);
  if (stop) c.append(h("button", {id: "stop", onclick: () => ctx.act(stop)}, "Stop (end my turn)"));
  const pass = legal.find((a) => a.pass);
  if (pass) c.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, "Pass"));
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a, who) {
  if ("deal" in a) return `deals tile ${a.deal}`;
  if ("place" in a) return `places tile ${a.place.tile} at ${a.place.at.join(",")} (rotation ${a.place.rot})`;
  if ("give" in a) return `gives tile ${a.give.tile} to ${who(a.give.to)}`;
  return null;
}

/** A chance outcome in words (``seat``: whom it is for, or null). */
export function outcome(o, seat, who) {
  if (!("deal" in o)) return null;
  return seat === null || seat === undefined ? `tile ${o.deal} is drawn` : `${who(seat)} is dealt tile ${o.deal}`;
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  placed: () => null, // the move itself says it
  given: () => null,
  stop: () => null,
  pass: () => null,
  dealt: (e, who) => `${who(e.seat)} is dealt tile ${e.tile}`,
  table_tile: (e) => `tile ${e.tile} starts the table`,
  set_aside: (e) => `${e.count} tile${e.count === 1 ? " is" : "s are"} set aside`,
  bonus_earned: (e, who) => `${who(e.seat)} earns ${e.count} bonus${e.count === 1 ? "" : "es"}`,
  bonus_spent: (e, who) => `${who(e.seat)} spends a bonus`,
  bonuses_lost: (e, who) => `${who(e.seat)} loses ${e.count} bonus${e.count === 1 ? "" : "es"}`,
  perfect_fit: (e, who) => `${who(e.seat)}: a perfect fit with tile ${e.tile}`,
  hourglass: () => null, // the clock shows it
  new_game: () => "a new game of the tournament begins",
  tournament_game: (e, who) => `game won by ${(e.winners || []).map(who).join(" and ")}`,
};

/** Consecutive chance entries of one kind shown as one log line (the deal of the hands). */
export const LOG_GROUPS = {
  deal: (entries) => `the tiles are dealt (${entries.length})`,
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {perfect_fit: true, bonus_earned: true, bonuses_lost: true, tournament_game: true};

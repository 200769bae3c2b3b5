// TRI: a torus of squares cut into four triangles; owners, closed squares, battles and cards.
import {drawDie, h, key, svg} from "/static/js/common.js";

const DIRS = ["N", "E", "S", "W"];
const KIND_STYLE = {
  place: {stroke: "#c08a00", fill: "#ffd40066"}, expand: {stroke: "#c08a00", fill: "#ffd40066"},
  attack: {stroke: "#111", fill: "#ffffff55", dash: "2 3"}, void: {stroke: "#111", fill: "#00000044"},
  teleport: {stroke: "#c08a00", fill: "#ffffff88", dash: "4 3"},
};
// teleport="move": the unit of the closed square that would leave (after a target is chosen)
const FROM_STYLE = {stroke: "#1a5fb4", fill: "#1a5fb455", dash: "3 2"};

function teleportText(a) {
  const tp = a.teleport;
  const sq = tp.square.join(",");
  return tp.from ? `move the unit on ${sq} ${tp.from} here` : `teleport from square ${sq}`;
}

function triPoints(r, c, d, S) {
  const x = c * S, y = r * S, cx = x + S / 2, cy = y + S / 2;
  const pts = {
    N: [[x, y], [x + S, y], [cx, cy]], E: [[x + S, y], [x + S, y + S], [cx, cy]],
    S: [[x + S, y + S], [x, y + S], [cx, cy]], W: [[x, y + S], [x, y], [cx, cy]],
  }[d];
  return pts.map((p) => p.join(",")).join(" ");
}

function triCenter(r, c, d, S) {
  const x = c * S, y = r * S;
  const off = {N: [0.5, 0.22], E: [0.78, 0.5], S: [0.5, 0.78], W: [0.22, 0.5]}[d];
  return [x + off[0] * S, y + off[1] * S];
}

function units(pos) {
  const count = new Array(pos.players).fill(0);
  for (const o of Object.values(pos.owner)) count[o] += 1;
  return count;
}

export function phaseText(pos, ctx) {
  const nm = ctx.names || [];
  if (pos.phase === "place") return `round 1 — place a unit not adjacent to any other`;
  if (pos.phase === "act") return `round ${pos.round} — expand, attack or teleport`;
  if (pos.phase === "income_roll") return "card income roll…";
  if (pos.phase === "tiebreak") return "tie-break: who is out?";
  if (pos.phase === "over") return "game over";
  if (pos.phase === "battle" && pos.battle) {
    const b = pos.battle;
    const step = {attacker_roll: "attacker rolls", defender_roll: "defender rolls",
      attacker_card: `${nm[b.attacker]} chooses a secret card`, defender_card: `${nm[b.defender]} chooses a secret card`,
      void: `${nm[b.defender]} picks an attacking unit to remove`}[b.step] || b.step;
    return `battle: ${nm[b.attacker]} attacks ${nm[b.defender]} — ${step}`;
  }
  return pos.phase;
}

export function seatInfo(pos, i) {
  const u = units(pos)[i];
  const alive = pos.alive[i] ? "" : " · out";
  return `${u} unit${u === 1 ? "" : "s"} · cards ${pos.hands[i].map((v) => "+" + v).join(" ") || "none"}${alive}`;
}

function card(parent, x, y, value, opts = {}) {
  const w = opts.w || 34, hgt = opts.h || 48;
  const g = svg("g", {class: "card" + (opts.legal ? " clickable legal" : ""), "data-card": value}, parent);
  const back = value === null || value === undefined;
  svg("rect", {x, y, width: w, height: hgt, rx: 5, fill: back ? "#5a4a8a" : "#fffdf5",
    stroke: opts.legal ? "#c08a00" : "#555", "stroke-width": opts.legal ? 3.5 : 1.2}, g);
  svg("text", {x: x + w / 2, y: y + hgt / 2 + 1, "text-anchor": "middle", "dominant-baseline": "central",
    "font-size": Math.max(12, w * 0.45), "font-weight": "bold", fill: back ? "#fff" : "#222", text: back ? "?" : `+${value}`}, g);
  if (opts.legal) g.addEventListener("click", opts.onclick);
  return g;
}

export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const root = ctx.svg;
  const n = pos.size;
  const S = Math.min(96, 520 / n);
  const B = n * S;
  const M = S * 0.45;
  const side = 300;
  // phones (the max-width of style.css's phone block): the battle and the hands go under the board, not beside it
  const stacked = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const panelH = (pos.battle ? 204 : 0) + 34 + pos.players * 48;
  const vbW = stacked ? Math.max(B + 2 * M + 12, side + 12) : B + 2 * M + 12 + side;
  const vbH = stacked ? B + 2 * M + 40 + panelH : Math.max(B + 2 * M + 40, 470);
  root.setAttribute("viewBox", `${-M - 6} ${-M - 6} ${vbW} ${vbH}`);
  // phones (style.css): never smaller than this, so a triangle is >= 48 px tall and the panel text readable
  root.style.setProperty("--board-min-width", `${Math.round(vbW * Math.max(1, 96 / S))}px`);

  // legal actions by triangle
  const byTri = new Map();
  const add = (t, kind, a) => {
    const k = key(t);
    if (!byTri.has(k)) byTri.set(k, []);
    byTri.get(k).push({kind, a});
  };
  for (const a of legal) {
    for (const kind of ["place", "expand", "attack", "void"]) if (kind in a) add(a[kind], kind, a);
    if (a.teleport) add(a.teleport.to, "teleport", a);
  }

  // ghost copies across the wrapping edges (the board is a torus)
  const defs = svg("defs", {}, root);
  const clip = svg("clipPath", {id: "tri-wrap"}, defs);
  svg("rect", {x: -M, y: -M, width: B + 2 * M, height: B + 2 * M}, clip);
  const ghost = svg("g", {"clip-path": "url(#tri-wrap)", opacity: 0.3}, root);
  const drawSquare = (parent, r, c, rr, cc, live) => {
    for (const d of DIRS) {
      const k = `${r},${c},${d}`;
      const o = pos.owner[k];
      const poly = svg("polygon", {points: triPoints(rr, cc, d, S), fill: o === undefined ? "#f3efe6" : colors[o],
        stroke: "#8a7f6a", "stroke-width": 1}, parent);
      if (live) {
        poly.setAttribute("data-tri", k);
        poly.classList.add("tri");
      }
    }
  };
  for (let r = -1; r <= n; r++) {
    for (let c = -1; c <= n; c++) {
      if (r >= 0 && r < n && c >= 0 && c < n) continue;
      drawSquare(ghost, (r + n) % n, (c + n) % n, r, c, false);
    }
  }
  svg("rect", {x: -M, y: -M, width: B + 2 * M, height: B + 2 * M, fill: "none", stroke: "#ccc", "stroke-dasharray": "4 4"}, root);

  const board = svg("g", {class: "tri-board"}, root);
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) drawSquare(board, r, c, r, c, true);
  // closed squares: thick outline in the owner's colour; a star while its teleport is unused
  const used = new Set(pos.teleports_used || []);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const os = DIRS.map((d) => pos.owner[`${r},${c},${d}`]);
      if (os[0] !== undefined && os.every((o) => o === os[0])) {
        svg("rect", {x: c * S + 2, y: r * S + 2, width: S - 4, height: S - 4, fill: "none", stroke: "#111",
          "stroke-width": 4, class: "closed-square", "data-square": `${r},${c}`}, board);
        svg("text", {x: c * S + S / 2, y: r * S + S / 2 + 1, "text-anchor": "middle", "dominant-baseline": "central",
          "font-size": S * 0.28, fill: "#fff", stroke: "#0008", "stroke-width": 0.6,
          text: used.has(`${r},${c}`) ? "■" : "★"}, board);
      }
    }
  }
  // grid lines every square
  for (let k = 0; k <= n; k++) {
    svg("line", {x1: k * S, y1: 0, x2: k * S, y2: B, stroke: "#5c5342", "stroke-width": 2}, board);
    svg("line", {x1: 0, y1: k * S, x2: B, y2: k * S, stroke: "#5c5342", "stroke-width": 2}, board);
  }
  // the battle target
  const b = pos.battle;
  if (b) {
    const [r, c, d] = b.target.split(",");
    svg("polygon", {points: triPoints(+r, +c, d, S), fill: "none", stroke: "#ffd400", "stroke-width": 5,
      class: "battle-target"}, board);
    const [tx, ty] = triCenter(+r, +c, d, S);
    svg("text", {x: tx, y: ty + 1, "text-anchor": "middle", "dominant-baseline": "central", "font-size": S * 0.22,
      text: "⚔", fill: "#111"}, board);
  }
  // legal targets
  const hl = svg("g", {class: "highlights"}, root);
  for (const [k, opts] of byTri) {
    const [r, c, d] = k.split(",");
    const style = KIND_STYLE[opts[0].kind];
    const poly = svg("polygon", {points: triPoints(+r, +c, d, S), fill: style.fill, stroke: style.stroke,
      "stroke-width": ui.choice === k ? 5 : 3, "stroke-dasharray": style.dash || null,
      class: `clickable legal target-${opts[0].kind}`, "data-tri": k}, hl);
    poly.addEventListener("click", () => {
      if (opts.length === 1) ctx.act(opts[0].a);
      else { ui.choice = k; ctx.redraw(); }
    });
  }
  // teleport="move": once a target is chosen, the units that can leave for it are clickable
  const fromOpts = ui.choice && byTri.has(ui.choice)
    ? byTri.get(ui.choice).filter(({kind, a}) => kind === "teleport" && a.teleport.from) : [];
  if (fromOpts.length) {
    const fl = svg("g", {class: "teleport-from"}, root);
    for (const {a} of fromOpts) {
      const [r, c] = a.teleport.square;
      const k = `${r},${c},${a.teleport.from}`;
      const poly = svg("polygon", {points: triPoints(r, c, a.teleport.from, S), fill: FROM_STYLE.fill,
        stroke: FROM_STYLE.stroke, "stroke-width": 4, "stroke-dasharray": FROM_STYLE.dash,
        class: "clickable teleport-source", "data-tri": k}, fl);
      svg("title", {text: teleportText(a)}, poly);
      poly.addEventListener("click", () => ctx.act(a));
    }
  }
  svg("text", {x: -M, y: B + M + 22, "font-size": 13, fill: "#6b6b6b",
    text: `round ${pos.round} · the edges wrap around (torus) · ★ closed square, teleport unused`}, root);

  // side panel: battle and hands
  const sx = stacked ? -M + 8 : B + M + 24;
  let y = stacked ? B + M + 44 : -M + 8;
  if (b) {
    svg("rect", {x: sx - 8, y: y - 4, width: side - 10, height: 196, rx: 10, fill: "#fff6d6", stroke: "#d4b03a"}, root);
    svg("text", {x: sx, y: y + 16, "font-size": 15, "font-weight": "bold", fill: "#222",
      text: `Battle at ${b.target.replace(/,/g, " ")}`}, root);
    const hidden = new Set(b.hidden || []);
    const rows = [["attacker", b.attacker, b.attacker_roll, b.attacker_card, `${b.dice} ${b.dice === 1 ? "die" : "dice"}, best kept`],
      ["defender", b.defender, b.defender_roll, b.defender_card, "1 die"]];
    const order = ["attacker_roll", "defender_roll", "attacker_card", "defender_card", "void"];
    const stepIdx = order.indexOf(b.step);
    rows.forEach(([role, seat, roll, cardValue, diceText], k) => {
      const ry = y + 34 + k * 80;
      svg("circle", {cx: sx + 8, cy: ry + 8, r: 8, fill: colors[seat]}, root);
      svg("text", {x: sx + 22, y: ry + 13, "font-size": 13, fill: "#222",
        text: `${(names[seat] || "").slice(0, 14)} (${role}) · ${diceText}`}, root);
      const rolled = stepIdx > order.indexOf(`${role}_roll`);
      const rollShown = roll !== null && roll !== undefined ? roll : rolled || hidden.has(`${role}_roll`) ? "?" : null;
      drawDie(root, sx, ry + 22, 44, rollShown, {dim: rollShown === null});
      const chosen = stepIdx > order.indexOf(`${role}_card`);
      if (cardValue !== null && cardValue !== undefined) card(root, sx + 70, ry + 20, cardValue);
      else if (chosen) card(root, sx + 70, ry + 20, null);
      else svg("rect", {x: sx + 70, y: ry + 20, width: 34, height: 48, rx: 5, fill: "none", stroke: "#aaa", "stroke-dasharray": "4 3"}, root);
      if (roll !== null && roll !== undefined && cardValue !== null && cardValue !== undefined) {
        svg("text", {x: sx + 120, y: ry + 50, "font-size": 18, "font-weight": "bold", fill: "#222", text: `= ${roll + cardValue}`}, root);
      }
    });
    y += 204;
  }
  svg("text", {x: sx, y: y + 14, "font-size": 14, "font-weight": "bold", fill: "#444", text: "Cards in hand"}, root);
  y += 24;
  const cardActs = new Map();
  for (const a of legal) if ("card" in a && !cardActs.has(a.card)) cardActs.set(a.card, a);
  for (let i = 0; i < pos.players; i++) {
    svg("circle", {cx: sx + 8, cy: y + 10, r: 7, fill: colors[i], opacity: pos.alive[i] ? 1 : 0.3}, root);
    svg("text", {x: sx + 20, y: y + 15, "font-size": 12, fill: pos.alive[i] ? "#222" : "#999",
      text: (names[i] || "").slice(0, 12) + (pos.alive[i] ? "" : " (out)")}, root);
    const mine = ctx.you === i && cardActs.size > 0;
    const seen = new Set();
    const step = Math.min(mine ? 34 : 25, (side - 120) / Math.max(1, pos.hands[i].length));
    pos.hands[i].forEach((v, k) => {
      const legalCard = mine && cardActs.has(v) && !seen.has(v);
      if (legalCard) seen.add(v);
      card(root, sx + 105 + k * step, y - 2, v, {w: Math.min(mine ? 30 : 22, step - 2), h: mine ? 40 : 30,
        legal: legalCard, onclick: () => ctx.act(cardActs.get(v))});
    });
    if (mine && !pos.hands[i].length && cardActs.has(0)) {
      // an empty hand plays {"card": 0} (RULES.md): offer it as a card to click
      card(root, sx + 105, y - 2, 0, {w: 30, h: 40, legal: true, onclick: () => ctx.act(cardActs.get(0))});
      svg("text", {x: sx + 142, y: y + 22, "font-size": 12, fill: "#6b6b6b", text: "empty hand: +0"}, root);
    }
    y += mine ? 48 : 38;
  }
  if (ctx.controls) {
    if (cardActs.size) ctx.controls.append(h("span", {class: "muted"}, "Pick your secret card: click it in your hand."));
    if (ui.choice && byTri.has(ui.choice)) {
      ctx.controls.append(h("span", {}, `Triangle ${ui.choice}:`));
      if (fromOpts.length) {
        ctx.controls.append(h("span", {class: "muted"},
          "click the unit that leaves its closed square (blue), or a button:"));
      }
      for (const {kind, a} of byTri.get(ui.choice)) {
        const text = kind === "teleport" ? teleportText(a) : kind;
        ctx.controls.append(h("button", {class: "primary", onclick: () => ctx.act(a)}, text));
      }
      ctx.controls.append(h("button", {onclick: () => { ui.choice = null; ctx.redraw(); }}, "Cancel"));
    }
    const pass = legal.find((a) => a.pass);
    if (pass) ctx.controls.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, "Pass"));
  }
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
const tri = (t) => `${t[0]},${t[1]} ${t[2]}`;

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a, who) {
  if ("place" in a) return `places on ${tri(a.place)}`;
  if ("expand" in a) return `expands to ${tri(a.expand)}`;
  if ("attack" in a) return `attacks ${tri(a.attack)}`;
  if ("teleport" in a && a.teleport.from) {
    return `moves the unit on ${tri([...a.teleport.square, a.teleport.from])} to ${tri(a.teleport.to)} (teleport)`;
  }
  if ("teleport" in a) return `teleports from square ${a.teleport.square.join(",")} to ${tri(a.teleport.to)}`;
  if ("card" in a) return `plays card +${a.card}`;
  if ("void" in a) return `empties ${tri(a.void)}`;
  if ("roll" in a) return `rolls ${a.roll}`;
  if ("income" in a) return `income die: ${a.income}`;
  if ("out" in a) return `${who(a.out)} is out`;
  return null;
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  place: () => null, // the move itself says it
  expand: () => null,
  teleport: () => null,
  attack: (e, who) => `against ${who(e.defender)}, ${e.dice} ${e.dice === 1 ? "die" : "dice"}`,
  battle: (e, who) => {
    const side = (seat, total, card) => `${who(seat)} ${total}${card !== undefined && card !== null ? ` (card +${card})` : ""}`;
    return `battle: ${side(e.attacker, e.attacker_total, e.attacker_card)} against `
      + `${side(e.defender, e.defender_total, e.defender_card)}: ${who(e.winner)} wins`;
  },
  taken: (e, who) => `${who(e.seat)} takes ${tri(e.triangle)}`,
  void: (e, who) => `${tri(e.triangle)} is emptied`,
  eliminated: (e, who) => `${who(e.seat)} is out`,
  income: (e) => (e.secret ? "income cards are drawn in secret" : `income: ${(e.cards || []).map((c) => "+" + c).join(", ")}`),
  elimination_income: () => "income for an elimination",
  square_closed: (e, who) => `${who(e.seat)} closes a square`,
  tiebreak: (e, who) => `tie-break between ${e.seats.map(who).join(" and ")}`,
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {battle: true, void: true, eliminated: true, income: true};

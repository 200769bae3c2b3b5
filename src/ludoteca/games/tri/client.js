// TRI: a torus of squares cut into four triangles; owners, closed squares, battles and cards.
import {andList, drawDie, h, key, pressable, refocus, shortName, svg} from "/static/js/common.js";
import {t, tn} from "/static/js/i18n.js";

const DIRS = ["N", "E", "S", "W"];
const KIND_STYLE = {
  place: {stroke: "#c08a00", fill: "#ffd40066"}, expand: {stroke: "#c08a00", fill: "#ffd40066"},
  attack: {stroke: "#111", fill: "#ffffff55", dash: "2 3"}, void: {stroke: "#111", fill: "#00000044"},
  teleport: {stroke: "#c08a00", fill: "#ffffff88", dash: "4 3"},
};
// teleport="move": the unit of the closed square that would leave (after a target is chosen)
const FROM_STYLE = {stroke: "#1a5fb4", fill: "#1a5fb455", dash: "3 2"};

/** A triangle or a square as the board's key: "row,col,side" / "row,col" (from 0, top left). */
const triKey = (x) => (Array.isArray(x) ? x.join(",") : String(x));

/** A square as the board labels it: its column's letter and its row's number ("B3": column 2, row 3). */
export function squareName(x) {
  const [r, c] = (Array.isArray(x) ? x : String(x).split(",")).map(Number);
  return `${String.fromCharCode(65 + c)}${r + 1}`;
}

const SIDE_NAMES = {N: () => t("top triangle of {square}"), E: () => t("right triangle of {square}"),
  S: () => t("bottom triangle of {square}"), W: () => t("left triangle of {square}")};

/** A triangle in the player's words, by the square the board labels and the side it lies on: "top triangle
 * of B3" (Italian "triangolo in alto di B3": every text using it starts it with "triangolo"). */
export function triName(x) {
  const [r, c, d] = Array.isArray(x) ? x : String(x).split(",");
  const name = SIDE_NAMES[d];
  return name ? name().replace("{square}", squareName([r, c])) : squareName([r, c]);
}

function teleportText(a) {
  const tp = a.teleport;
  return tp.from ? t("move the unit on the {from} here (teleport)", {from: triName([...tp.square, tp.from])})
    : t("teleport here from square {square}", {square: squareName(tp.square)});
}

const cardList = (cards) => (cards || []).map((c) => `+${c}`).join(" ");

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
  const who = (i) => nm[i] || t("Seat {n}", {n: i + 1});
  if (pos.phase === "place") return t("round 1 — place a unit not adjacent to any other");
  if (pos.phase === "act") return t("round {round} — expand, attack or teleport", {round: pos.round});
  if (pos.phase === "income_roll") return t("the income die for new cards…");
  if (pos.phase === "tiebreak") return t("tie-break: a draw decides who is out");
  if (pos.phase === "over") return t("game over");
  if (pos.phase === "battle" && pos.battle) {
    const b = pos.battle;
    const p = {attacker: who(b.attacker), defender: who(b.defender)};
    if (b.step === "attacker_roll") return t("battle: {attacker} attacks {defender} — the attacker rolls", p);
    if (b.step === "defender_roll") return t("battle: {attacker} attacks {defender} — the defender rolls", p);
    if (b.step === "attacker_card") return t("battle: {attacker} attacks {defender} — {attacker} chooses a secret card", p);
    if (b.step === "defender_card") return t("battle: {attacker} attacks {defender} — {defender} chooses a secret card", p);
    if (b.step === "void") {
      return t("battle: {attacker} attacks {defender} — {defender} picks an attacking unit to empty", p);
    }
    return t("battle: {attacker} attacks {defender}", p);
  }
  return pos.phase;
}

export function seatInfo(pos, i) {
  const u = units(pos)[i];
  const parts = [tn("{n} unit", "{n} units", u),
    pos.hands[i].length ? t("cards {cards}", {cards: cardList(pos.hands[i])}) : t("no cards")];
  if (!pos.alive[i]) parts.push(t("out"));
  return parts.join(" · ");
}

function card(parent, x, y, value, opts = {}) {
  const w = opts.w || 34, hgt = opts.h || 48;
  const g = svg("g", {class: "card" + (opts.legal ? " clickable legal" : ""), "data-card": value}, parent);
  const back = value === null || value === undefined;
  svg("rect", {x, y, width: w, height: hgt, rx: 5, fill: back ? "#5a4a8a" : "#fffdf5",
    stroke: opts.legal ? "#c08a00" : "#555", "stroke-width": opts.legal ? 3.5 : 1.2}, g);
  svg("text", {x: x + w / 2, y: y + hgt / 2 + 1, "text-anchor": "middle", "dominant-baseline": "central",
    "font-size": Math.max(12, w * 0.45), "font-weight": "bold", fill: back ? "#fff" : "#222", text: back ? "?" : `+${value}`}, g);
  if (opts.legal) {
    pressable(g, t("card +{value}: play it as your secret card", {value}), `card:${value}`, opts.ui, opts.onclick);
  } else {
    g.setAttribute("aria-hidden", "true"); // the seats and the battle panel say it in words
  }
  return g;
}

export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const root = ctx.svg;
  const n = pos.size;
  const S = Math.min(96, 520 / n);
  const B = n * S;
  // the band of wrapped-around neighbours drawn around the torus: narrower on a phone, where width is short
  const M = S * (typeof window !== "undefined" && window.matchMedia && window.matchMedia("(max-width: 600px), (max-height: 500px)").matches ? 0.32 : 0.45);
  const side = 300;
  const seatName = (i) => names[i] || t("Seat {n}", {n: i + 1});
  // phones (the max-width of style.css's phone block): the battle and the hands go under the board, not beside it
  const stacked = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const cardActs = new Map(); // the secret card to choose now: value -> action
  for (const a of legal) if ("card" in a && !cardActs.has(a.card)) cardActs.set(a.card, a);
  // a phone, your secret card to choose: only your hand under the battle, its cards larger (the seats list the others')
  const bigCards = stacked && cardActs.size > 0;
  const panelH = (pos.battle ? 204 : 0) + 34 + (bigCards ? 118 : pos.players * 48 + (cardActs.size ? 54 : 0));
  const vbW = stacked ? Math.max(B + 2 * M + 12, side + 12) : B + 2 * M + 12 + side;
  // a phone: the panel under the board is drawn larger (up to the board's width), unless that would make the whole
  // drawing too tall for the screen and so shrink the board (style.css: #board's max-height)
  const heightWith = (k) => B + 2 * M + 20 + (34 + panelH) * k;
  let panelScale = stacked ? Math.min(1.6, Math.max(1, (vbW - 12) / side)) : 1;
  const high = stacked && root.parentElement ? parseFloat(getComputedStyle(root).maxHeight) : NaN;
  if (high > 0) {
    const widthScale = root.parentElement.clientWidth / vbW;
    while (panelScale > 1 && high / heightWith(panelScale) < widthScale) panelScale = Math.max(1, panelScale - 0.1);
  }
  const vbH = stacked ? heightWith(panelScale) : Math.max(B + 2 * M + 40, 470);
  root.setAttribute("viewBox", `${-M - 6} ${-M - 6} ${vbW} ${vbH}`);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", t("TRI board: {n} by {n} squares whose edges wrap around; squares named by column letter and row number",
    {n}));

  // legal actions by triangle
  const byTri = new Map();
  const add = (tr, kind, a) => {
    const k = key(tr);
    if (!byTri.has(k)) byTri.set(k, []);
    byTri.get(k).push({kind, a});
  };
  for (const a of legal) {
    for (const kind of ["place", "expand", "attack", "void"]) if (kind in a) add(a[kind], kind, a);
    if (a.teleport) add(a.teleport.to, "teleport", a);
  }
  const ownerText = (k) => {
    const o = pos.owner[k];
    return o === undefined ? t("{tri}, empty", {tri: triName(k)}) : t("{tri}, {name}'s unit", {tri: triName(k), name: seatName(o)});
  };
  const kindText = (kind, a) => {
    if (kind === "place") return t("place a unit here");
    if (kind === "expand") return t("expand here");
    if (kind === "attack") return t("attack it");
    if (kind === "void") return t("empty this attacking unit");
    return teleportText(a);
  };

  // ghost copies across the wrapping edges (the board is a torus)
  const defs = svg("defs", {}, root);
  const clip = svg("clipPath", {id: "tri-wrap"}, defs);
  svg("rect", {x: -M, y: -M, width: B + 2 * M, height: B + 2 * M}, clip);
  const ghost = svg("g", {"clip-path": "url(#tri-wrap)", opacity: 0.3, "aria-hidden": "true"}, root);
  const drawSquare = (parent, r, c, rr, cc, live) => {
    for (const d of DIRS) {
      const k = `${r},${c},${d}`;
      const o = pos.owner[k];
      const poly = svg("polygon", {points: triPoints(rr, cc, d, S), fill: o === undefined ? "#f3efe6" : colors[o],
        stroke: "#8a7f6a", "stroke-width": 1}, parent);
      if (live) {
        poly.setAttribute("data-tri", k);
        poly.classList.add("tri");
        if (o === undefined) poly.setAttribute("aria-hidden", "true");
        else { poly.setAttribute("role", "img"); poly.setAttribute("aria-label", ownerText(k)); }
      }
    }
  };
  for (let r = -1; r <= n; r++) {
    for (let c = -1; c <= n; c++) {
      if (r >= 0 && r < n && c >= 0 && c < n) continue;
      drawSquare(ghost, (r + n) % n, (c + n) % n, r, c, false);
    }
  }
  svg("rect", {x: -M, y: -M, width: B + 2 * M, height: B + 2 * M, fill: "none", stroke: "#ccc", "stroke-dasharray": "4 4",
    "aria-hidden": "true"}, root);

  const board = svg("g", {class: "tri-board"}, root);
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) drawSquare(board, r, c, r, c, true);
  const marks = svg("g", {"aria-hidden": "true"}, board);
  // closed squares: thick outline in the owner's colour; a star while its teleport is unused (a table without
  // teleports, option teleports off, says "teleports": false in its position: no star)
  const used = new Set(pos.teleports_used || []);
  const teleports = pos.teleports !== false;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const os = DIRS.map((d) => pos.owner[`${r},${c},${d}`]);
      if (os[0] !== undefined && os.every((o) => o === os[0])) {
        svg("rect", {x: c * S + 2, y: r * S + 2, width: S - 4, height: S - 4, fill: "none", stroke: "#111",
          "stroke-width": 4, class: "closed-square", "data-square": `${r},${c}`}, marks);
        svg("text", {x: c * S + S / 2, y: r * S + S / 2 + 1, "text-anchor": "middle", "dominant-baseline": "central",
          "font-size": S * 0.28, fill: "#fff", stroke: "#0008", "stroke-width": 0.6,
          text: teleports && !used.has(`${r},${c}`) ? "★" : "■"}, marks);
      }
    }
  }
  // grid lines every square, and the columns' letters and the rows' numbers the texts name squares by (squareName)
  for (let k = 0; k <= n; k++) {
    svg("line", {x1: k * S, y1: 0, x2: k * S, y2: B, stroke: "#5c5342", "stroke-width": 2}, marks);
    svg("line", {x1: 0, y1: k * S, x2: B, y2: k * S, stroke: "#5c5342", "stroke-width": 2}, marks);
  }
  for (let k = 0; k < n; k++) {
    const label = {"text-anchor": "middle", "dominant-baseline": "central", "font-size": Math.max(12, S * 0.2),
      "font-weight": "bold", fill: "#3b3426", stroke: "#fff", "stroke-width": 3, "paint-order": "stroke"};
    svg("text", {...label, x: k * S + S / 2, y: -M / 2, text: String.fromCharCode(65 + k)}, marks);
    svg("text", {...label, x: -M / 2, y: k * S + S / 2, text: k + 1}, marks);
  }
  // the places the last move is marked (web/static/js/common.js lastMoveCells: a frame inside each
  // data-cell element): a small square at the middle of each triangle
  const lastLayer = svg("g", {class: "last-move-spots", "aria-hidden": "true"}, board);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      for (const d of DIRS) {
        const [tx, ty] = triCenter(r, c, d, S);
        const g = svg("g", {"data-cell": `${r},${c},${d}`}, lastLayer);
        svg("rect", {x: tx - S * 0.17, y: ty - S * 0.17, width: S * 0.34, height: S * 0.34, fill: "none"}, g);
      }
    }
  }
  // the battle target
  const b = pos.battle;
  if (b) {
    const [r, c, d] = b.target.split(",");
    svg("polygon", {points: triPoints(+r, +c, d, S), fill: "none", stroke: "#ffd400", "stroke-width": 5,
      class: "battle-target", "aria-hidden": "true"}, board);
    const [tx, ty] = triCenter(+r, +c, d, S);
    svg("text", {x: tx, y: ty + 1, "text-anchor": "middle", "dominant-baseline": "central", "font-size": S * 0.22,
      text: "⚔", fill: "#111", "aria-hidden": "true"}, board);
  }
  // legal targets
  const hl = svg("g", {class: "highlights"}, root);
  for (const [k, opts] of byTri) {
    const [r, c, d] = k.split(",");
    const style = KIND_STYLE[opts[0].kind];
    const poly = svg("polygon", {points: triPoints(+r, +c, d, S), fill: style.fill, stroke: style.stroke,
      "stroke-width": ui.choice === k ? 5 : 3, "stroke-dasharray": style.dash || null,
      class: `clickable legal target-${opts[0].kind}`, "data-tri": k}, hl);
    const label = opts.length === 1 ? t("{tri}: {action}", {tri: ownerText(k), action: kindText(opts[0].kind, opts[0].a)})
      : t("{tri}: {n} choices, shown under the board", {tri: ownerText(k), n: opts.length});
    pressable(poly, label, `tri:${k}`, ui, () => {
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
      pressable(poly, t("the unit on the {from} leaves its square for the {to}", {from: triName(k), to: triName(ui.choice)}), `from:${k}`, ui,
        () => ctx.act(a));
    }
  }
  const legend = teleports ? t("round {round} · the edges wrap around (torus) · ★ closed square, teleport unused", {round: pos.round})
    : t("round {round} · the edges wrap around (torus) · ■ closed square, no teleports at this table", {round: pos.round});
  // (on a phone in two lines: the round and the torus, then the star)
  const legendLines = stacked ? [legend.split(" · ").slice(0, 2).join(" · "), legend.split(" · ").slice(2).join(" · ")] : [legend];
  legendLines.filter(Boolean).forEach((line, k) => svg("text", {x: -M, y: B + M + 8 + (k + 1) * 15 * panelScale,
    "font-size": 13 * panelScale,
    fill: "#6b6b6b", text: line}, root));

  // side panel: battle and hands (on a phone under the board, as wide as the board: drawn larger by panelScale)
  const sx = stacked ? -M + 8 : B + M + 24;
  let y = stacked ? B + M + 24 + 34 * panelScale : -M + 8;
  const panel = stacked ? svg("g", {class: "tri-panel",
    transform: `translate(${sx - 8},${y - 4}) scale(${panelScale}) translate(${8 - sx},${4 - y})`}, root) : root;
  if (b) {
    svg("rect", {x: sx - 8, y: y - 4, width: side - 10, height: 196, rx: 10, fill: "#fff6d6", stroke: "#d4b03a"}, panel);
    svg("text", {x: sx, y: y + 16, "font-size": 15, "font-weight": "bold", fill: "#222",
      text: t("Battle at {target}", {target: squareName(b.target)})}, panel);
    const hidden = new Set(b.hidden || []);
    const rows = [
      ["attacker", b.attacker, b.attacker_roll, b.attacker_card,
        t("{name} (attacker) · {dice}", {name: shortName(seatName(b.attacker), 14),
          dice: tn("{n} die", "{n} dice, the best counts", b.dice)})],
      ["defender", b.defender, b.defender_roll, b.defender_card,
        t("{name} (defender) · {dice}", {name: shortName(seatName(b.defender), 14), dice: tn("{n} die", "{n} dice, the best counts", 1)})]];
    const order = ["attacker_roll", "defender_roll", "attacker_card", "defender_card", "void"];
    const stepIdx = order.indexOf(b.step);
    rows.forEach(([role, seat, roll, cardValue, title], k) => {
      const ry = y + 34 + k * 80;
      svg("circle", {cx: sx + 8, cy: ry + 8, r: 8, fill: colors[seat]}, panel);
      svg("text", {x: sx + 22, y: ry + 13, "font-size": 13, fill: "#222", text: title}, panel);
      const rolled = stepIdx > order.indexOf(`${role}_roll`);
      const rollShown = roll !== null && roll !== undefined ? roll : rolled || hidden.has(`${role}_roll`) ? "?" : null;
      const die = drawDie(panel, sx, ry + 22, 44, rollShown, {dim: rollShown === null});
      die.setAttribute("role", "img");
      die.setAttribute("aria-label", rollShown === null ? t("{name}'s die, not rolled yet", {name: seatName(seat)})
        : rollShown === "?" ? t("{name}'s die, rolled in secret", {name: seatName(seat)})
          : t("{name}'s die shows {n}", {name: seatName(seat), n: rollShown}));
      const chosen = stepIdx > order.indexOf(`${role}_card`);
      if (cardValue !== null && cardValue !== undefined) card(panel, sx + 70, ry + 20, cardValue);
      else if (chosen) card(panel, sx + 70, ry + 20, null);
      else svg("rect", {x: sx + 70, y: ry + 20, width: 34, height: 48, rx: 5, fill: "none", stroke: "#aaa", "stroke-dasharray": "4 3"}, panel);
      if (roll !== null && roll !== undefined && cardValue !== null && cardValue !== undefined) {
        svg("text", {x: sx + 120, y: ry + 50, "font-size": 18, "font-weight": "bold", fill: "#222", text: `= ${roll + cardValue}`}, panel);
      }
    });
    y += 204;
  }
  svg("text", {x: sx, y: y + 14, "font-size": 14, "font-weight": "bold", fill: "#444", text: t("Cards in hand")}, panel);
  y += 24;
  for (let i = 0; i < pos.players; i++) {
    if (bigCards && i !== ctx.you) continue;
    svg("circle", {cx: sx + 8, cy: y + 10, r: 7, fill: colors[i], opacity: pos.alive[i] ? 1 : 0.3}, panel);
    svg("text", {x: sx + 20, y: y + 15, "font-size": 12, fill: pos.alive[i] ? "#222" : "#999",
      text: pos.alive[i] ? shortName(names[i], 12) : t("{name} (out)", {name: shortName(names[i], 12)})}, panel);
    const mine = ctx.you === i && cardActs.size > 0;
    if (mine) {
      // your secret card to choose: one large card per value (a tap target), with how many you hold
      const counts = new Map();
      for (const v of pos.hands[i]) counts.set(v, (counts.get(v) || 0) + 1);
      const values = [...counts.keys()].sort((a, b) => a - b);
      if (!values.length && cardActs.has(0)) values.push(0); // an empty hand plays {"card": 0} (RULES.md)
      values.forEach((v, k) => {
        const [w, hh] = bigCards ? [62, 74] : [46, 56];
        const x = sx + 10 + k * (w + 10 + (bigCards ? 0 : 6));
        card(panel, x, y + 22, v, {w, h: hh, legal: cardActs.has(v), ui, onclick: () => ctx.act(cardActs.get(v))});
        if ((counts.get(v) || 0) > 1) {
          svg("text", {x: x + w / 2, y: y + hh + 36, "text-anchor": "middle", "font-size": 13, fill: "#444",
            text: `×${counts.get(v)}`}, panel);
        }
      });
      if (!pos.hands[i].length) {
        svg("text", {x: sx + 70, y: y + 54, "font-size": 12, fill: "#6b6b6b", text: t("empty hand: +0")}, panel);
      }
      y += bigCards ? 118 : 100;
      continue;
    }
    const step = Math.min(25, (side - 120) / Math.max(1, pos.hands[i].length));
    pos.hands[i].forEach((v, k) => {
      card(panel, sx + 105 + k * step, y - 2, v, {w: Math.min(22, step - 2), h: 30});
    });
    y += 38;
  }
  if (ctx.controls) {
    if (cardActs.size) ctx.controls.append(h("span", {class: "muted"}, t("Pick your secret card: click it in your hand.")));
    if (ui.choice && byTri.has(ui.choice)) {
      ctx.controls.append(h("span", {}, t("{tri}:", {tri: triName(ui.choice)})));
      if (fromOpts.length) {
        ctx.controls.append(h("span", {class: "muted"},
          t("click the unit that leaves its closed square (blue), or a button:")));
      }
      for (const {kind, a} of byTri.get(ui.choice)) {
        ctx.controls.append(h("button", {class: "primary", onclick: () => ctx.act(a)}, kindText(kind, a)));
      }
      ctx.controls.append(h("button", {onclick: () => { ui.choice = null; ctx.redraw(); }}, t("Cancel")));
    }
    const pass = legal.find((a) => a.pass);
    if (pass) ctx.controls.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, t("Pass")));
  }
  refocus(root, ui);
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
// Triangles as the board shows them (triName): the side of a square labelled by its column letter and row number.

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a, who) {
  if ("place" in a) return t("places a unit on the {tri}", {tri: triName(a.place)});
  if ("expand" in a) return t("expands to the {tri}", {tri: triName(a.expand)});
  if ("attack" in a) return t("attacks the {tri}", {tri: triName(a.attack)});
  if ("teleport" in a && a.teleport.from) {
    return t("teleports the unit on the {from} to the {to}", {from: triName([...a.teleport.square, a.teleport.from]),
      to: triName(a.teleport.to)});
  }
  if ("teleport" in a) return t("teleports from square {square} to the {to}", {square: squareName(a.teleport.square),
    to: triName(a.teleport.to)});
  if ("card" in a) return t("plays card +{value}", {value: a.card});
  if ("void" in a) return t("empties the attacking unit on the {tri}", {tri: triName(a.void)});
  if ("roll" in a) return t("rolls {n}", {n: a.roll});
  if ("income" in a) return t("income die: {n}", {n: a.income});
  if ("out" in a) return t("the draw puts {name} out", {name: who(a.out)});
  if ("pass" in a) return t("passes");
  return null;
}

/** A refused move in the player's words (the table's toast when the server refuses it). */
export function refusal(a) {
  if ("place" in a) return t("You cannot place a unit on the {tri} now.", {tri: triName(a.place)});
  if ("expand" in a) return t("You cannot expand to the {tri} now.", {tri: triName(a.expand)});
  if ("attack" in a) return t("You cannot attack the {tri} now.", {tri: triName(a.attack)});
  if ("teleport" in a) return t("You cannot teleport to the {tri} now.", {tri: triName(a.teleport.to)});
  if ("card" in a) return t("You cannot play the card +{value} now.", {value: a.card});
  if ("void" in a) return t("You cannot empty the unit on the {tri} now.", {tri: triName(a.void)});
  if ("pass" in a) return t("You cannot pass now.");
  return null;
}

/** A chance outcome in words, saying whose roll it is (``seat``: who rolled, or null). */
export function outcome(o, seat, who) {
  if ("roll" in o && seat !== null && seat !== undefined) return t("{name} rolls {n}", {name: who(seat), n: o.roll});
  if ("income" in o) return t("the income die is rolled for new cards");
  if ("out" in o) return t("the draw puts {name} out", {name: who(o.out)});
  return null;
}

/** One side of a revealed battle: its total, and the roll and card it is made of. */
function battleSide(total, roll, card) {
  return card === null || card === undefined ? t("{total} (roll {roll})", {total, roll})
    : t("{total} (roll {roll} + card +{card})", {total, roll, card});
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  // what the others see of a battle's secrets (the shared texts say the rest)
  move: (e, who) => (e.secret ? t("{name} chooses a secret card", {name: who(e.seat)}) : null),
  chance: (e, who) => (e.secret ? t("{name} rolls the battle die in secret", {name: who(e.seat)}) : null),
  place: () => null, // the move itself says it
  expand: () => null,
  teleport: () => null,
  attack: (e, who) => tn("against {name}, rolling {n} die", "against {name}, rolling {n} dice (the best counts)", e.dice,
    {name: who(e.defender)}),
  battle: (e, who) => {
    const p = {target: squareName(e.target), attacker: who(e.attacker), defender: who(e.defender),
      a: battleSide(e.attacker_total, e.attacker_roll, e.attacker_card),
      d: battleSide(e.defender_total, e.defender_roll, e.defender_card)};
    if (e.tie && e.attacker_won) return t("battle at {target}: {attacker} {a} against {defender} {d} — a tie, which goes to the attacker: {attacker} wins", p);
    if (e.tie) return t("battle at {target}: {attacker} {a} against {defender} {d} — a tie: {defender} holds and wins", p);
    if (e.attacker_won) return t("battle at {target}: {attacker} {a} against {defender} {d} — {attacker} wins", p);
    return t("battle at {target}: {attacker} {a} against {defender} {d} — {defender} holds and wins", p);
  },
  taken: (e, who) => t("{name} takes the {tri} from {owner}", {name: who(e.seat), tri: triName(e.triangle), owner: who(e.from)}),
  void: (e, who) => t("{owner}'s unit leaves the {tri}, which is empty again", // the move says who chose it
    {owner: who(e.owner), tri: triName(e.triangle)}),
  eliminated: (e, who) => {
    const p = {name: who(e.seat), n: e.units};
    if (e.why === "no_unit") return t("{name} is out: no unit left", p);
    if (e.why === "fewest_cards") {
      return t("{name} is out: the board is full and, tied for the fewest units, they hold the fewest cards; {n} units leave the board", p);
    }
    if (e.why === "tiebreak") return t("{name} is out, drawn among the weakest; {n} units leave the board", p);
    return t("{name} is out: the board is full and they have the fewest units; {n} units leave the board", p);
  },
  income: (e, who) => (e.secret ? t("income cards are drawn in secret")
    : tn("new cards: the income die shows {face}, and {names} gains {cards}",
      "new cards: the income die shows {face}, and {names} each gain {cards}", (e.seats || []).length,
      {face: e.face, names: andList((e.seats || []).map(who)), cards: cardList(e.cards)})),
  elimination_income: (e, who) => tn("new cards for the elimination: {names} gains {cards}",
    "new cards for the elimination: {names} each gain {cards}", (e.seats || []).length,
    {names: andList((e.seats || []).map(who)), cards: cardList(e.cards)}),
  square_closed: (e, who) => t("{name} closes square {square}", {name: who(e.seat), square: squareName(e.square)}),
  tiebreak: (e, who) => t("tie-break among {names}: a draw decides who is out", {names: andList(e.seats.map(who))}),
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {battle: true, void: true, eliminated: true, income: true, elimination_income: true};

/** The triangles of the last move ("row,col,side"): a unit placed, an expansion, a teleport's two ends,
 * the target of an attack and what a battle changed. */
export function lastMoveCells(events) {
  const out = [];
  for (const e of events) {
    if (e.kind === "place" || e.kind === "expand" || e.kind === "taken" || e.kind === "void") out.push(triKey(e.triangle));
    else if (e.kind === "attack") out.push(triKey(e.target));
    else if (e.kind === "teleport") {
      if (e.from) out.push(triKey(e.from));
      out.push(triKey(e.to));
    }
  }
  return [...new Set(out)];
}

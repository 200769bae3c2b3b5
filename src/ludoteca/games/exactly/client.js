// exactly: the bank's four coin piles, each player's pile, the 1-euro tokens and the die.
import {andList, drawDie, h, pressable, refocus, shortName, svg} from "/static/js/common.js";
import {t, tn} from "/static/js/i18n.js";

const VALUES = [5, 10, 20, 50];
const COIN = {5: {r: 15, fill: "#c27a3a"}, 10: {r: 17, fill: "#e0b84a"}, 20: {r: 19, fill: "#d9a933"}, 50: {r: 22, fill: "#cf9a1f"}};

function total(pile) {
  return VALUES.reduce((s, v) => s + v * (pile[String(v)] || 0), 0);
}

// The table's rulebook numbers as its position says them; a key the position leaves out is RULES.md's
// value (the engine writes only the numbers a table changed: rule_keys in games/exactly/__init__.py).
const RULEBOOK = {target: 100, cap: 150, euros_to_win: 3};
const BOX_TOKENS = 15; // the 1-euro tokens in the box (not an option)
const NO_CAP = 850; // every coin of the box: a cap this high never closes a pile

/** The target, the cap and the euros to win of the table whose position is ``pos``. */
export function rules(pos) {
  const out = {};
  for (const [k, v] of Object.entries(RULEBOOK)) out[k] = Number.isInteger(pos[k]) ? pos[k] : v;
  return out;
}

export function phaseText(pos, ctx) {
  if (pos.phase === "start_roll") return t("roll-off: who starts?");
  if (pos.phase === "roll") return t("rolling the die…");
  if (pos.phase === "over") return t("game over");
  if (pos.roll === "?") return t("rolled “?” — move one coin of any value");
  return t("rolled {n} — move one {n}¢ coin to another pile", {n: pos.roll});
}

export function seatInfo(pos, i) {
  const e = pos.euros[i], r = rules(pos);
  return t("{cents}¢ of {target}¢ in the pile · {euros}", {cents: total(pos.piles[i]), target: r.target,
    euros: tn("{held} of {n} euro", "{held} of {n} euros", r.euros_to_win, {held: e})});
}

function stack(parent, x, y, value, count, opts) {
  const g = svg("g", {class: "stack", "data-coin": value, "data-pile": opts.pile, "data-cell": `${opts.pile}:${value}`}, parent);
  const c = COIN[value];
  const shown = Math.min(count, 10);
  for (let k = 0; k < shown; k++) {
    svg("ellipse", {cx: x, cy: y - k * 4, rx: c.r, ry: c.r * 0.45, fill: c.fill, stroke: "#6b4a12", "stroke-width": 1.2}, g);
  }
  if (count === 0) {
    svg("ellipse", {cx: x, cy: y, rx: c.r, ry: c.r * 0.45, fill: "none", stroke: "#bbb", "stroke-dasharray": "3 3"}, g);
  } else {
    svg("text", {x, y: y - (shown - 1) * 4 + 4, "text-anchor": "middle", "font-size": 11, "font-weight": "bold",
      fill: "#3b2a08", text: value}, g);
  }
  svg("text", {x, y: y + 22, "text-anchor": "middle", "font-size": 12, fill: "#333", text: opts.short ? `×${count}` : `${value}¢ ×${count}`}, g); // (short: the coin shows its value)
  const what = tn("{pile}: {n} coin of {value}¢", "{pile}: {n} coins of {value}¢", count, {pile: opts.pileName, value});
  if (opts.legal) {
    const half = Math.max(c.r + 6, 23); // every stack's frame as wide as the widest coin's: a target of one size
    svg("rect", {x: x - half, y: y - 52, width: 2 * half, height: 84, rx: 6,
      // the whole frame takes the tap, chosen or not (a chosen frame is unfilled: without pointer-events its
      // inside would let the tap through to the pile's box behind it)
      class: opts.selected ? "hl-select" : "hl-place", style: opts.selected ? "pointer-events:all" : "fill:#f5c4001a"}, g);
    g.classList.add("clickable", "legal");
    pressable(g, opts.selected ? t("{coins}: chosen; press again to choose another coin", {coins: what})
      : t("{coins}: choose a {value}¢ coin to move", {coins: what, value}), `stack:${opts.pile}:${value}`, opts.ui,
    opts.onclick);
    if (opts.selected) g.setAttribute("aria-pressed", "true");
  } else {
    g.setAttribute("role", "img");
    g.setAttribute("aria-label", what);
  }
  return g;
}

function euro(parent, x, y) {
  const g = svg("g", {"aria-hidden": "true"}, parent);
  svg("circle", {cx: x, cy: y, r: 13, fill: "#c9c9c9", stroke: "#555", "stroke-width": 1.5}, g);
  svg("circle", {cx: x, cy: y, r: 8.5, fill: "#e2b93b", stroke: "#8a6d12"}, g);
  svg("text", {x, y: y + 3.5, "text-anchor": "middle", "font-size": 9, "font-weight": "bold", fill: "#333", text: "€1"}, g);
}

export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const root = ctx.svg;
  const n = pos.players;
  const {target, cap, euros_to_win: toWin} = rules(pos);
  // phones (the max-width of style.css's phone block): the bank under the die, the players' piles one per row
  const stacked = typeof window !== "undefined" && !!window.matchMedia && window.matchMedia("(max-width: 600px)").matches;
  const W = stacked ? 440 : 760;
  const boxW = stacked ? (n > 2 ? 205 : 420) : Math.min(240, (W - 10 * (n - 1)) / Math.min(n, 3));
  const perRow = stacked ? (n > 2 ? 2 : 1) : Math.min(n, 3); // a phone: two piles a row from three players
  const rowsOfBoxes = Math.ceil(n / perRow);
  const top = stacked ? 150 : 0; // the bank and the piles are that much lower
  const boxH = perRow === 2 ? 150 : 175; // two piles a row on a phone: lower boxes, so the table fits the screen
  const H = top + 200 + rowsOfBoxes * (boxH + 15);
  root.setAttribute("viewBox", `0 0 ${W} ${H}`);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", t("exactly table: the die, the bank and the players' piles"));
  const seatName = (i) => names[i] || t("Seat {n}", {n: i + 1});

  const moves = legal.filter((a) => "coin" in a);
  const sources = new Map();
  for (const a of moves) {
    const k = `${a.from}:${a.coin}`;
    if (!sources.has(k)) sources.set(k, []);
    sources.get(k).push(a);
  }
  const sel = ui.sel && sources.has(ui.sel) ? ui.sel : null;
  const dests = new Map();
  if (sel) for (const a of sources.get(sel)) dests.set(String(a.to), a);
  const pick = (k) => () => { ui.sel = ui.sel === k ? null : k; ctx.redraw(); };
  const coin = sel ? Number(sel.split(":")[1]) : null;

  // the die and the roll-off
  svg("text", {x: 20, y: 22, "font-size": 14, fill: "#444", text: t("Die")}, root);
  const die = drawDie(root, 20, 32, 70, pos.roll === null ? null : pos.roll, {dim: pos.roll === null});
  die.setAttribute("role", "img");
  die.setAttribute("aria-label", pos.roll === null ? t("the die, not rolled yet")
    : pos.roll === "?" ? t("the die shows “?”: move a coin of any value") : t("the die shows {n}", {n: pos.roll}));
  if (pos.roll === "?") { // the "?" face in words, under the die (moved right if a long word would pass the edge)
    const words = svg("text", {x: 55, y: 120, "text-anchor": "middle", "font-size": 13, "font-weight": "bold",
      fill: "#3b2a08", text: t("any coin"), "aria-hidden": "true"}, root);
    const half = words.getComputedTextLength() / 2;
    if (half > 51) words.setAttribute("x", String(4 + half));
  }
  if (pos.rolloff) {
    const txt = pos.rolloff.seats.map((s, k) => `${names[s] || s}: ${k < pos.rolloff.rolls.length ? pos.rolloff.rolls[k] : "…"}`);
    svg("text", {x: 20, y: 130, "font-size": 12, fill: "#444", text: t("Roll-off — {rolls}", {rolls: txt.join(", ")})}, root);
  }

  // the bank
  const bank = svg("g", {class: "pile bank", "data-pile": "bank", transform: stacked ? `translate(-160, ${top})` : null}, root);
  const bx = 170, bw = 420;
  const bankDest = dests.get("bank");
  const bankRect = svg("rect", {x: bx, y: 10, width: bw, height: 150, rx: 12, fill: "#efe7d4", stroke: bankDest ? "#c08a00" : "#a8997a",
    "stroke-width": bankDest ? 4 : 2, "stroke-dasharray": bankDest ? "8 4" : null}, bank);
  svg("text", {x: bx + bw / 2, y: 32, "text-anchor": "middle", "font-size": 16, "font-weight": "bold", fill: "#5c5342",
    text: t("Bank")}, bank);
  VALUES.forEach((v, k) => {
    const key = `bank:${v}`;
    stack(bank, bx + 60 + k * 100, 120, v, pos.bank[String(v)] || 0, {pile: "bank", pileName: t("the bank's piles"), ui,
      legal: sources.has(key), selected: sel === key, onclick: pick(key)});
  });
  if (bankDest) {
    bank.classList.add("clickable", "legal", "dest");
    bank.addEventListener("click", (ev) => { if (!ev.target.closest(".stack.legal")) ctx.act(bankDest); });
    pressable(bankRect, t("the bank: move the {value}¢ coin here", {value: coin}), "dest:bank", ui,
      () => ctx.act(bankDest), false);
  }
  // euro tokens still in the box, and the table's numbers: the target, the euros that win, the cap
  const left = BOX_TOKENS - pos.euros.reduce((s, x) => s + x, 0);
  const ex = stacked ? -450 : 0;
  svg("text", {x: 620 + ex, y: 30, "font-size": 12, fill: "#444", text: t("1-euro tokens left: {n}", {n: left})}, root);
  for (let k = 0; k < left; k++) euro(root, 630 + ex + (k % 5) * 26, 50 + Math.floor(k / 5) * 28);
  // the table's numbers, one line between the bank and the players' piles
  const ruleLine = [t("target: exactly {n}¢", {n: target}), tn("{n} euro wins", "{n} euros win", toWin),
    cap >= NO_CAP ? t("piles never close") : t("closed above {n}¢", {n: cap})].join(" · ");
  svg("text", {x: W / 2, y: top + 180, "text-anchor": "middle", "font-size": stacked ? 12 : 13, fill: "#3b2a08",
    class: "table-rules", text: ruleLine}, root);

  // the players' piles
  for (let i = 0; i < n; i++) {
    const col = i % perRow, row = Math.floor(i / perRow);
    const x = 10 + col * (boxW + 10) + (W - 20 - perRow * boxW - (perRow - 1) * 10) / 2;
    const y = 190 + top + row * (boxH + 15);
    const g = svg("g", {class: "pile player", "data-pile": i}, root);
    const dest = dests.get(String(i));
    const sum = total(pos.piles[i]);
    const box = svg("rect", {x, y, width: boxW, height: boxH, rx: 12, fill: "#fffaf0", stroke: dest ? "#c08a00" : colors[i],
      "stroke-width": dest ? 5 : (pos.to_move === i && pos.phase !== "over" ? 4 : 2), "stroke-dasharray": dest ? "8 4" : null}, g);
    svg("circle", {cx: x + 16, cy: y + 18, r: 8, fill: colors[i], "aria-hidden": "true"}, g);
    svg("text", {x: x + 30, y: y + 23, "font-size": 14, "font-weight": "bold", fill: "#222", text: shortName(seatName(i), 16)}, g);
    svg("text", {x: x + boxW - 12, y: y + 24, "text-anchor": "end", "font-size": 18, "font-weight": "bold",
      fill: sum > cap ? "#c0392b" : sum === target ? "#2a9d3f" : "#333", text: `${sum}¢`}, g);
    const step = (boxW - 20) / 4;
    const pileName = t("{name}'s pile", {name: seatName(i)});
    VALUES.forEach((v, k) => {
      const key = `${i}:${v}`;
      stack(g, x + 10 + step * (k + 0.5), y + boxH - 65, v, pos.piles[i][String(v)] || 0,
        {pile: i, pileName, ui, legal: sources.has(key), selected: sel === key, onclick: pick(key), short: perRow === 2});
    });
    for (let k = 0; k < pos.euros[i]; k++) euro(g, x + 20 + k * 30, y + boxH - 20);
    if (dest) {
      g.classList.add("clickable", "legal", "dest");
      g.addEventListener("click", (ev) => { if (!ev.target.closest(".stack.legal")) ctx.act(dest); });
      pressable(box, t("{pile} ({cents}¢): move the {value}¢ coin here", {pile: pileName, cents: sum, value: coin}),
        `dest:${i}`, ui, () => ctx.act(dest), false);
    }
  }

  if (ctx.controls) {
    if (moves.length) {
      ctx.controls.append(h("span", {class: "muted"}, sel
        ? t("Now click the pile that receives the coin.")
        : t("Click a highlighted coin pile to pick the coin to move.")));
      if (sel) ctx.controls.append(h("button", {onclick: () => { ui.sel = null; ctx.redraw(); }}, t("Cancel")));
    }
    const pass = legal.find((a) => a.pass);
    if (pass) ctx.controls.append(h("button", {class: "primary", id: "pass", onclick: () => ctx.act(pass)}, t("Pass")));
  }
  refocus(root, ui);
}

// --- texts of actions and events (the web log; texts are made here, at the edge) ---------------
// Piles as the terminal names them (games/exactly/board.py): the bank and each player's pile.

/** A readable phrase for an action or chance outcome (canonical JSON); who(seat) names a seat. */
export function describe(a, who) {
  if ("roll" in a && a.roll === "?") return t("rolls “?”: a coin of any value may be moved");
  if ("roll" in a) return t("rolls {face}", {face: a.roll});
  if ("coin" in a) {
    const p = {coin: a.coin, from: who(a.from), to: who(a.to)};
    if (a.from === "bank") return t("moves a {coin}¢ coin from the bank to {to}'s pile", p);
    if (a.to === "bank") return t("moves a {coin}¢ coin from {from}'s pile to the bank", p);
    return t("moves a {coin}¢ coin from {from}'s pile to {to}'s pile", p);
  }
  if ("pass" in a) return t("cannot move and passes");
  return null;
}

/** A refused move in the player's words (the table's toast when the server refuses it). */
export function refusal(a) {
  if ("coin" in a) return t("You cannot move a {coin}¢ coin there now.", {coin: a.coin});
  if ("pass" in a) return t("You cannot pass now.");
  return null;
}

/** Texts of this game's own event kinds (core/events.py: kind and fields). */
export const EVENTS = {
  coin_moved: () => null, // the move itself says it
  euro: (e, who) => {
    const seats = e.seats || [];
    const tally = seats.map((s) => `${who(s)} ${(e.euros || [])[s]}`).join(", ");
    const target = e.target ?? RULEBOOK.target; // the table's target (the event carries it)
    return seats.length > 1
      ? t("exactly {target}¢: {names} each take a 1-euro token (euros: {tally})",
        {target, names: andList(seats.map(who)), tally})
      : t("exactly {target}¢: {name} takes a 1-euro token (euros: {tally})", {target, name: who(seats[0]), tally});
  },
  new_round: (e, who) => t("new round: every coin goes back to the bank; {name} rolls first", {name: who(e.seat)}),
  pass: () => null, // the move itself says it
  rolloff_tie: (e, who) => t("{names} tie the roll-off with {face} and roll again",
    {names: andList(e.seats.map(who)), face: e.face}),
  start_coins: (e) => t("everyone takes a {coin}¢ coin from the bank", {coin: e.coin}),
  starter: (e, who) => t("{name} takes the first turn", {name: who(e.seat)}),
};

/** The events shown for a moment over the board as well as in the log (web/static/js/common.js). */
export const ANNOUNCE = {euro: true, new_round: true};

/** The coin stacks of the last move ("pile:value", as the board names them): where the coin left and arrived. */
export function lastMoveCells(events) {
  const out = [];
  for (const e of events) {
    if (e.kind === "coin_moved") out.push(`${e.from}:${e.coin}`, `${e.to}:${e.coin}`);
  }
  return out;
}

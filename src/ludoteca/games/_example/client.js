// Pig in the browser: the example of a game's client (docs/architecture.md, "Adding a game").
// The page imports this module (GET /games/<name>/client.js) and calls what it exports: render(ctx)
// draws the board; phaseText, seatInfo, describe, refusal, EVENTS, ANNOUNCE and lastMoveCells give
// the texts and marks the page shows around it. Every text goes through t()/tn() and is translated
// in locale/<lang>.po (scripts/i18n.py collects them).
import {drawDie, pressable, refocus, shortName, svg} from "/static/js/common.js";
import {t, tn} from "/static/js/i18n.js";

/** The line above the board: what happens now. */
export function phaseText(pos) {
  if (pos.phase === "over") return t("game over");
  if (pos.phase === "roll") return t("rolling the die…");
  if (pos.turn_total === 0) return t("roll the die to start the turn");
  return t("{n} points this turn: roll again or hold", {n: pos.turn_total});
}

/** The line under a seat's name. */
export function seatInfo(pos, i) {
  return tn("{n} point", "{n} points", pos.scores[i]);
}

/** The board: each player's score, the turn total, the die and the two choices as buttons on it. */
export function render(ctx) {
  const {pos, legal, ui, colors, names} = ctx;
  const root = ctx.svg;
  const n = pos.players;
  const W = 400, rowH = 48, top = 130;
  const H = top + n * rowH + 20;
  root.setAttribute("viewBox", `0 0 ${W} ${H}`);
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", t("Pig: the die, the turn total and the players' scores"));
  const die = drawDie(root, 20, 20, 80, pos.die, {dim: pos.phase === "roll"});
  die.setAttribute("role", "img");
  die.setAttribute("aria-label", pos.die === null ? t("the die, not rolled yet") : t("the die shows {n}", {n: pos.die}));
  svg("text", {x: 120, y: 50, "font-size": 18, fill: "#333", text: t("this turn: {n}", {n: pos.turn_total})}, root);
  const choices = [["roll", t("Roll")], ["hold", t("Hold")]];
  choices.forEach(([word, label], k) => {
    const action = legal.find((a) => a.choose === word);
    const g = svg("g", {class: "choice" + (action ? " clickable legal" : ""), "data-cell": word}, root);
    svg("rect", {x: 120 + k * 135, y: 66, width: 125, height: 48, rx: 10, fill: action ? "#f5c400" : "#eee",
      stroke: "#8a6d12"}, g);
    svg("text", {x: 182 + k * 135, y: 97, "text-anchor": "middle", "font-size": 18, "font-weight": "bold",
      fill: action ? "#222" : "#999", text: label}, g);
    if (action) pressable(g, label, `choice:${word}`, ui, () => ctx.act(action));
    else g.setAttribute("aria-hidden", "true");
  });
  const target = Math.max(1, ...pos.scores);
  for (let i = 0; i < n; i++) {
    const y = top + i * rowH;
    const g = svg("g", {class: "seat-score", role: "img", "aria-label": tn("{name}: {n} point", "{name}: {n} points",
      pos.scores[i], {name: names[i] || t("Seat {n}", {n: i + 1})})}, root);
    svg("circle", {cx: 30, cy: y + 16, r: 10, fill: colors[i], stroke: "#222"}, g);
    svg("text", {x: 48, y: y + 22, "font-size": 15, fill: "#222", text: shortName(names[i] || t("Seat {n}", {n: i + 1}), 12)}, g);
    svg("rect", {x: 170, y: y + 4, width: 200 * pos.scores[i] / target, height: 24, fill: colors[i], opacity: 0.7}, g);
    svg("text", {x: 176, y: y + 22, "font-size": 14, fill: "#222", text: String(pos.scores[i])}, g);
    if (pos.phase !== "over" && pos.to_move === i) g.classList.add("to-move");
  }
  refocus(root, ui);
}

/** An action or chance outcome (canonical JSON) in words; null: the page's generic words. */
export function describe(a) {
  if ("die" in a) return t("rolls {n}", {n: a.die});
  if (a.choose === "roll") return t("rolls the die");
  if (a.choose === "hold") return t("holds");
  return null;
}

/** A refused move in the player's words (the table's toast). */
export function refusal(a) {
  if (a.choose === "hold") return t("You cannot hold before your first roll.");
  return null;
}

/** Texts of this game's own event kinds (the engine's docstring lists their fields). */
export const EVENTS = {
  bust: (e) => tn("a 1: {n} point lost", "a 1: {n} points lost", e.lost), // the roll's own line names the player
  hold: (e) => tn("{n} point banked ({score} in all)", "{n} points banked ({score} in all)", e.banked,
    {score: e.score}),
};

/** Events also shown for a moment over the board (true: with the log's text). */
export const ANNOUNCE = {bust: true};

/** The parts of the board (their data-cell) to frame after a move: the choice made. */
export function lastMoveCells(events) {
  return events.filter((e) => e.kind === "move" && e.action && e.action.choose).map((e) => e.action.choose);
}

// The replay page's analysis (docs/analysis.md): was it skill or luck?
// The server analyses a finished game (GET/POST /api/tables/{id}/analysis); when it is ready this
// module shows the win chance of each player over the game (a graph, with its figures as a table),
// a summary per player, the three moments that decided the game, and per move its label, its loss
// and the better move, in the page's language. It never shows more than the replay does.
import {COLORS, api, entryText, h, svg} from "./common.js";
import {t, tn} from "./i18n.js";

const POLL_MS = 3000;
const LABEL_WORDS = {inaccuracy: () => t("inaccuracy"), mistake: () => t("mistake"), blunder: () => t("blunder")};
const SEVERITY = {inaccuracy: 1, mistake: 2, blunder: 3};

/** Percentage points, one decimal, in the page's language (a comma in Italian). */
function points(x) {
  return (100 * x).toLocaleString(document.documentElement.lang || "en", {minimumFractionDigits: 1,
    maximumFractionDigits: 1});
}

function signed(x) {
  return (x >= 0 ? "+" : "−") + points(Math.abs(x));
}

function percent(x) {
  return t("{p}%", {p: Math.round(100 * x)});
}

export const A = {data: null, status: "none", mode: "off", betterShown: false, ctx: null, timer: null};

/** The analysis of action ``i`` (a step of the record), or null. */
export function stepOf(i) {
  return A.data && A.data.steps ? A.data.steps[i] || null : null;
}

/** The better move of action ``i`` in the player's words (the game's client describes it). */
function betterText(s) {
  const {renderer, names} = A.ctx;
  return entryText(renderer, {i: s.step, seat: s.seat, action: s.best_action, events: []}, names());
}

function playedText(s) {
  return A.ctx.moveText(s.step);
}

/** A log line's mark: the worst label among its actions, with the loss and the better move. */
export function decorate(li, indices) {
  if (!A.data) return;
  const marked = indices.map(stepOf).filter((s) => s && s.label);
  if (!marked.length) return;
  const worst = marked.reduce((a, b) => (SEVERITY[b.label] > SEVERITY[a.label] ? b : a));
  li.classList.add("judged", `judged-${worst.label}`);
  li.append(h("div", {class: "move-note"},
    h("span", {class: `verdict verdict-${worst.label}`}, LABEL_WORDS[worst.label]()),
    " ", t("−{points} points of win chance; better: {best}", {points: points(worst.loss), best: betterText(worst)})));
}

/** The box about the move that led to position ``step`` (the action ``step - 1``). */
export function moveBox(step) {
  const box = document.getElementById("move-analysis");
  if (!box) return;
  const s = step > 0 ? stepOf(step - 1) : null;
  if (!s) {
    box.hidden = true;
    A.betterShown = false;
    return;
  }
  const nm = A.ctx.names();
  const lines = [];
  if (s.kind === "decision") {
    const head = t("Played: {move} (win chance {played}; with the best move: {best})", {move: playedText(s),
      played: percent(s.played), best: percent(s.best)});
    lines.push(h("div", {}, head));
    if (s.label) {
      lines.push(h("div", {}, h("span", {class: `verdict verdict-${s.label}`}, LABEL_WORDS[s.label]()), " ",
        t("−{points} points of win chance", {points: points(s.loss)})));
      lines.push(h("div", {}, t("Better: {best}", {best: betterText(s)})));
      const button = h("button", {type: "button", class: "better-toggle", "aria-pressed": String(A.betterShown)},
        A.betterShown ? t("Show the move played") : t("Show the better move on the board"));
      button.addEventListener("click", () => {
        A.betterShown = !A.betterShown;
        A.ctx.redraw();
      });
      lines.push(button);
    } else if (s.loss > 0.0005) {
      lines.push(h("div", {class: "muted"}, t("−{points} points of win chance", {points: points(s.loss)})));
    } else {
      lines.push(h("div", {class: "muted"}, t("The best move found.")));
    }
  } else if (s.luck) {
    lines.push(h("div", {}, t("Luck of this roll or draw:")));
    lines.push(h("ul", {class: "luck-list"}, ...s.luck.map((x, p) =>
      h("li", {}, t("{who}: {points} points of win chance", {who: nm[p], points: signed(x)})))));
  }
  box.replaceChildren(h("h2", {}, t("This move")), ...lines);
  box.hidden = false;
}

/** The position to draw instead of the one played, when the better move is shown, or null. */
export function betterPosition(step) {
  const s = step > 0 ? stepOf(step - 1) : null;
  if (!A.betterShown || !s || !s.best_position) return null;
  return {pos: s.best_position, text: t("Instead: {best} (the better move)", {best: betterText(s)})};
}

// --- the graph of the win chance ------------------------------------------------------------------
const W = 360;
const H = 140;

function series() {
  const d = A.data;
  const start = d.start || d.steps[0]?.values.map(() => 1 / d.players) || [];
  return [start, ...d.steps.map((s) => s.values)];
}

function graph(step) {
  const rows = series();
  const n = Math.max(1, rows.length - 1);
  const seats = rows[0].length;
  const x = (i) => (W * i) / n;
  const y = (v) => H - H * Math.max(0, Math.min(1, v));
  const nm = A.ctx.names();
  const root = svg("svg", {viewBox: `0 0 ${W} ${H}`, class: "winchance", role: "img", preserveAspectRatio: "none",
    "aria-label": t("Win chance of each player over the game; the table below gives the figures")});
  svg("rect", {x: 0, y: 0, width: W, height: H, class: "wc-bg"}, root);
  svg("line", {x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "wc-half"}, root);
  for (let p = 0; p < seats; p++) {
    const pts = rows.map((r, i) => `${x(i).toFixed(1)},${y(r[p]).toFixed(1)}`).join(" ");
    svg("polyline", {points: pts, class: "wc-line", stroke: COLORS[p % COLORS.length],
      "data-seat": p, title: nm[p]}, root);
  }
  for (const i of A.data.decisive || []) {
    svg("circle", {cx: x(i + 1), cy: 6, r: 4, class: "wc-moment"}, root);
  }
  svg("line", {x1: x(step), x2: x(step), y1: 0, y2: H, class: "wc-now"}, root);
  root.addEventListener("click", (ev) => {
    const box = root.getBoundingClientRect();
    A.ctx.go(Math.round(((ev.clientX - box.left) / box.width) * n));
  });
  return root;
}

function figures() {
  const rows = series();
  const nm = A.ctx.names();
  return h("details", {class: "wc-figures"}, h("summary", {}, t("Win chance, position by position")),
    h("table", {class: "tables"},
      h("thead", {}, h("tr", {}, h("th", {scope: "col"}, t("Position")), ...nm.map((n) => h("th", {scope: "col"}, n)))),
      h("tbody", {}, ...rows.map((r, i) => h("tr", {}, h("th", {scope: "row"}, String(i)),
        ...r.map((v) => h("td", {}, percent(v))))))));
}

export function updateGraph(step) {
  const holder = document.getElementById("winchance");
  if (holder && A.data) holder.replaceChildren(graph(step));
}

// --- the summary and the moments -------------------------------------------------------------------
function summary() {
  const nm = A.ctx.names();
  return h("ul", {class: "analysis-summary"}, ...A.data.summary.map((row) => h("li", {},
    h("span", {class: "swatch", style: `background:${COLORS[row.seat % COLORS.length]}`}),
    h("strong", {}, nm[row.seat]), " ",
    [tn("{n} move", "{n} moves", row.moves), tn("{n} inaccuracy", "{n} inaccuracies", row.inaccuracies),
      tn("{n} mistake", "{n} mistakes", row.mistakes), tn("{n} blunder", "{n} blunders", row.blunders),
      t("average loss {points} points", {points: points(row.average_loss)}),
      t("luck {points} points", {points: signed(row.luck)})].join(" · "))));
}

function winner() {
  const ret = A.data.returns || A.data.steps[A.data.steps.length - 1]?.values || [];
  let best = 0;
  ret.forEach((v, i) => { if (v > ret[best]) best = i; });
  return best;
}

function momentText(s) {
  const nm = A.ctx.names();
  if (s.kind === "chance") {
    const w = winner();
    return t("Move {n}: {what}. Luck for {winner}: {points} points of win chance.", {n: s.step + 1,
      what: playedText(s), winner: nm[w], points: signed(s.luck[w])});
  }
  return t("Move {n}: {move} ({label}: {points} points of win chance lost); better was: {best}.", {n: s.step + 1,
    move: playedText(s), label: s.label ? LABEL_WORDS[s.label]() : t("a small loss"), points: points(s.loss || 0),
    best: betterText(s)});
}

function moments() {
  const list = (A.data.decisive || []).map(stepOf).filter(Boolean);
  if (!list.length) return null;
  return h("div", {}, h("h3", {}, t("Three moments that decided the game")),
    h("ol", {class: "moments"}, ...list.map((s) => h("li", {},
      h("button", {type: "button", class: "moment", onclick: () => A.ctx.go(s.step + 1)}, momentText(s))))));
}

function method() {
  return A.data.evaluator === "exact" ? t("Exact values: this game is solved.")
    : t("Estimates of a search ({n} simulations per position), from what each player could see.",
      {n: A.data.iterations});
}

// --- the panel: ask, wait, show ----------------------------------------------------------------------
function render() {
  const panel = document.getElementById("analysis");
  if (!panel) return;
  if (A.mode === "off") {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  const title = h("h2", {}, t("Skill or luck?"));
  if (A.status === "ready" && A.data) {
    panel.replaceChildren(title, h("p", {class: "muted"}, method()), h("div", {id: "winchance"}), figures(),
      summary(), moments() || "");
    updateGraph(A.ctx.step());
    return;
  }
  if (A.status === "queued" || A.status === "running") {
    panel.replaceChildren(title, h("p", {role: "status"}, t("The analysis is being prepared: it appears here when ready.")));
    return;
  }
  const ask = h("button", {type: "button", class: "primary", id: "ask-analysis"},
    A.status === "failed" ? t("Try the analysis again") : t("Analyse this game"));
  ask.addEventListener("click", async () => {
    ask.disabled = true;
    try {
      take(await api(`/api/tables/${A.ctx.tableId}/analysis`, {}));
    } catch (e) {
      panel.append(h("p", {class: "error", role: "alert"}, e.message));
      ask.disabled = false;
    }
  });
  panel.replaceChildren(title,
    h("p", {}, A.status === "failed" ? t("The analysis of this game failed.")
      : t("Every move against the best one, and the luck of every roll: ask the server to analyse this game.")), ask);
}

function take(answer) {
  A.mode = answer.mode;
  A.status = answer.status;
  const arrived = !A.data && answer.analysis;
  if (answer.analysis) A.data = answer.analysis;
  render();
  if (arrived) A.ctx.analysed();
  clearTimeout(A.timer);
  if (A.status === "queued" || A.status === "running") A.timer = setTimeout(poll, POLL_MS);
}

async function poll() {
  try {
    take(await api(`/api/tables/${A.ctx.tableId}/analysis`));
  } catch {
    A.timer = setTimeout(poll, POLL_MS * 2);
  }
}

/** Start: ``ctx`` = {tableId, names(), renderer, moveText(i), step(), go(step), redraw(), analysed()}. */
export function startAnalysis(ctx) {
  A.ctx = ctx;
  poll();
}

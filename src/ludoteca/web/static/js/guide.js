// The guided first game of a game ("Learn to play", /learn/<game>; web/lobby/guide.py): one rule at a time on the
// real board. Each step shows a position drawn by the game's own client (as the table draws it), asks for
// a move (only that one is highlighted), lets the server play it with the real engine, and explains what
// happened with the engine's events (the table's announcements and log texts). A step may also show other
// legal moves first ("offered": e.g. the way a tile first fits, when the lesson asks to turn it), and a
// game with a clock shows the hourglass running while the learner thinks. The last step creates a real
// table against the easiest AI level. The server keeps nothing: each request names the step.
import {COLORS, announcements, api, describe, getName, h, loadClient, logLines, sameAction, setName, setSeat, svg}
  from "./common.js";
import {drawBoard} from "./board.js";
import {LANG, languageSwitch, t} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const game = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const G = {
  info: null, renderer: null, n: 1, step: null, done: null, ui: {}, sent: false, names: [], busy: false, clockAt: 0,
};
window.ludotecaGuide = G; // for tests and curious people

const base = `/api/guide/${encodeURIComponent(game)}`;
const withLang = (path) => `${path}?lang=${encodeURIComponent(LANG)}`;

function names() {
  const me = getName() || t("Player"); // a name, as the event texts read "{name} rolls 5"
  return [me, ...Array.from({length: Math.max(1, (G.info ? G.info.players : 2) - 1)}, (_, k) =>
    (G.info && G.info.players > 2 ? t("Opponent {n}", {n: k + 1}) : t("Opponent")))];
}

function seats() {
  return G.names.map((name, i) => ({kind: i === (G.info ? G.info.learner : 0) ? "human" : "ai", name, connected: true,
    level: i === 0 ? null : G.info && G.info.level}));
}

function announce(texts) {
  const a = $("announce");
  if (!texts.length) return;
  a.replaceChildren(...texts.slice(-3).map((x) => h("div", {class: "announce-line"}, x)));
  a.classList.remove("show");
  void a.offsetWidth; // restart the transition
  a.classList.add("show");
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => a.classList.remove("show"), 3000);
}

function hideAnnouncement() {
  clearTimeout(announce.timer);
  $("announce").classList.remove("show");
}

function feedback(text, kind = "") {
  const box = $("feedback");
  box.hidden = !text;
  box.className = `guide-feedback ${kind}`;
  box.textContent = text || "";
}

function lines(entries) {
  return logLines(G.renderer, entries, G.names).map((line) => h("li", {}, line.text));
}

function context(pos, legal, toMove) {
  return {
    svg: $("board"), controls: $("controls"), pos, legal, you: G.info.learner, seats: seats(), names: G.names,
    colors: COLORS, ui: G.ui, act, toMove, redraw: renderBoard, replay: false,
    status: pos.phase === "over" ? "over" : "playing",
  };
}

function renderBoard() {
  const s = G.step;
  if (!s) return;
  if (G.done) {
    drawBoard(G.renderer, context(G.done.position, [], G.done.to_move), [...s.log, ...G.done.log]);
  } else {
    const shown = [...(s.offered || []), ...s.moves]; // the offered ones first: the asked move is a choice
    drawBoard(G.renderer, context(s.position, G.sent ? [] : shown, s.to_move), s.log);
  }
}

/** The hourglass of the step: it runs while the learner thinks (nothing happens when it runs out). */
function tickClock() {
  const box = $("guide-clock");
  const clock = G.step && !G.done ? G.step.clock : null;
  box.hidden = !clock;
  if (!clock) return;
  const remaining = Math.max(0, clock.remaining - (performance.now() - G.clockAt) / 1000);
  const frac = clock.full > 0 ? Math.min(1, remaining / clock.full) : 0;
  box.classList.toggle("low", remaining < 10);
  const icon = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  icon.setAttribute("viewBox", "0 0 40 60");
  icon.setAttribute("width", "24");
  icon.setAttribute("height", "36");
  icon.setAttribute("aria-hidden", "true");
  svg("path", {d: "M5 3 H35 M5 57 H35 M8 3 C8 22 32 22 32 30 C32 38 8 38 8 57 M32 3 C32 22 8 22 8 30 C8 38 32 38 32 57",
    fill: "none", stroke: "#6b4f2a", "stroke-width": 3}, icon);
  const top = 26 * frac, bottom = 26 * (1 - frac);
  svg("polygon", {points: `${20 - top * 0.45},${28 - top} ${20 + top * 0.45},${28 - top} 20,28`, fill: "#e0b85a"}, icon);
  svg("polygon", {points: `${20 - bottom * 0.45 - 2},56 ${20 + bottom * 0.45 + 2},56 20,${56 - bottom}`, fill: "#e0b85a"}, icon);
  const mine = clock.seat === G.info.learner;
  const parts = [icon, h("span", {class: "guide-clock-who"}, mine ? t("Your hourglass") : t("Hourglass")),
    h("span", {id: "guide-clock-seconds"}, t("{seconds} s", {seconds: remaining.toFixed(1)}))];
  if (remaining <= 0) parts.push(h("span", {class: "guide-clock-note"}, t("Time is up: in a real game the turn would end now. Here, take your time.")));
  box.replaceChildren(...parts);
}

/** The end of the game, said in words beside the board (never hidden by an announcement). */
function resultText(done) {
  if (!done.over) return "";
  const winners = done.winners || [];
  if (winners.length === 1 && winners[0] === G.info.learner) return t("Game over: you win!");
  if (winners.includes(G.info.learner)) return t("Game over: you share the win.");
  if (winners.length === 1) return t("Game over: {name} wins.", {name: G.names[winners[0]]});
  return t("Game over: nobody wins.");
}

function renderOther() {
  const s = G.step;
  const others = G.done ? [] : s.legal.filter((a) => !s.moves.some((m) => sameAction(a, m))
    && !(s.offered || []).some((m) => sameAction(a, m)));
  $("other").hidden = others.length === 0;
  $("other-summary").textContent = t("Other legal moves ({n})", {n: others.length});
  $("other-moves").replaceChildren(...others.slice(0, 60).map((a) =>
    h("button", {onclick: () => act(a), "data-action": JSON.stringify(a)}, describe(G.renderer, a, G.names))));
}

function render() {
  const s = G.step;
  const count = G.info.steps.length;
  $("lesson").hidden = false;
  $("finish").hidden = true;
  $("progress").textContent = t("Step {n} of {count}", {n: G.n, count});
  $("step-title").textContent = s.title;
  $("before").textContent = s.before;
  const setup = lines(s.log);
  $("setup-log").hidden = setup.length === 0;
  $("setup-log").replaceChildren(...setup);
  renderBoard();
  renderOther();
  const box = $("after-box");
  box.hidden = !G.done;
  const result = G.done ? resultText(G.done) : "";
  $("result").hidden = !result;
  $("result").textContent = result;
  tickClock();
  if (G.done) {
    $("log").replaceChildren(...lines(G.done.log));
    $("after").textContent = G.done.after;
    $("next").textContent = G.n < count ? t("Next step") : t("Finish");
  }
  $("prev").hidden = G.n <= 1;
}

async function showStep(n) {
  const count = G.info.steps.length;
  if (n > count) { showFinish(); return; }
  G.n = Math.max(1, n);
  hideAnnouncement();
  history.replaceState(null, "", `#${G.n}`);
  G.step = await api(withLang(`${base}/${G.n}`));
  G.clockAt = performance.now();
  G.done = null;
  G.ui = {};
  G.sent = false;
  feedback("");
  render();
  window.scrollTo(0, 0);
}

async function act(action) {
  if (G.sent || G.done || !G.step) return;
  G.sent = true;
  renderBoard();
  let res;
  try {
    res = await api(withLang(`${base}/${G.n}`), {action});
  } catch (e) {
    G.sent = false;
    G.ui = {};
    feedback(e.message, "bad");
    renderBoard();
    return;
  }
  G.sent = false;
  if (!res.asked) {
    G.ui = {};
    const move = describe(G.renderer, action, G.names);
    feedback(t("Not this one: {move}. Instead: {hint}", {move, hint: res.hint || t("make the highlighted move.")}), "bad");
    render();
    return;
  }
  G.done = res;
  G.ui = {};
  feedback("");
  render();
  // the end of a game is said beside the board (#result), not over it
  if (!res.over) announce(announcements(G.renderer, res.log.flatMap((e) => e.events || []), G.names));
  $("after-box").scrollIntoView({block: "nearest", behavior: "smooth"});
}

function showFinish() {
  G.n = G.info.steps.length + 1;
  hideAnnouncement();
  history.replaceState(null, "", "#play");
  $("lesson").hidden = true;
  $("finish").hidden = false;
  $("finish-title").textContent = t("Play a real game against the easiest AI");
  $("finish-text").textContent = t("You know the rules of {title}. Now play a whole game against the easiest computer player: the table works like any other, with the rules one tap away.", {title: G.info.title});
  $("my-name").value = getName();
  window.scrollTo(0, 0);
}

async function playReal() {
  $("play-error").textContent = "";
  const name = $("my-name").value.trim();
  setName(name);
  const players = G.info.players;
  const seatsBody = Array.from({length: players}, (_, i) => (i === 0 ? {kind: "open"} : {kind: "ai", level: G.info.level}));
  $("play").disabled = true;
  try {
    const res = await api("/api/tables", {game: G.info.game, players, options: {}, seats: seatsBody, sit: 0,
      name: name || null, unlisted: true});
    if (res.token) setSeat(res.id, res.seat, res.token);
    location.href = res.url;
  } catch (e) {
    $("play-error").textContent = e.message;
    $("play").disabled = false;
  }
}

async function init() {
  $("lang-switch").replaceWith(languageSwitch());
  $("prev").textContent = t("Previous step");
  $("restart").textContent = t("Start again");
  $("name-label").textContent = t("Your name");
  $("my-name").placeholder = t("no sign-up needed");
  $("play").textContent = t("Play against the AI");
  $("again").textContent = t("Go through the lessons again");
  $("next").addEventListener("click", () => showStep(G.n + 1));
  $("prev").addEventListener("click", () => showStep(G.n - 1));
  $("restart").addEventListener("click", () => showStep(1));
  $("again").addEventListener("click", () => showStep(1));
  $("play").addEventListener("click", playReal);
  try {
    G.info = await api(withLang(base));
  } catch (e) {
    $("step-title").textContent = t("No guided game here");
    $("before").textContent = e.message;
    $("before").append(" ", h("a", {href: "/"}, t("Back to the lobby")));
    return;
  }
  G.renderer = await loadClient(G.info.game);
  G.names = names();
  document.title = t("ludoteca — learn {title}", {title: G.info.title});
  $("guide-heading").textContent = t("Learn to play {title}", {title: G.info.title});
  $("rules-link").textContent = t("Rules");
  $("rules-link").href = `/rules/${encodeURIComponent(G.info.game)}`;
  const wanted = location.hash.slice(1);
  if (wanted === "play") showFinish();
  else await showStep(/^\d{1,2}$/.test(wanted) ? Number(wanted) : 1);
}

setInterval(tickClock, 200);
init();

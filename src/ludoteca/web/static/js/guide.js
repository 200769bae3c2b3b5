// The guided first game of a game ("Learn to play", /learn/<game>; web/guide.py): one rule at a time on the
// real board. Each step shows a position drawn by the game's own client (as the table draws it), asks for
// a move (only that one is highlighted), lets the server play it with the real engine, and explains what
// happened with the engine's events (the table's announcements and log texts). The last step creates a
// real table against the easiest AI. The server keeps nothing: each request names the step.
import {COLORS, announcements, api, describe, getName, h, loadClient, logLines, sameAction, setName, setSeat}
  from "./common.js";
import {drawBoard} from "./board.js";
import {LANG, languageSwitch, t} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const game = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const G = {
  info: null, renderer: null, n: 1, step: null, done: null, ui: {}, sent: false, names: [], busy: false,
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
    drawBoard(G.renderer, context(s.position, G.sent ? [] : s.moves, s.to_move), s.log);
  }
}

function renderOther() {
  const s = G.step;
  const others = G.done ? [] : s.legal.filter((a) => !s.moves.some((m) => sameAction(a, m)));
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
  announce(announcements(G.renderer, res.log.flatMap((e) => e.events || []), G.names));
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

init();

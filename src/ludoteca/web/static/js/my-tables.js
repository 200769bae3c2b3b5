// "Your games" (/my-tables): every table where this person holds a seat — an account's on every device, a
// name-only player's through the seat tokens this browser keeps — those waiting for their move first with the
// time left, then the others, then the recently finished ones. The tab's title counts the games waiting.
import {api, getSeat, h, seatName} from "./common.js";
import {languageSwitch, t, tn, translatePage} from "./i18n.js";
import {timeLeft} from "./time-left.js";

const $ = (id) => document.getElementById(id);
const TITLE = t("ludoteca — your games");
let answered = 0; // when the last answer came (performance.now(), ms): the time left counts down from it
let cards = [];

/** The seat tokens this browser keeps (common.js setSeat), the most recent 50. */
function keptSeats() {
  const seats = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith("ludoteca.seat.")) continue;
    const table = key.slice("ludoteca.seat.".length);
    const kept = getSeat(table);
    if (kept && /^[A-Za-z0-9_-]{1,32}$/.test(table)) seats.push({table, token: kept.token});
  }
  return seats.slice(-50);
}

function names(tb, mine) {
  return tb.seats.map((s, i) => (i === mine ? t("you") : s.name ? seatName(tb.seats, i) : t("(open)"))).join(", ");
}

function whenText(tb) {
  if (tb.status === "waiting") return t("waiting for players");
  if (tb.status === "over") {
    const winners = (tb.result && tb.result.winners) || [];
    if (winners.includes(tb.my_seat)) return t("you won");
    if (!winners.length) return t("no winner");
    return t("won by {name}", {name: winners.map((w) => (tb.seats[w] && tb.seats[w].name ? seatName(tb.seats, w) : t("Player {n}", {n: w + 1}))).join(", ")});
  }
  if (tb.your_turn) return tb.due ? null : t("your move");
  const mover = tb.to_move !== undefined && tb.to_move !== null ? tb.seats[tb.to_move] : null;
  return mover && mover.name ? t("{name} to move", {name: mover.name}) : t("in play");
}

function card(tb) {
  const when = h("span", {class: "when"}, whenText(tb) || "");
  if (tb.your_turn && tb.time_left !== null && tb.time_left !== undefined) cards.push({tb, when});
  const link = tb.status === "over" ? h("a", {class: "go", href: `/replay/${tb.id}`}, t("Replay"))
    : h("a", {class: "go", href: `/t/${tb.id}`}, tb.your_turn ? t("Play") : t("Open"));
  const pace = tb.pace === "turn-based" ? h("span", {class: "tag"}, t("turn-based")) : null;
  return h("li", {class: `game-card${tb.your_turn ? " is-yours" : ""}`},
    h("div", {class: "what"}, h("div", {class: "game-title"}, tb.title || tb.game, pace),
      h("div", {class: "who"}, names(tb, tb.my_seat)), when), link);
}

function tick() {
  const gone = (performance.now() - answered) / 1000;
  for (const {tb, when} of cards) {
    const left = tb.time_left - gone;
    when.textContent = left > 0 ? t("your move — {time} left", {time: timeLeft(left)}) : t("your move — time is up");
    when.classList.toggle("is-soon", left < 3600);
  }
}

function fill(id, list) {
  $(`${id}-panel`).hidden = list.length === 0;
  $(`${id}-list`).replaceChildren(...list.map(card));
}

async function refresh() {
  let data;
  try {
    data = await api("/api/my-tables", {seats: keptSeats()});
  } catch (e) {
    $("summary").textContent = e.message;
    $("summary").className = "error";
    return;
  }
  answered = performance.now();
  cards = [];
  const waiting = data.tables.filter((tb) => tb.your_turn);
  const others = data.tables.filter((tb) => !tb.your_turn && tb.status !== "over");
  const finished = data.tables.filter((tb) => tb.status === "over");
  fill("waiting", waiting);
  fill("others", others);
  fill("finished", finished);
  tick();
  $("summary").className = "muted";
  $("summary").textContent = !data.tables.length ? t("You have no games yet: create a table or join one from the lobby.")
    : data.waiting ? tn("{n} game waits for your move.", "{n} games wait for your move.", data.waiting)
      : t("No game waits for your move.");
  document.title = data.waiting ? `(${data.waiting}) ${TITLE}` : TITLE;
}

function init() {
  translatePage();
  $("top").append(languageSwitch());
  refresh();
  setInterval(tick, 30_000);
  setInterval(refresh, 60_000);
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh(); });
}

init();

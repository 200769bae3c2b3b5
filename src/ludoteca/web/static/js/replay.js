// The replay page: every position of a finished game, stepping forward and back.
import {zoomTools} from "./board.js";
import {COLORS, announcements, api, entryText, h, loadClient, logLines, resultText, seatName} from "./common.js";
import {languageSwitch, t, tn, translatePage} from "./i18n.js";
import {A, betterPosition, decorate, moveBox, startAnalysis, updateGraph} from "./replay-analysis.js";

const $ = (id) => document.getElementById(id);
const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
const R = {data: null, step: 0, renderer: null};

function names() {
  return R.data.seats.map((s, i) => seatName(R.data.seats, i));
}

/** Action ``i`` as a log entry (a finished game: every event is public). */
function entryOf(i) {
  const d = R.data;
  return {i, seat: d.action_seats[i], action: d.actions[i], events: d.events ? d.events[i] : []};
}

/** The announcements (common.js) of action ``i``'s events: what the table showed over the board. */
function announced(i) {
  try { return announcements(R.renderer, entryOf(i).events || [], names()); } catch { return []; }
}

function show(step) {
  const d = R.data;
  const next = Math.max(0, Math.min(d.positions.length - 1, step));
  if (next !== R.step) A.betterShown = false; // another position: the move played again
  R.step = next;
  const better = betterPosition(R.step); // the analysis: the position after the better move
  const pos = better ? better.pos : d.positions[R.step];
  const nm = names();
  $("slider").value = R.step;
  $("step").textContent = t("position {n} / {total}", {n: R.step, total: d.positions.length - 1});
  const toMove = d.to_move[R.step];
  let phase = "";
  if (R.renderer && R.renderer.phaseText) {
    try { phase = R.renderer.phaseText(pos, {names: nm, you: null, toMove}); } catch { phase = ""; }
  }
  if (R.step === d.positions.length - 1) {
    $("banner").textContent = t("End: {result}", {result: resultText(d.result, d.seats)});
  } else if (R.step === 0) {
    $("banner").textContent = t("Start of the game");
  } else {
    const text = entryText(R.renderer, entryOf(R.step - 1), nm);
    $("banner").textContent = phase ? t("After: {move} — next: {phase}", {move: text, phase})
      : t("After: {move}", {move: text});
  }
  if (better) $("banner").textContent = better.text;
  moveBox(R.step);
  updateGraph(R.step);
  const news = R.step > 0 && !better ? announced(R.step - 1) : [];
  $("announce").hidden = !news.length;
  $("announce").replaceChildren(...news.map((text) => h("div", {class: "announce-line"}, text)));
  const board = $("board");
  board.replaceChildren();
  if (R.renderer) {
    R.renderer.render({svg: board, controls: null, pos, legal: [], you: null, seats: d.seats, names: nm,
      colors: COLORS, ui: {}, act: () => {}, redraw: () => show(R.step), toMove, replay: true, status: "over"});
  }
  const seats = d.seats.map((s, i) => h("div", {class: "seat" + (toMove === i ? " to-move" : "")},
    h("span", {class: "swatch", style: `background:${COLORS[i % COLORS.length]}`}),
    h("div", {class: "info"}, h("div", {class: "name"}, nm[i]),
      h("div", {class: "detail"}, R.renderer && R.renderer.seatInfo ? R.renderer.seatInfo(pos, i) : ""))));
  $("seats").replaceChildren(...seats);
  for (const li of $("log").children) {
    li.classList.toggle("current", Number(li.dataset.first) <= R.step && R.step <= Number(li.dataset.step));
  }
  const cur = $("log").querySelector("li.current");
  if (cur) cur.scrollIntoView({block: "nearest"});
}

/** The log: one line per action, the runs the game's client groups (e.g. a deal) as one line. */
function renderLog() {
  const d = R.data;
  const nm = names();
  const lines = logLines(R.renderer, d.actions.map((_, i) => entryOf(i)), nm);
  $("log").replaceChildren(...lines.map((line) => {
    const first = line.entries[0].i;
    const last = line.entries[line.entries.length - 1].i;
    const chance = line.entries[0].seat === null || line.entries[0].seat === undefined;
    const marked = line.entries.some((e) => announced(e.i).length);
    const li = h("li", {class: [chance ? "chance" : "", line.group ? "group" : "", marked ? "announced" : ""]
      .filter(Boolean).join(" "), value: first + 1, dataset: {first: first + 1, step: last + 1}},
    line.group ? h("details", {}, h("summary", {}, line.text),
    ...line.entries.map((x) => h("div", {class: "group-item"}, entryText(R.renderer, x, nm)))) : line.text);
    decorate(li, line.entries.map((e) => e.i)); // the analysis's label, loss and better move
    li.addEventListener("click", (ev) => {
      if (ev.target.closest("summary")) return; // opening a group does not move
      show(last + 1);
    });
    return li;
  }));
}

/** On an upright phone the whole board is seen at the top of the page with what is above it (the header, the step,
 * the buttons) and the dock under it (style.css: --chrome), not partly under the dock; held sideways, or on a large
 * screen, the board keeps the default room. */
function fitChrome() {
  const root = document.documentElement.style;
  if (window.innerWidth > 600 || window.innerHeight <= 500) {
    root.removeProperty("--chrome");
    return;
  }
  const above = $("board-wrap").getBoundingClientRect().top + window.scrollY;
  const dock = document.querySelector(".replay-dock");
  const below = dock ? dock.getBoundingClientRect().height : 0;
  root.setProperty("--chrome", `${Math.ceil(above + below + 24)}px`); // (24: room for a step told on two lines)
}

async function init() {
  translatePage();
  $("top").append(languageSwitch());
  $("board-wrap").after(h("div", {class: "play-dock replay-dock"}, zoomTools($("board-wrap")))); // zoom for detail
  $("download").href = `/api/tables/${tableId}/record`;
  try {
    R.data = await api(`/api/tables/${tableId}/replay`);
  } catch (e) {
    $("banner").textContent = e.message;
    return;
  }
  const d = R.data;
  R.renderer = await loadClient(d.game.name);
  $("game-title").textContent = tn("Replay · {game} · {n} player · table {table}",
    "Replay · {game} · {n} players · table {table}", d.game.players, {game: d.game.title, table: d.table});
  $("slider").max = d.positions.length - 1;
  renderLog();
  $("result-box").hidden = false;
  $("result-box").replaceChildren(h("div", {class: "result"}, resultText(d.result, d.seats)),
    h("a", {href: `/t/${tableId}`}, t("back to the table")));
  $("first").onclick = () => show(0);
  $("prev").onclick = () => show(R.step - 1);
  $("next").onclick = () => show(R.step + 1);
  $("last").onclick = () => show(d.positions.length - 1);
  $("slider").oninput = () => show(Number($("slider").value));
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowRight") show(R.step + 1);
    else if (ev.key === "ArrowLeft") show(R.step - 1);
    else if (ev.key === "Home") show(0);
    else if (ev.key === "End") show(d.positions.length - 1);
  });
  show(0);
  fitChrome();
  window.addEventListener("resize", fitChrome);
  startAnalysis({tableId, renderer: R.renderer, names, moveText: (i) => entryText(R.renderer, entryOf(i), names()),
    step: () => R.step, go: (n) => show(n), redraw: () => show(R.step), analysed: () => { renderLog(); show(R.step); }});
}

init();

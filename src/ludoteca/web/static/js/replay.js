// The replay page: every position of a finished game, stepping forward and back.
import {COLORS, api, entryText, h, loadClient, resultText} from "./common.js";

const $ = (id) => document.getElementById(id);
const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
const R = {data: null, step: 0, renderer: null};

function names() {
  return R.data.seats.map((s, i) => s.name || `Seat ${i + 1}`);
}

/** Action ``i`` as a log entry (a finished game: every event is public). */
function entryOf(i) {
  const d = R.data;
  return {i, seat: d.action_seats[i], action: d.actions[i], events: d.events ? d.events[i] : []};
}

function show(step) {
  const d = R.data;
  R.step = Math.max(0, Math.min(d.positions.length - 1, step));
  const pos = d.positions[R.step];
  const nm = names();
  $("slider").value = R.step;
  $("step").textContent = `position ${R.step} / ${d.positions.length - 1}`;
  const toMove = d.to_move[R.step];
  let phase = "";
  if (R.renderer && R.renderer.phaseText) {
    try { phase = R.renderer.phaseText(pos, {names: nm, you: null, toMove}); } catch { phase = ""; }
  }
  if (R.step === d.positions.length - 1) $("banner").textContent = `End: ${resultText(d.result, d.seats)}`;
  else if (R.step === 0) $("banner").textContent = "Start of the game";
  else {
    const text = entryText(R.renderer, entryOf(R.step - 1), nm);
    $("banner").textContent = `After: ${text}${phase ? " — next: " + phase : ""}`;
  }
  const board = $("board");
  board.replaceChildren();
  if (R.renderer) {
    R.renderer.render({svg: board, controls: null, pos, legal: [], you: null, seats: d.seats, names: nm,
      colors: COLORS, ui: {}, act: () => {}, redraw: () => show(R.step), toMove, replay: true, status: "over"});
  }
  const seats = d.seats.map((s, i) => h("div", {class: "seat" + (toMove === i ? " to-move" : "")},
    h("span", {class: "swatch", style: `background:${COLORS[i % COLORS.length]}`}),
    h("div", {class: "info"}, h("div", {class: "name"}, s.name || `Seat ${i + 1}`),
      h("div", {class: "detail"}, R.renderer && R.renderer.seatInfo ? R.renderer.seatInfo(pos, i) : ""))));
  $("seats").replaceChildren(...seats);
  for (const li of $("log").children) li.classList.toggle("current", Number(li.dataset.step) === R.step);
  const cur = $("log").querySelector("li.current");
  if (cur) cur.scrollIntoView({block: "nearest"});
}

async function init() {
  $("download").href = `/api/tables/${tableId}/record`;
  try {
    R.data = await api(`/api/tables/${tableId}/replay`);
  } catch (e) {
    $("banner").textContent = e.message;
    return;
  }
  const d = R.data;
  R.renderer = await loadClient(d.game.name);
  $("game-title").textContent = `Replay · ${d.game.title} · ${d.game.players} players · table ${d.table}`;
  $("slider").max = d.positions.length - 1;
  const nm = names();
  $("log").replaceChildren(...d.actions.map((a, i) => {
    const seat = d.action_seats[i];
    const li = h("li", {class: seat === null ? "chance" : "", dataset: {step: i + 1}}, entryText(R.renderer, entryOf(i), nm));
    li.addEventListener("click", () => show(i + 1));
    return li;
  }));
  $("result-box").hidden = false;
  $("result-box").replaceChildren(h("div", {class: "result"}, resultText(d.result, d.seats)),
    h("a", {href: `/t/${tableId}`}, "back to the table"));
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
}

init();

// A turn-based table (web/master/pace.py): its time per move, the time left to the player to move (the server's
// deadline, GET /api/tables/<id>/pace), each seat's reserve when the table has one, "Claim the win" for the opponent of a player whose time ran out,
// and, for the table's creator only, its club webhook (table-hook.js).
import {api, getSeat, h} from "./common.js";
import {t} from "./i18n.js";
import {askHook, hookPart} from "./table-hook.js";
import {timeLeft} from "./time-left.js";
import {$, S, names, tableId, toast} from "./table-state.js";

let pace = null; // the last answer
let at = 0; // when it came (performance.now(), ms)
let asked = -1; // the seq it was asked for

/** "1 day per move", "4 hours per move"... from whole seconds. */
function perMove(seconds) {
  return t("{time} per move", {time: timeLeft(seconds)});
}

function render() {
  let box = $("pace-box");
  if (!pace || pace.pace !== "turn-based") {
    if (box) box.hidden = true;
    return;
  }
  if (!box) {
    box = h("div", {class: "panel pace-box", id: "pace-box", role: "status"});
    $("seats").closest(".panel").before(box);
  }
  box.hidden = false;
  const lines = [h("div", {}, h("span", {class: "tag"}, t("turn-based")), " ", perMove(pace.move_time),
    pace.reserve ? t(" (reserve up to {time})", {time: timeLeft(pace.reserve)}) : "")];
  if (pace.seat !== null && pace.time_left !== null) {
    const left = pace.time_left - (performance.now() - at) / 1000;
    const who = names()[pace.seat] || "";
    lines.push(h("div", {id: "pace-left", class: left < 3600 ? "is-soon" : null},
      left > 0 ? t("{name}: {time} left", {name: who, time: timeLeft(left)}) : t("{name}: time is up", {name: who})));
  }
  if (pace.reserve && pace.reserves && pace.reserves.length) { // each seat's saved time ("time to think")
    const seats = pace.reserves.map((r, i) => t("{name}: {time}", {name: names()[i] || "", time: r > 0 ? timeLeft(r) : t("none")}));
    lines.push(h("div", {id: "pace-reserves", class: "opt-note"}, t("Reserve: {seats}", {seats: seats.join(" · ")})));
  }
  const mine = getSeat(tableId);
  if (pace.claimable && mine && S.msg && S.msg.you !== null && S.msg.you !== undefined && S.msg.you !== pace.seat) {
    lines.push(h("button", {class: "primary", id: "claim-win", onclick: claim}, t("Claim the win")));
  }
  const hook = hookPart(); // the creator's club webhook (table-hook.js)
  box.replaceChildren(...lines, ...(hook ? [hook] : []));
}

async function claim() {
  const mine = getSeat(tableId);
  try {
    await api(`/api/tables/${tableId}/claim`, {token: mine ? mine.token : null});
  } catch (e) {
    toast(e.message);
  }
}

/** After every snapshot or update: ask the server again when the position changed. */
export async function showPace(m) {
  if (!S.settings || S.settings.pace !== "turn-based") return;
  if (m.seq !== asked || m.type === "snapshot") {
    asked = m.seq;
    try {
      pace = await api(`/api/tables/${tableId}/pace`);
      at = performance.now();
    } catch { /* the next update asks again */ }
  }
  render();
  askHook(render);
}

setInterval(() => { if (pace && pace.pace === "turn-based") render(); }, 30_000);

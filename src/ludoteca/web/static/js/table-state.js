// The table page's shared state: the table's id, what the server last sent (S), the websocket, and the
// small helpers every part of the page uses (table.js, table-chat.js, table-sounds.js).
import {t} from "./i18n.js";

export const $ = (id) => document.getElementById(id);
export const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
export const S = {
  game: null, msg: null, log: [], renderer: null, ui: {}, seq: -1, ws: null, retry: 0,
  clockAt: 0, chain: Promise.resolve(), sent: false, closedForGood: false, seatsAt: 0, rematchOf: null,
  announced: -1, // the newest log entry whose events were announced (a snapshot's history is not)
  notes: [], // the table's notices and chat lines (server: web/master/talk.py), in order
  sounds: [], // the sounds played (kinds), for tests
  wasMine: false,
};
window.ludoteca = S; // for tests and curious people

export function send(data) {
  if (S.ws && S.ws.readyState === WebSocket.OPEN) S.ws.send(JSON.stringify(data));
}

export function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 4000);
}

export function names() {
  return (S.msg ? S.msg.seats : []).map((s, i) => s.name || t("Seat {n}", {n: i + 1}));
}

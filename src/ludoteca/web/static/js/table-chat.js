// The table's chat (web/master/talk.py): shown or hidden (remembered in this browser), a line sent by a player
// or a spectator (with the name typed), the lines and the notices drawn; spectators apart when the table says so.
import {getName, h} from "./common.js";
import {t} from "./i18n.js";
import {$, S, send, toast} from "./table-state.js";
import {noteText} from "./table-notes.js";

const CHAT_HIDDEN_KEY = "ludoteca.chatHidden";

export function isMe(n) {
  return S.msg && n.seat !== null && n.seat !== undefined && n.seat === S.msg.you;
}

export function setupChat() {
  const hidden = localStorage.getItem(CHAT_HIDDEN_KEY) === "1";
  showChat(!hidden);
  $("chat-toggle").addEventListener("click", () => {
    const show = $("chat-box").hidden;
    localStorage.setItem(CHAT_HIDDEN_KEY, show ? "0" : "1");
    showChat(show);
  });
  $("chat-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("chat-text");
    const text = input.value.trim();
    if (!text) return;
    if (!S.ws || S.ws.readyState !== WebSocket.OPEN) { toast(t("Not connected: your message was not sent.")); return; }
    const seated = S.msg && S.msg.you !== null && S.msg.you !== undefined;
    send(seated ? {type: "chat", text} : {type: "chat", text, name: $("my-name").value.trim() || getName() || null});
    input.value = "";
  });
}

function showChat(show) {
  $("chat-box").hidden = !show;
  const button = $("chat-toggle");
  button.textContent = show ? t("Hide chat") : t("Show chat");
  button.setAttribute("aria-pressed", show ? "true" : "false");
}

export function renderChat() {
  const m = S.msg;
  const spectator = !m || m.you === null || m.you === undefined;
  const note = $("chat-note");
  const separate = S.settings && S.settings.chat === "separate";
  note.hidden = !separate;
  note.textContent = spectator ? t("Spectators' messages reach spectators only.")
    : t("Spectators talk among themselves: you do not see their messages.");
  // a line a moderator removed (web/accounts/moderation.py) shows in its place, whether this page had it before
  const gone = new Set(S.notes.filter((n) => n.kind === "chat_removed").map((n) => n.removed_time));
  const lines = S.notes.slice(-150).filter((n) => n.kind !== "chat_removed").map((n) => {
    if (n.kind !== "chat") return h("li", {class: "chat-notice"}, noteText(n));
    const removed = n.removed || gone.has(n.time);
    return h("li", {class: "chat-line" + (isMe(n) ? " mine" : "") + (n.channel === "spectators" ? " spectators" : "")
      + (removed ? " removed" : "")},
      h("span", {class: "chat-name"}, n.seat === null || n.seat === undefined ? t("{name} (watching)", {name: n.name})
        : n.name), " ", h("span", {class: "chat-text"}, removed ? t("(removed by a moderator)") : n.text));
  });
  const box = $("chat-lines");
  box.replaceChildren(...lines);
  box.scrollTop = box.scrollHeight;
}

// The table page: live position over a websocket, board clicks, seats, log, clock, result.
import {COLORS, announcements, api, describe, entryText, getName, getSeat, h, lastMoveCells, loadClient, logLines,
  resultText, seatName, setName, setSeat, svg} from "./common.js";

const $ = (id) => document.getElementById(id);
const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
const S = {
  game: null, msg: null, log: [], renderer: null, ui: {}, seq: -1, ws: null, retry: 0,
  clockAt: 0, chain: Promise.resolve(), sent: false, closedForGood: false, seatsAt: 0, rematchOf: null,
  announced: -1, // the newest log entry whose events were announced (a snapshot's history is not)
};
window.ludoteca = S; // for tests and curious people

function send(data) {
  if (S.ws && S.ws.readyState === WebSocket.OPEN) S.ws.send(JSON.stringify(data));
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 4000);
}

const ANNOUNCE_MS = 3000;

/** Shows the announcements of some new events for a moment over the board (the log keeps them). */
function announce(texts) {
  if (!texts.length) return;
  let a = $("announce");
  if (!a) {
    a = h("div", {id: "announce", class: "announce", role: "status", "aria-live": "polite"});
    document.body.append(a);
  }
  a.replaceChildren(...texts.slice(-3).map((t) => h("div", {class: "announce-line"}, t)));
  a.dataset.n = String((Number(a.dataset.n) || 0) + 1); // which announcement this is (for tests)
  a.classList.remove("show");
  void a.offsetWidth; // restart the transition
  a.classList.add("show");
  clearTimeout(announce.timer);
  announce.timer = setTimeout(() => a.classList.remove("show"), ANNOUNCE_MS);
}

function setConn(text) {
  $("conn").textContent = text;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(tableId)}`);
  S.ws = ws;
  ws.onopen = () => {
    S.retry = 0;
    setConn("● live");
    const mine = getSeat(tableId);
    if (mine) send({type: "auth", token: mine.token});
  };
  ws.onmessage = (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch { return; }
    S.chain = S.chain.then(() => onMessage(m)).catch((e) => console.error(e));
  };
  ws.onclose = (ev) => {
    if (S.closedForGood || ev.code === 4404) return;
    setConn("reconnecting…");
    setTimeout(connect, Math.min(5000, 300 * 2 ** S.retry++));
  };
}

async function loadRenderer(name) {
  S.renderer = await loadClient(name);
}

async function onMessage(m) {
  switch (m.type) {
    case "snapshot":
      if (!S.game || S.game.name !== m.game.name) await loadRenderer(m.game.name);
      S.game = m.game;
      S.rematchOf = m.rematch_of || null;
      S.log = [];
      $("game-title").textContent = `${m.game.title} · ${m.game.players} players · table ${m.table}`;
      if (!$("rules-link")) { // the game's rules page, in a new tab so the game stays open
        $("game-title").after(h("a", {id: "rules-link", class: "rules-link", target: "_blank", rel: "noopener"}, "Rules"));
      }
      $("rules-link").href = `/rules/${encodeURIComponent(m.game.name)}`;
      document.title = `ludoteca — ${m.game.title}`;
      // falls through
    case "update":
      S.log.length = Math.min(S.log.length, m.log_from);
      for (const e of m.log) S.log[e.i] = e;
      const fresh = m.type === "snapshot" ? [] : m.log.filter((e) => e && e.i > S.announced);
      S.announced = S.log.length - 1;
      if (m.seq !== S.seq) S.ui = {};
      S.seq = m.seq;
      S.sent = false;
      S.msg = m;
      S.clockAt = performance.now();
      S.seatsAt = S.clockAt;
      renderAll();
      announce(announcements(S.renderer, fresh.flatMap((e) => e.events || []), names()));
      break;
    case "seats":
      if (S.msg) { S.msg.seats = m.seats; S.seatsAt = performance.now(); renderSeats(); renderBanner(); }
      break;
    case "joined":
      setSeat(tableId, m.seat, m.token);
      break;
    case "rematch":
      if (S.msg) { S.msg.rematch = m.table; renderResult(); }
      break;
    case "error":
      S.sent = false;
      if (m.code === "bad_token") localStorage.removeItem(`ludoteca.seat.${tableId}`);
      if (m.code === "not_found") {
        S.closedForGood = true;
        $("banner").textContent = "There is no such table.";
      }
      toast(m.message);
      if (S.msg) renderBoard();
      break;
    default:
      break;
  }
}

function names() {
  return (S.msg ? S.msg.seats : []).map((s, i) => s.name || `Seat ${i + 1}`);
}

function act(action) {
  if (S.sent) return;
  S.sent = true;
  send({type: "action", action, seq: S.seq});
  renderBoard();
  renderMoves();
  renderForced();
}

function legal() {
  return !S.sent && S.msg && S.msg.legal ? S.msg.legal : [];
}

function context() {
  const m = S.msg;
  return {
    svg: $("board"), controls: $("controls"), pos: m.position, legal: legal(), you: m.you,
    seats: m.seats, names: names(), colors: COLORS, ui: S.ui, act, toMove: m.to_move,
    redraw: () => { renderBoard(); }, replay: false, status: m.status,
  };
}

function renderAll() {
  renderBanner();
  renderBoard();
  renderMoves();
  renderForced();
  renderSeats();
  renderLog();
  renderResult();
  renderClock();
}

function renderBanner() {
  const m = S.msg;
  const b = $("banner");
  b.className = "";
  const nm = names();
  let phase = "";
  if (S.renderer && S.renderer.phaseText) {
    try { phase = S.renderer.phaseText(m.position, {names: nm, you: m.you, toMove: m.to_move}); } catch { phase = ""; }
  }
  if (m.status === "waiting") {
    const open = m.seats.filter((s) => s.kind === "open").length;
    b.textContent = `Waiting for ${open} more player${open === 1 ? "" : "s"} — share the invite link.`;
  } else if (m.status === "over") {
    b.className = "over";
    b.textContent = `Game over. ${resultText(m.result, m.seats)}`;
  } else if (m.status === "broken") {
    b.textContent = "This table cannot be played (its record does not replay).";
  } else if (m.status === "expired") {
    b.textContent = "This table expired: nobody joined it in time. Create a new one from the lobby.";
  } else if (m.legal && m.legal.length) {
    b.className = "yours";
    b.textContent = `Your turn${phase ? ": " + phase : ""}`;
  } else if (m.to_move !== null && m.to_move !== undefined) {
    const seat = m.seats[m.to_move];
    const away = seat && seat.kind === "human" && !seat.connected
      ? ` (${nm[m.to_move]} is away; the game goes on when they come back)` : "";
    b.textContent = `${nm[m.to_move]} to move${phase ? ": " + phase : ""}${away}`;
  } else {
    b.textContent = phase || "…";
  }
}

function renderBoard() {
  if (!S.msg) return;
  const board = $("board");
  board.replaceChildren();
  $("controls").replaceChildren();
  if (!S.renderer) {
    svg("text", {x: 20, y: 40, text: "No board drawing for this game; use the move list below."}, board);
    return;
  }
  try {
    S.renderer.render(context());
    for (const k of lastMoveCells(S.renderer, S.log.filter(Boolean))) {
      const cell = board.querySelector(`[data-cell="${CSS.escape(k)}"]`);
      if (!cell) continue;
      cell.classList.add("last-move");
      const b = cell.getBBox(); // a frame just inside the cell, drawn over it
      svg("rect", {x: b.x + 3, y: b.y + 3, width: Math.max(0, b.width - 6), height: Math.max(0, b.height - 6), rx: 6,
        class: "last-move-mark"}, cell);
    }
  } catch (e) {
    console.error(e);
    svg("text", {x: 20, y: 40, fill: "#c0392b", text: `Drawing error: ${e.message}`}, board);
  }
}

function renderMoves() {
  const box = $("moves");
  const moves = legal();
  box.replaceChildren();
  if (!moves.length || !S.game) return;
  const nm = names();
  const buttons = moves.map((a) => h("button", {onclick: () => act(a), "data-action": JSON.stringify(a)},
    describe(S.renderer, a, nm)));
  const details = h("details", {open: moves.length <= 12 ? true : null},
    h("summary", {}, `All legal moves (${moves.length})`), h("div", {class: "move-list"}, buttons));
  box.append(details);
}

// A forced move (the only legal move) is played for the player after a short note, unless the
// player chose "confirm forced moves" (remembered in this browser) or pressed "wait". The action is
// sent as any other, so the record holds it.
const FORCED_DELAY_MS = 1500;
const FORCED_KEY = "ludoteca.confirmForced";
const forced = {seq: -1, timer: 0, waiting: false};

function confirmForced() {
  return localStorage.getItem(FORCED_KEY) === "1";
}

function stopForcedTimer() {
  clearTimeout(forced.timer);
  forced.timer = 0;
}

function renderForced() {
  const box = $("forced");
  const moves = legal();
  $("forced-pref").hidden = !S.msg || S.msg.you === null || S.msg.you === undefined; // players only
  if (moves.length !== 1 || !S.msg || S.msg.status !== "playing") {
    stopForcedTimer();
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const action = moves[0];
  if (forced.seq !== S.seq) {
    stopForcedTimer();
    forced.seq = S.seq;
    forced.waiting = confirmForced();
  }
  const what = describe(S.renderer, action, names());
  box.hidden = false;
  if (forced.waiting) {
    stopForcedTimer();
    box.replaceChildren(h("span", {class: "forced-text"}, `Only move: ${what} — it is yours to play.`),
      h("button", {class: "primary", id: "forced-play", onclick: () => act(action)}, "Play it"));
    return;
  }
  if (!forced.timer) {
    const seq = S.seq;
    forced.timer = setTimeout(() => {
      forced.timer = 0;
      if (S.seq === seq && !S.sent) act(action);
    }, FORCED_DELAY_MS);
  }
  box.replaceChildren(
    h("span", {class: "forced-text"}, `Only move: ${what} — playing it in ${FORCED_DELAY_MS / 1000} s`),
    h("button", {id: "forced-wait", onclick: () => { forced.waiting = true; renderForced(); }}, "wait"),
    h("div", {class: "forced-bar"}));
}

// Who you are at this table: an invitee (an open seat waits for you) or a spectator.
function renderRole(m, canSit) {
  let box = $("role");
  if (!box) {
    box = h("div", {id: "role", class: "role-banner", role: "status"});
    $("banner").before(box);
  }
  const seated = m.you !== null && m.you !== undefined;
  const title = m.game && m.game.title ? m.game.title : "this game";
  if (seated || m.status === "broken" || m.status === "expired") {
    box.hidden = true;
    box.textContent = "";
  } else if (canSit) {
    box.hidden = false;
    box.className = "role-banner invitee";
    box.textContent = `You are invited to ${title}. Type your name and press Sit here to join.`;
  } else {
    box.hidden = false;
    box.className = "role-banner spectator";
    const who = m.seats.map((s, i) => s.name || `Seat ${i + 1}`).join(" vs ");
    const how = m.status === "over" ? " The game is over."
      : m.status === "waiting" ? " The open seats are kept for the previous players: you can watch."
        : " All seats are taken: you can only watch.";
    box.textContent = `You are watching: ${title} — ${who}.${how}`;
  }
}

function renderSeats() {
  const m = S.msg;
  if (!m) return;
  const mine = getSeat(tableId);
  const free = m.seats.some((s) => s.kind === "open" && !heldFor(s));
  const canSit = m.status === "waiting" && free && !(mine && m.you !== null && m.you !== undefined);
  $("name-row").hidden = !canSit;
  renderRole(m, canSit);
  if (canSit && !$("my-name").value) $("my-name").value = getName();
  const rows = m.seats.map((s, i) => {
    let info = "";
    if (S.renderer && S.renderer.seatInfo && m.position) {
      try { info = S.renderer.seatInfo(m.position, i); } catch { info = ""; }
    }
    const tags = [];
    if (m.you === i) tags.push(h("span", {class: "tag"}, "you"));
    if (s.kind === "ai") tags.push(h("span", {class: "tag", style: "background:#7b3fa0"}, `AI ${s.level}`));
    const right = [];
    const held = heldFor(s);
    if (s.kind === "open" && held) {
      const old = S.rematchOf ? getSeat(S.rematchOf) : null;
      right.push(old && old.seat === i
        ? h("button", {class: "primary sit", "data-seat": i, onclick: takeBack}, "Take back my seat")
        : h("span", {class: "held", title: `${s.held_for} played this seat in the previous game`},
          `kept for ${s.held_for} for ${Math.floor(held / 60)}:${String(held % 60).padStart(2, "0")}`));
    } else if (s.kind === "open") {
      right.push(canSit ? h("button", {class: "primary sit", "data-seat": i, onclick: () => sit(i)}, "Sit here")
        : h("span", {class: "muted"}, "open"));
    } else {
      right.push(h("span", {class: "dot" + (s.connected ? " on" : ""), title: s.connected ? "connected" : "away"}));
    }
    return h("div", {class: "seat" + (m.status === "playing" && m.to_move === i ? " to-move" : ""), "data-seat": i},
      h("span", {class: "swatch", style: `background:${COLORS[i % COLORS.length]}`}),
      h("div", {class: "info"}, h("div", {class: "name"}, s.kind === "open" ? `Seat ${i + 1}` : s.name, ...tags),
        h("div", {class: "detail"}, info)),
      ...right);
  });
  $("seats").replaceChildren(...rows);
}

/** Seconds a rematch still keeps seat ``s`` for its previous player (0: not kept). */
function heldFor(s) {
  if (!s.held_for || !s.held_seconds) return 0;
  return Math.max(0, Math.ceil(s.held_seconds - (performance.now() - S.seatsAt) / 1000));
}

async function takeBack() {
  const old = getSeat(S.rematchOf);
  try {
    const res = await api(`/api/tables/${S.rematchOf}/rematch`, {token: old.token});
    if (!res.token) { toast("Your seat could not be given back: take any open seat."); return; }
    setSeat(res.id, res.seat, res.token);
    if (res.id === tableId) send({type: "auth", token: res.token});
    else location.href = res.url;
  } catch (e) {
    toast(e.message);
  }
}

function sit(seat) {
  const name = $("my-name").value.trim();
  setName(name);
  send({type: "join", seat, name: name || null});
}

const openGroups = new Set(); // the grouped log lines the viewer opened (by their first entry)

function renderLog() {
  const nm = names();
  const items = logLines(S.renderer, S.log.filter(Boolean), nm).map((line) => {
    const e = line.entries[0];
    const chance = e.seat === null || e.seat === undefined;
    if (line.group) {
      const key = String(e.i);
      return h("li", {class: "chance group", value: e.i + 1}, h("details",
        {open: openGroups.has(key) ? true : null, ontoggle: (ev) => {
          if (ev.target.open) openGroups.add(key); else openGroups.delete(key);
        }}, h("summary", {}, line.text),
        ...line.entries.map((x) => h("div", {class: "group-item"}, entryText(S.renderer, x, nm)))));
    }
    return h("li", {class: e.hidden ? "hidden" : chance ? "chance" : "", value: e.i + 1}, line.text);
  });
  if (items.length) items[items.length - 1].classList.add("last-entry");
  const log = $("log");
  log.replaceChildren(...items);
  log.scrollTop = log.scrollHeight;
}

function renderResult() {
  const m = S.msg;
  const box = $("result-box");
  if (!m || m.status !== "over") { box.hidden = true; return; }
  box.hidden = false;
  const mine = getSeat(tableId);
  const parts = [h("div", {class: "result"}, resultText(m.result, m.seats))];
  const buttons = h("div", {class: "form-row"},
    h("button", {class: "primary", id: "rematch", onclick: rematch}, m.rematch ? "Join the rematch" : "Rematch"),
    h("a", {href: `/replay/${tableId}`}, "Replay"),
    h("a", {href: `/api/tables/${tableId}/record`, download: `ludoteca-${S.game.name}-${tableId}.json`}, "Download record"));
  parts.push(buttons);
  if (m.rematch) parts.push(h("div", {class: "muted"}, "A rematch table is ready. ", h("a", {href: `/t/${m.rematch}`}, "Go there")));
  if (!mine) parts.push(h("div", {class: "muted"}, "You watched this game."));
  box.replaceChildren(...parts);
}

async function rematch() {
  const mine = getSeat(tableId);
  try {
    const res = await api(`/api/tables/${tableId}/rematch`, {token: mine ? mine.token : null});
    if (res.token) setSeat(res.id, res.seat, res.token);
    location.href = res.url;
  } catch (e) {
    toast(e.message);
  }
}

function renderClock() {
  const m = S.msg;
  const box = $("clock-box");
  if (!m || !m.clock) { box.hidden = true; return; }
  box.hidden = false;
  tickClock();
}

function tickClock() {
  const m = S.msg;
  if (!m || !m.clock) return;
  const remaining = Math.max(0, m.clock.remaining - (performance.now() - S.clockAt) / 1000);
  const full = Math.max(remaining, (m.position && m.position.clock) || 60);
  const frac = Math.min(1, remaining / full);
  const c = $("clock");
  c.className = remaining < 10 ? "low" : "";
  const icon = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  icon.setAttribute("viewBox", "0 0 40 60");
  icon.setAttribute("width", "28");
  icon.setAttribute("height", "42");
  svg("path", {d: "M5 3 H35 M5 57 H35 M8 3 C8 22 32 22 32 30 C32 38 8 38 8 57 M32 3 C32 22 8 22 8 30 C8 38 32 38 32 57",
    fill: "none", stroke: "#6b4f2a", "stroke-width": 3}, icon);
  const top = 26 * frac;
  svg("polygon", {points: `${20 - top * 0.45},${28 - top} ${20 + top * 0.45},${28 - top} 20,28`, fill: "#e0b85a"}, icon);
  const bottom = 26 * (1 - frac);
  svg("polygon", {points: `${20 - bottom * 0.45 - 2},56 ${20 + bottom * 0.45 + 2},56 20,${56 - bottom}`, fill: "#e0b85a"}, icon);
  const who = m.clock.seat !== null && m.clock.seat !== undefined ? seatName(m.seats, m.clock.seat) : "";
  c.replaceChildren(icon, h("span", {id: "clock-seconds"}, `${remaining.toFixed(1)} s`),
    h("span", {class: "muted", style: "font-size:.9rem;font-weight:normal"}, who));
}

setInterval(tickClock, 200);
setInterval(() => {
  if (S.msg && S.msg.seats.some((s) => s.held_for)) renderSeats();
}, 1000);

$("share").value = location.href;
$("copy").addEventListener("click", async () => {
  try { await navigator.clipboard.writeText(location.href); toast("Link copied"); } catch { $("share").select(); }
});
$("my-name").value = getName();
$("confirm-forced").checked = confirmForced();
$("confirm-forced").addEventListener("change", (ev) => {
  localStorage.setItem(FORCED_KEY, ev.target.checked ? "1" : "0");
  forced.waiting = ev.target.checked;
  if (S.msg) renderForced();
});
connect();

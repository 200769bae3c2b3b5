// The table page: live position over a websocket, board clicks, seats, log, clock, result; the table's life
// (resign, leave, take a seat back, rematch offers). Its parts: the shared state (table-state.js), the
// notices in words (table-notes.js), the chat (table-chat.js) and the sounds (table-sounds.js). Every text
// goes through t() (i18n.js).
import {drawBoard, zoomTools} from "./board.js";
import {COLORS, announcements, api, describe, entryText, getName, getSeat, h, loadClient, logLines, me,
  resultText, seatName, setName, setSeat, svg, whoOf} from "./common.js";
import {LANG, languageSwitch, t, tn, translatePage} from "./i18n.js";
import {isMe, renderChat, setupChat} from "./table-chat.js";
import {clockText, levelName, noteText} from "./table-notes.js";
import {showPace} from "./table-pace.js";
import {beep, setupSounds} from "./table-sounds.js";
import {$, S, names, send, tableId, toast} from "./table-state.js";

const ANNOUNCE_MS = 3000; // the shortest time an announcement stays; a longer text stays longer (up to 9 s)
const ANNOUNCE_QUEUE = 4; // announcements waiting their turn at most (the log keeps every one)
const announceQueue = [];

function announceBox() {
  let a = $("announce");
  if (!a) { // under the play bar, over the top of the board: never over whose turn it is or the result
    a = h("div", {id: "announce", class: "announce", role: "status", "aria-live": "polite"});
    a.addEventListener("click", () => showAnnouncement()); // read: the next one, or none
    ($("play-bar") || document.body).append(a);
  }
  return a;
}

/** Shows the announcements of some new events over the board, one batch after the other, each long enough to
 * be read (a tap on it moves on); the log keeps them all. */
function announce(texts) {
  if (!texts.length) return;
  announceQueue.push(texts.slice(-3));
  if (announceQueue.length > ANNOUNCE_QUEUE) announceQueue.shift();
  if (!announce.showing) showAnnouncement();
}

function showAnnouncement() {
  const a = announceBox();
  clearTimeout(announce.timer);
  const texts = announceQueue.shift();
  if (!texts) {
    announce.showing = false;
    a.classList.remove("show");
    return;
  }
  announce.showing = true;
  a.replaceChildren(...texts.map((x) => h("div", {class: "announce-line"}, x)));
  a.dataset.n = String((Number(a.dataset.n) || 0) + 1); // which announcement this is (for tests)
  a.classList.remove("show");
  void a.offsetWidth; // restart the transition
  a.classList.add("show");
  const chars = texts.join(" ").length;
  announce.timer = setTimeout(showAnnouncement, Math.min(9000, Math.max(ANNOUNCE_MS, 1200 + chars * 45)));
}

function setConn(text) {
  $("conn").textContent = text;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(tableId)}?lang=${LANG}`);
  S.ws = ws;
  ws.onopen = () => {
    S.retry = 0;
    setConn(t("● live"));
    const mine = getSeat(tableId);
    if (mine) send({type: "auth", token: mine.token});
    else resumeByAccount();
  };
  ws.onmessage = (ev) => {
    let m;
    try { m = JSON.parse(ev.data); } catch { return; }
    S.chain = S.chain.then(() => onMessage(m)).catch((e) => console.error(e));
  };
  ws.onclose = (ev) => {
    if (S.closedForGood || ev.code === 4404) return;
    setConn(t("reconnecting…"));
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
      S.settings = m.settings || null;
      S.notes = m.notes || [];
      $("game-title").textContent = tn("{title} · {n} player · table {table}", "{title} · {n} players · table {table}",
        m.game.players, {title: m.game.title, table: m.table});
      if (S.settings && S.settings.rated && !$("rated-tag")) { // every seat needs an account
        $("game-title").append(" ", h("span", {class: "tag", id: "rated-tag",
          title: t("the result changes the players' ratings; every player must be logged in")}, t("rated")));
      }
      if (!$("rules-link")) { // the game's rules page, in a new tab so the game stays open
        $("game-title").after(h("a", {id: "rules-link", class: "rules-link", target: "_blank", rel: "noopener"},
          t("Rules")));
      }
      $("rules-link").href = `/rules/${encodeURIComponent(m.game.name)}`;
      if (!$("learn-link")) { // the guided first game of this game (guide.js), in a new tab too
        $("rules-link").after(h("a", {id: "learn-link", class: "rules-link", target: "_blank", rel: "noopener"},
          t("Learn to play")));
      }
      $("learn-link").href = `/learn/${encodeURIComponent(m.game.name)}`;
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
      showPace(m); // a turn-based table: the time left (table-pace.js)
      if (m.type === "snapshot" && (window.innerHeight <= 500 || window.innerWidth <= 600) && window.scrollY < 8) {
        // a phone: the game fills the screen, the header (and its menu) is just above it
        window.scrollTo(0, window.scrollY + $("play-bar").getBoundingClientRect().top);
      }
      {
        const texts = announcements(S.renderer, fresh.flatMap((e) => e.events || []), names());
        announce(texts);
        const mine = !!(m.legal && m.legal.length) && m.status === "playing";
        if (mine && !S.wasMine) beep("turn");
        else if (texts.length) beep("event");
        S.wasMine = mine;
      }
      if (m.type === "snapshot") renderChat();
      break;
    case "note":
      S.notes.push(m);
      if (S.notes.length > 400) S.notes.splice(0, S.notes.length - 400);
      if (m.kind === "chat") {
        renderChat();
        if (!isMe(m)) beep("chat");
      } else {
        renderLog();
        renderChat();
        announce([noteText(m)]);
        beep("event");
      }
      break;
    case "left": // this browser no longer holds a seat here (resigned, left)
      localStorage.removeItem(`ludoteca.seat.${tableId}`);
      S.resumeTried = true; // a seat given up or moved to another device is not taken back on a reconnect
      break;
    case "seats":
      if (S.msg) { S.msg.seats = m.seats; S.seatsAt = performance.now(); renderSeats(); renderBanner(); }
      break;
    case "joined":
      setSeat(tableId, m.seat, m.token);
      break;
    case "rematch":
      if (S.msg) { S.msg.rematch = m.table; S.msg.offer = null; renderResult(); }
      if (m.together) { // every player accepted: the same token holds the same seat at the new table
        const mine = getSeat(tableId);
        if (mine && S.msg && S.msg.you !== null && S.msg.you !== undefined) {
          setSeat(m.table, mine.seat, mine.token);
          location.href = `/t/${encodeURIComponent(m.table)}`;
        }
      }
      break;
    case "error":
      if (m.quiet) { // a move for a position that moved on (web/errors.py QUIET): the page shows what happened
        if (S.sent && S.sentSeq === S.seq) { S.sent = false; renderBoard(); renderMoves(); renderForced(); }
        break;
      }
      S.sent = false;
      if (m.code === "bad_token") {
        localStorage.removeItem(`ludoteca.seat.${tableId}`);
        if (await resumeByAccount()) break; // the seat moved to this browser: no error to show
      }
      if (m.code === "not_found") {
        S.closedForGood = true;
        $("banner").textContent = t("There is no such table.");
      }
      toast(refusalText(m) || m.message);
      if (S.msg) renderBoard();
      break;
    default:
      break;
  }
}

/** A refused move said with the game's words (its client's refusal(action, who)), or null. */
function refusalText(m) {
  if (m.code !== "illegal" || !m.action || !S.renderer || !S.renderer.refusal) return null;
  try { return S.renderer.refusal(m.action, whoOf(names())); } catch { return null; }
}

/** Send a move; ``seq``: the position it was chosen in. A tap on a board drawn before the last update (the
 * same move just played for the player, say) is dropped: the page already shows what happened. */
function act(action, seq = S.seq) {
  if (S.sent || seq !== S.seq) return;
  S.sent = true;
  S.sentSeq = seq;
  send({type: "action", action, seq});
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
    seats: m.seats, names: names(), colors: COLORS, ui: S.ui, act: (a) => act(a, m.seq), toMove: m.to_move,
    redraw: () => { renderBoard(); }, replay: false, status: m.status,
  };
}

/** The room the play bar (whose turn, the hourglass) and the dock (the move buttons) take on the screen: the
 * board is at most as tall as the rest (style.css: --chrome), so it is seen whole with them. */
function fitChrome() {
  // upright: the bar above the board and room for two rows of buttons under it; sideways both are beside it
  const sideways = window.innerHeight <= 500 && window.innerWidth > window.innerHeight;
  const bar = sideways ? 0 : $("play-bar").getBoundingClientRect().height;
  const dock = sideways ? 0 : 108;
  const chrome = Math.ceil((bar + dock + 16) / 8) * 8;
  if (Math.abs(chrome - (fitChrome.last || 0)) < 12) return;
  fitChrome.last = chrome;
  document.documentElement.style.setProperty("--chrome", `${chrome}px`);
}

function renderAll() {
  renderBanner();
  renderSeats(); // (with the role banner and the clock: the play bar's height, which the board's size depends on)
  renderClock();
  fitChrome();
  renderBoard();
  renderMoves();
  renderForced();
  renderLog();
  renderResult();
  renderSeatActions();
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
  const mySeat = m.you !== null && m.you !== undefined ? m.seats[m.you] : null;
  if (m.status === "waiting") {
    const open = m.seats.filter((s) => s.kind === "open").length;
    b.textContent = tn("Waiting for {n} more player — share the invite link.",
      "Waiting for {n} more players — share the invite link.", open);
  } else if (m.status === "over") {
    b.className = "over";
    b.textContent = `${t("Game over.")} ${resultText(m.result, m.seats)}`;
  } else if (m.status === "broken") {
    b.textContent = t("This table cannot be played (its record does not replay).");
  } else if (m.status === "expired") {
    b.textContent = t("This table expired: nobody joined it in time. Create a new one from the lobby.");
  } else if (mySeat && mySeat.kind === "ai") {
    b.className = "yours";
    b.textContent = t("An AI plays your seat while you were away. Press “Take back my seat” to play again.");
  } else if (m.legal && m.legal.length) {
    b.className = "yours";
    b.textContent = phase ? t("Your turn: {phase}", {phase}) : t("Your turn");
  } else if (m.to_move !== null && m.to_move !== undefined) {
    const seat = m.seats[m.to_move];
    const who = nm[m.to_move];
    let text = phase ? t("{name} to move: {phase}", {name: who, phase}) : t("{name} to move", {name: who});
    if (seat && seat.kind === "human" && !seat.connected) {
      const left = abandonLeft(seat);
      text += " " + (left === null ? t("({name} is away; the game goes on when they come back)", {name: who})
        : S.settings && S.settings.abandoned === "end"
          ? t("({name} is away: the table ends in {time} unless they come back)", {name: who, time: clockText(left)})
          : t("({name} is away: an AI takes the seat in {time} unless they come back)",
            {name: who, time: clockText(left)}));
    }
    b.textContent = text;
  } else {
    b.textContent = phase || "…";
  }
}

function renderBoard() {
  if (!S.msg) return;
  drawBoard(S.renderer, context(), S.log);
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
    h("summary", {}, t("All legal moves ({n})", {n: moves.length})), h("div", {class: "move-list"}, buttons));
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
  // players only, while there is a game to play (not once it is over)
  $("forced-pref").hidden = !S.msg || S.msg.you === null || S.msg.you === undefined
    || !["waiting", "playing"].includes(S.msg.status);
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
    box.replaceChildren(h("span", {class: "forced-text"}, t("Only move: {move} — it is yours to play.", {move: what})),
      h("button", {class: "primary", id: "forced-play", onclick: () => act(action)}, t("Play it")));
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
    h("span", {class: "forced-text"}, t("Only move: {move} — playing it in {seconds} s",
      {move: what, seconds: FORCED_DELAY_MS / 1000})),
    h("button", {id: "forced-wait", onclick: () => { forced.waiting = true; renderForced(); }}, t("wait")),
    h("div", {class: "forced-bar"}));
}

// Who you are at this table: an invitee (an open seat waits for you) or a spectator.
function renderRole(m, canSit) {
  let box = $("role");
  if (!box) {
    box = h("div", {id: "role", class: "role-banner", role: "status"});
    $("play-bar").prepend(box);
  }
  const seated = m.you !== null && m.you !== undefined;
  const title = m.game && m.game.title ? m.game.title : t("this game");
  if (seated || m.status === "broken" || m.status === "expired") {
    box.hidden = true;
    box.textContent = "";
  } else if (canSit) {
    box.hidden = false;
    box.className = "role-banner invitee";
    box.textContent = t("You are invited to {title}. Type your name and press Sit here to join.", {title});
  } else {
    box.hidden = false;
    box.className = "role-banner spectator";
    const who = m.seats.map((s, i) => s.name || t("Seat {n}", {n: i + 1})).join(t(" vs "));
    const how = m.status === "over" ? t("The game is over.")
      : m.status === "waiting" ? t("The open seats are kept for the previous players: you can watch.")
        : t("All seats are taken: you can only watch.");
    box.textContent = `${t("You are watching: {title} — {players}.", {title, players: who})} ${how}`;
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
    if (m.you === i) tags.push(h("span", {class: "tag"}, t("you")));
    if (s.kind === "ai") {
      tags.push(h("span", {class: "tag", style: "background:#7b3fa0"},
        s.level === "perfect" ? t("Perfect AI") : t("AI {level}", {level: levelName(s.level)})));
    }
    if (s.taken_over) tags.push(h("span", {class: "tag away-tag"}, t("away")));
    const right = [];
    const held = heldFor(s);
    if (s.kind === "open" && held) {
      const old = S.rematchOf ? getSeat(S.rematchOf) : null;
      right.push(old && old.seat === i
        ? h("button", {class: "primary sit", "data-seat": i, onclick: takeBack}, t("Take back my seat"))
        : h("span", {class: "held", title: t("{name} played this seat in the previous game", {name: s.held_for})},
          t("kept for {name} for {time}", {name: s.held_for, time: clockText(held)})));
    } else if (s.kind === "open") {
      right.push(canSit ? h("button", {class: "primary sit", "data-seat": i, onclick: () => sit(i)}, t("Sit here"))
        : h("span", {class: "muted"}, t("open")));
    } else {
      const left = abandonLeft(s);
      if (left !== null) right.push(h("span", {class: "abandon-left", title: t("away")}, clockText(left)));
      right.push(h("span", {class: "dot" + (s.connected ? " on" : ""), title: s.connected ? t("connected") : t("away")}));
    }
    return h("div", {class: "seat" + (m.status === "playing" && m.to_move === i ? " to-move" : ""), "data-seat": i},
      h("span", {class: "swatch", style: `background:${COLORS[i % COLORS.length]}`}),
      h("div", {class: "info"}, h("div", {class: "name"}, s.kind === "open" ? t("Seat {n}", {n: i + 1}) : s.name, ...tags),
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
    if (!res.token) { toast(t("Your seat could not be given back: take any open seat.")); return; }
    setSeat(res.id, res.seat, res.token);
    if (res.id === tableId) send({type: "auth", token: res.token});
    else location.href = res.url;
  } catch (e) {
    toast(e.message);
  }
}

async function sit(seat) {
  const name = $("my-name").value.trim();
  setName(name);
  if ((await me).account) { // logged in: an HTTP join ties the seat to the account (it follows it to other devices)
    try {
      const res = await api(`/api/tables/${encodeURIComponent(tableId)}/join`, {seat, name: name || null});
      setSeat(tableId, seat, res.token);
      send({type: "auth", token: res.token});
    } catch (e) { toast(e.message); }
    return;
  }
  send({type: "join", seat, name: name || null});
}

/** Logged in without this table's seat token here: the seat the account holds (taken on another browser or
 * device) comes to this one (web/accounts/accounts.py: my-seat); true when a seat was resumed. */
async function resumeByAccount() {
  if (S.resumeTried || !(await me).account) return false;
  S.resumeTried = true;
  try {
    const res = await api(`/api/tables/${encodeURIComponent(tableId)}/my-seat`, {});
    if (res.token === null || res.token === undefined) return false;
    setSeat(tableId, res.seat, res.token);
    send({type: "auth", token: res.token});
    return true;
  } catch (e) {
    console.error(e);
    return false;
  }
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
  // the table's notices (a resignation, a seat handed to an AI...) where they happened in the game:
  // a notice made after n actions goes before the line of action n
  const notices = S.notes.filter((n) => n.kind !== "chat");
  const lines = [];
  let k = 0;
  items.forEach((li) => {
    const first = Number(li.value) - 1;
    while (k < notices.length && notices[k].at <= first) lines.push(noticeItem(notices[k++]));
    lines.push(li);
  });
  while (k < notices.length) lines.push(noticeItem(notices[k++]));
  const log = $("log");
  log.replaceChildren(...lines);
  log.scrollTop = log.scrollHeight;
}

function noticeItem(n) {
  return h("li", {class: "notice", "data-kind": n.kind}, noteText(n));
}

/** Seconds before an away player's seat is abandoned (null: not counting). */
function abandonLeft(seat) {
  if (!seat || seat.abandon_in === undefined || seat.abandon_in === null) return null;
  return Math.max(0, seat.abandon_in - (performance.now() - S.seatsAt) / 1000);
}

/** The rematch offer of a finished game, for a player: offer, or accept / decline the offer made. */
function offerBox(m) {
  const box = h("div", {class: "offer", id: "offer"});
  const offer = m.offer;
  if (!offer) {
    box.append(h("button", {class: "primary", id: "offer-rematch", onclick: () => send({type: "rematch_offer"})},
      t("Offer a rematch")));
    return box;
  }
  const by = seatName(m.seats, offer.by);
  if (offer.accepted.includes(m.you)) {
    box.append(h("div", {class: "offer-text"}, offer.by === m.you ? t("You offered a rematch.")
      : t("You accepted the rematch {name} offered.", {name: by})),
    h("div", {class: "muted"}, t("Waiting for the other players…")));
    return box;
  }
  box.append(h("div", {class: "offer-text"}, t("{name} offers a rematch", {name: by})),
    h("div", {class: "form-row"},
      h("button", {class: "primary", id: "accept-rematch", onclick: () => send({type: "rematch_accept"})}, t("Accept")),
      h("button", {id: "decline-rematch", onclick: () => send({type: "rematch_decline"})}, t("Decline"))));
  return box;
}

/** The buttons of a seated player: leave (before the game), resign and leave (during it), take back. */
function renderSeatActions() {
  const m = S.msg;
  const box = $("seat-actions");
  const seat = m && m.you !== null && m.you !== undefined ? m.seats[m.you] : null;
  const buttons = [];
  if (seat && m.status === "waiting") {
    buttons.push(h("button", {id: "leave", onclick: () => ask(t("Leave your seat? Someone else may take it."),
      t("Leave the seat"), {type: "leave"})}, t("Leave the seat")));
  } else if (seat && m.status === "playing" && seat.kind === "ai" && seat.taken_over) {
    buttons.push(h("button", {class: "primary", id: "take-back", onclick: () => send({type: "take_back"})},
      t("Take back my seat")));
  } else if (seat && m.status === "playing" && seat.kind === "human") {
    const two = m.seats.length === 2;
    buttons.push(h("button", {class: "danger", id: "resign", onclick: () => ask(two
      ? t("Resign? The game ends and the other player wins.")
      : t("Resign? The easiest AI plays your seat and you leave the game."), t("Resign"), {type: "resign"})},
    t("Resign")));
    const ends = S.settings && S.settings.abandoned === "end";
    buttons.push(h("button", {id: "leave", onclick: () => ask(ends
      ? t("Leave the game? The table ends without a winner.")
      : t("Leave the game? The easiest AI plays your seat and you cannot take it back."), t("Leave the game"),
    {type: "leave"})}, t("Leave the game")));
  }
  box.hidden = !buttons.length;
  box.replaceChildren(...buttons);
}

/** A confirm dialog; ``message`` is sent when the person confirms. */
function ask(text, yes, message) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-yes").onclick = () => { dialog.close(); send(message); };
  $("confirm-no").onclick = () => dialog.close();
  dialog.showModal();
}

function renderResult() {
  const m = S.msg;
  const box = $("result-box");
  if (!m || m.status !== "over") { box.hidden = true; return; }
  box.hidden = false;
  const mine = getSeat(tableId);
  const parts = [h("div", {class: "result"}, resultText(m.result, m.seats))];
  const player = m.you !== null && m.you !== undefined && m.seats[m.you] && m.seats[m.you].kind === "human";
  if (player && !m.rematch) parts.push(offerBox(m));
  const buttons = h("div", {class: "form-row"},
    player && !m.rematch ? null
      : h("button", {class: "primary", id: "rematch", onclick: rematch}, m.rematch ? t("Join the rematch") : t("Rematch")),
    h("a", {href: `/replay/${tableId}`}, t("Replay")),
    h("a", {href: `/api/tables/${tableId}/record`, download: `ludoteca-${S.game.name}-${tableId}.json`},
      t("Download record")));
  parts.push(buttons);
  if (m.rematch) {
    parts.push(h("div", {class: "muted"}, t("A rematch table is ready."), " ",
      h("a", {href: `/t/${m.rematch}`}, t("Go there"))));
  }
  if (!mine) parts.push(h("div", {class: "muted"}, t("You watched this game.")));
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
  c.replaceChildren(icon, h("span", {id: "clock-seconds"}, t("{seconds} s", {seconds: remaining.toFixed(1)})),
    h("span", {class: "muted", style: "font-size:.9rem;font-weight:normal"}, who));
}

setInterval(tickClock, 200);
setInterval(() => {
  if (S.msg && S.msg.seats.some((s) => s.held_for || s.abandon_in !== undefined)) { renderSeats(); renderBanner(); }
}, 1000);

$("share").value = location.href;
$("copy").addEventListener("click", async () => {
  try { await navigator.clipboard.writeText(location.href); toast(t("Link copied")); } catch { $("share").select(); }
});
$("my-name").value = getName();
me.then(({account}) => { // logged in: the seats taken here carry the account's name
  if (account) { $("my-name").value = account.name; $("my-name").readOnly = true; }
});
$("confirm-forced").checked = confirmForced();
$("confirm-forced").addEventListener("change", (ev) => {
  localStorage.setItem(FORCED_KEY, ev.target.checked ? "1" : "0");
  forced.waiting = ev.target.checked;
  if (S.msg) renderForced();
});
translatePage();
$("top").append(languageSwitch());
$("play-dock").append(zoomTools($("board-wrap")));
fitChrome();
let resizeTimer = 0;
window.addEventListener("resize", () => { // a phone turned sideways: the board is drawn for the new shape
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => { fitChrome(); renderBoard(); }, 150);
});
setupChat();
setupSounds();
connect();

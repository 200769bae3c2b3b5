// Shared helpers of the ludoteca browser client (no build step, no dependencies).
// Every text a person reads goes through t() (i18n.js): English in the source, Italian from the catalogs.
import {LANG, t} from "./i18n.js";

export {t, tn} from "./i18n.js";

export const COLORS = ["#d7263d", "#1b6ca8", "#2a9d3f", "#f08a24", "#7b3fa0", "#159b9b"];
export const COLOR_NAMES = [t("red"), t("blue"), t("green"), t("orange"), t("purple"), t("teal")];
export const SVGNS = "http://www.w3.org/2000/svg";

/** Create an SVG element with attributes, appended to parent if given. */
export function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "style") node.style.cssText = String(v); // CSSOM: allowed by the CSP, unlike style="…"
    else if (k === "onclick") node.addEventListener("click", v);
    else if (k === "title") {
      const title = document.createElementNS(SVGNS, "title");
      title.textContent = v;
      node.appendChild(title);
    } else node.setAttribute(k, String(v));
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** Create an HTML element: h("button", {class: "x", onclick: f}, "text", child...). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = String(v); // CSSOM: allowed by the CSP, unlike style="…"
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

/** The CSRF token of this browser's login session (the readable ludoteca_csrf cookie; "" when logged out). */
export function csrfToken() {
  if (typeof document === "undefined") return "";
  const m = document.cookie.match(/(?:^|;\s*)ludoteca_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]) : "";
}

/** A JSON request to the server; its answers (errors too) come in the page's language. A POST carries the
 * login session's CSRF token (web/accounts/sessions.py: refused without it while logged in). */
export async function api(path, body) {
  const headers = {"Accept-Language": LANG};
  const opts = body === undefined ? {headers} : {
    method: "POST", headers: {...headers, "Content-Type": "application/json", "X-CSRF-Token": csrfToken()},
    body: JSON.stringify(body),
  };
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) {
    const error = new Error((data && data.message) || t("the server answered {status} {reason}", {status: res.status,
      reason: res.statusText}));
    error.code = data && data.code; // the error's code (web/errors.py), the same in every language
    throw error;
  }
  return data;
}

// --- the optional account: who is logged in, and the header's "Log in" / "name · Log out" ------
/** This browser's account: {account: {name, created_at} | null, csrf} (GET /api/me, asked once per page). */
export const me = typeof document === "undefined" ? Promise.resolve({account: null, csrf: null})
  : api("/api/me").catch(() => null).then((d) => (d && typeof d === "object" ? d : {account: null, csrf: null}));

/** The header's account link: "Log in" (back to this page afterwards), or the account name and "Log out". */
export function accountNav() {
  const nav = h("nav", {class: "account-nav", id: "account-nav", "aria-label": t("Account")});
  me.then(({account}) => {
    if (account) {
      const out = h("button", {type: "button", class: "link-button", id: "logout"}, t("Log out"));
      out.addEventListener("click", async () => {
        try { await api("/api/logout", {}); } catch (e) { console.error(e); }
        location.reload();
      });
      nav.replaceChildren(h("a", {class: "account-name", id: "account-name", // the profile (ratings)
        href: `/players/${encodeURIComponent(account.name)}`}, account.name),
      h("a", {href: "/account", id: "account-notices"}, t("Notices")), out); // the account's notices
    } else if (!["/login", "/signup"].includes(location.pathname)) {
      const next = encodeURIComponent(location.pathname + location.search);
      nav.replaceChildren(h("a", {href: `/login?next=${next}`, id: "login-link"}, t("Log in")));
    }
  });
  return nav;
}

/** The header's menu button: on small screens (style.css) the header shows the site's name, the page's title
 * and this button; the rest (links, invitation, toggles, account, language) folds into the menu it opens. */
export function headerMenu(header) {
  const button = h("button", {type: "button", class: "menu-toggle", id: "menu-toggle", "aria-expanded": "false",
    "aria-label": t("Menu"), title: t("Menu")}, "☰");
  button.addEventListener("click", () => {
    const open = header.classList.toggle("open");
    button.setAttribute("aria-expanded", String(open));
    button.textContent = open ? "✕" : "☰";
  });
  return button;
}

if (typeof document !== "undefined") { // every page with the common header gets the account link and the menu
  const header = document.querySelector("header.top");
  if (header && !document.getElementById("account-nav")) header.append(accountNav());
  if (header && !document.getElementById("menu-toggle")) header.append(headerMenu(header));
}

export function getName() {
  return localStorage.getItem("ludoteca.name") || "";
}

export function setName(name) {
  localStorage.setItem("ludoteca.name", name);
}

/** The seat token this browser holds for a table: {seat, token} or null. */
export function getSeat(tableId) {
  try {
    const v = JSON.parse(localStorage.getItem(`ludoteca.seat.${tableId}`) || "null");
    return v && typeof v.token === "string" ? v : null;
  } catch { return null; }
}

export function setSeat(tableId, seat, token) {
  localStorage.setItem(`ludoteca.seat.${tableId}`, JSON.stringify({seat, token}));
}

export function sameAction(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function key(x) {
  return Array.isArray(x) ? x.join(",") : String(x);
}

const DIE_PIPS = {
  1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
  4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
  6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
};

/** Draw a die at (x, y) of side s showing value (1-6 pips; anything else as text; null: blank). */
export function drawDie(parent, x, y, s, value, opts = {}) {
  const g = svg("g", {class: "die" + (opts.dim ? " dim" : ""), transform: `translate(${x},${y})`}, parent);
  svg("rect", {x: 0, y: 0, width: s, height: s, rx: s * 0.18, fill: opts.fill || "#fffdf5",
    stroke: opts.stroke || "#333", "stroke-width": Math.max(1.5, s * 0.04)}, g);
  if (typeof value === "number" && DIE_PIPS[value]) {
    for (const [dx, dy] of DIE_PIPS[value]) {
      svg("circle", {cx: s / 2 + dx * s * 0.27, cy: s / 2 + dy * s * 0.27, r: s * 0.085, fill: opts.pip || "#222"}, g);
    }
  } else if (value !== null && value !== undefined) {
    svg("text", {x: s / 2, y: s / 2, "text-anchor": "middle", "dominant-baseline": "central",
      "font-size": String(value).length > 1 ? s * 0.42 : s * 0.6, "font-weight": "bold", fill: "#222",
      text: String(value)}, g);
  }
  if (opts.label) {
    svg("text", {x: s / 2, y: s + 14, "text-anchor": "middle", "font-size": 12, fill: "#444", text: opts.label}, g);
  }
  return g;
}

/** The browser client of a game (its board and its texts), served from the game's own package. */
export async function loadClient(game) {
  try {
    return await import(`/games/${encodeURIComponent(game)}/client.js`);
  } catch (e) {
    console.error(e);
    return null;
  }
}

/** The name of seat s in a text: the player's name, else "player N"; "the bank" and chance (null) too. */
export function whoOf(names = []) {
  return (s) => {
    if (s === null || s === undefined) return t("chance");
    if (s === "bank") return t("the bank");
    return names[s] || t("player {n}", {n: Number(s) + 1});
  };
}

/** "Ann", "Ann and Bob", "Ann, Bob and Cy". */
export function nameList(items) {
  if (items.length <= 1) return items.join("");
  return t("{list} and {last}", {list: items.slice(0, -1).join(", "), last: items[items.length - 1]});
}

/** A readable phrase for an action (canonical JSON): the game's own words, else the shared ones. */
export function describe(client, a, names = []) {
  const who = whoOf(names);
  if (!a || typeof a !== "object") return String(a);
  const own = client && client.describe ? client.describe(a, who) : null;
  if (own) return own;
  if ("pass" in a) return t("passes");
  if ("stop" in a) return t("stops");
  if ("timeout" in a) return t("runs out of time");
  return JSON.stringify(a);
}

/** The text of one event (its kind and fields, core/events.py), or null when it says nothing more. */
export function eventText(client, e, names = []) {
  const who = whoOf(names);
  const own = client && client.EVENTS && client.EVENTS[e.kind];
  switch (e.kind) {
    case "move":
      // a game may say what a secret move or draw is (TRI: a card chosen, a battle die rolled)
      if (e.secret) return (own && own(e, who)) || t("{name} makes a secret move", {name: who(e.seat)});
      return t("{name} {action}", {name: who(e.seat), action: describe(client, e.action, names)});
    case "chance":
      if (e.secret) return (own && own(e, who)) || t("{name} draws in secret", {name: who(e.seat)});
      if (client && client.outcome) {
        const text = client.outcome(e.outcome, e.seat, who);
        if (text) return text;
      }
      if (e.seat === null || e.seat === undefined) {
        return t("chance: {outcome}", {outcome: describe(client, e.outcome, names)});
      }
      return t("{name} {action}", {name: who(e.seat), action: describe(client, e.outcome, names)});
    case "timeout": // a game may say what running out of time cost (EXAGON: the hourglass, the bonuses)
      return (own && own(e, who)) || t("{name} ran out of time", {name: who(e.seat)});
    case "end": {
      const winners = (e.winners || []).map(who);
      if (!winners.length) return t("game over: nobody wins");
      if (winners.length === 1) return t("game over: {name} wins", {name: winners[0]});
      return t("game over: {names} win", {names: nameList(winners)});
    }
    default:
      break;
  }
  if (own) return own(e, who);
  if (e.secret) return null;
  const fields = Object.entries(e).filter(([k]) => k !== "kind").map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  return `${e.kind.replaceAll("_", " ")}${fields.length ? " (" + fields.join(", ") + ")" : ""}`;
}

/** One log line for an action: its events as the viewer may see them, in order. */
export function entryText(client, entry, names = []) {
  const texts = (entry.events || []).map((e) => eventText(client, e, names)).filter(Boolean);
  if (texts.length) return texts.join(" · ");
  const who = whoOf(names)(entry.seat);
  if (entry.hidden) return t("{name}: a secret move", {name: who});
  return t("{name} {action}", {name: who, action: describe(client, entry.action, names)});
}

const AI_LEVELS = {random: t("random"), heuristic: t("heuristic"), mcts: t("mcts"), beginner: t("beginner"),
  easy: t("easy"), medium: t("medium"), hard: t("hard"), expert: t("expert"), perfect: t("perfect")};
const AI_DEFAULT_NAME = /^(AI|IA) \d+ \(/; // the name the server gives an AI seat, in its creator's language
const PLAYER_DEFAULT_NAME = /^(Player|Giocatore) (\d+)$/; // a person's seat named by default, in its creator's language

export function seatName(seats, i) {
  const s = seats && seats[i];
  // an AI seat with the server's default name is named in the viewer's language (a seat the AI took over
  // from a person keeps that person's name)
  if (s && s.kind === "ai" && AI_LEVELS[s.level] && AI_DEFAULT_NAME.test(s.name || "")) {
    return t("AI {n} ({level})", {n: i + 1, level: AI_LEVELS[s.level]});
  }
  const byDefault = s && s.kind !== "ai" && PLAYER_DEFAULT_NAME.exec(s.name || "");
  if (byDefault) return t("Player {n}", {n: Number(byDefault[2])});
  return (s && s.name) || t("Seat {n}", {n: i + 1});
}

export function resultText(result, seats) {
  if (!result) return "";
  const w = result.winners || [];
  const names = w.map((i) => seatName(seats, i));
  const who = w.length === 1 ? t("{name} wins!", {name: names[0]}) : w.length === 0 ? t("Nobody wins.")
    : t("Shared win: {names}", {names: nameList(names)});
  const why = reasonText(result, seats);
  return why ? `${who} ${why}` : who;
}

/** Why a game ended when the table, not the engine, ended it (tables.py: a resignation, an abandoned table). */
export function reasonText(result, seats) {
  if (!result || !result.reason) return "";
  const name = seatName(seats, result.seat);
  if (result.reason === "resigned") return t("{name} resigned.", {name});
  if (result.reason === "abandoned") return t("{name} left the table: it ended without a winner.", {name});
  if (result.reason === "closed") return t("A moderator closed the table.");
  if (result.reason === "time") return t("{name}'s time ran out.", {name}); // a win claimed (turn-based)
  return "";
}

/** The kind of a chance log entry: the outcome key ("deal", "roll") its chance events share, when the
 * entry is chance's own (no seat) and holds chance events only; else null. */
export function chanceKind(entry) {
  if (!entry || (entry.seat !== null && entry.seat !== undefined) || entry.hidden) return null;
  const kinds = new Set((entry.events || []).map((e) =>
    (e.kind === "chance" && e.outcome && typeof e.outcome === "object" ? Object.keys(e.outcome)[0] : null)));
  return kinds.size === 1 && !kinds.has(null) && !kinds.has(undefined) ? [...kinds][0] : null;
}

/** The log as lines, each {entries, text, group}: consecutive chance entries of one kind (no player
 * decision between them) make one line when the game's client groups that kind (its LOG_GROUPS:
 * kind -> (entries, who) => text, e.g. the deal of the tiles); every other entry is a line of its own. */
export function logLines(client, entries, names = []) {
  const groups = (client && client.LOG_GROUPS) || {};
  const who = whoOf(names);
  const runs = [];
  for (const e of entries) {
    const kind = chanceKind(e);
    const groupable = kind !== null && Object.hasOwn(groups, kind) ? kind : null;
    const last = runs[runs.length - 1];
    if (groupable && last && last.kind === groupable) last.entries.push(e);
    else runs.push({kind: groupable, entries: [e]});
  }
  return runs.map((r) => {
    if (r.entries.length > 1) {
      let text = null;
      try { text = groups[r.kind](r.entries, who); } catch { text = null; }
      if (text) return {entries: r.entries, text, group: true};
    }
    return r.entries.map((e) => ({entries: [e], text: entryText(client, e, names), group: false}));
  }).flat();
}

// --- announcements: a few events are also shown for a moment over the board ----------
/** The event kinds every game announces; a game's client adds its own with ANNOUNCE (kind -> true, to
 * reuse the event's log text, or (event, who) => text). */
export const ANNOUNCE = {end: true, timeout: true};

/** The announcement texts of some new events, in order (the log texts of the announced kinds). */
export function announcements(client, events, names = []) {
  const own = (client && client.ANNOUNCE) || {};
  const who = whoOf(names);
  const out = [];
  for (const e of events) {
    if (!e || e.secret) continue;
    const rule = Object.hasOwn(own, e.kind) ? own[e.kind] : ANNOUNCE[e.kind];
    if (!rule) continue;
    let text = null;
    try { text = typeof rule === "function" ? rule(e, who) : eventText(client, e, names); } catch { text = null; }
    if (text) out.push(text);
  }
  return out;
}

/** The board cells ("r,c" keys, as the game's client names them) of the last move: the client's
 * lastMoveCells(events) on the newest log entry that has any. */
export function lastMoveCells(client, entries) {
  if (!client || typeof client.lastMoveCells !== "function") return [];
  for (let i = entries.length - 1; i >= 0 && i >= entries.length - 4; i--) {
    const e = entries[i];
    if (!e || e.hidden) continue;
    let cells = [];
    try { cells = client.lastMoveCells(e.events || []) || []; } catch { cells = []; }
    if (cells.length) return cells;
  }
  return [];
}

// --- helpers of the games' boards (games/<name>/client.js) ---------------------------------------
/** A name cut to at most ``n`` characters for a board's narrow label, with "…" when cut (the seats list
 * beside the board shows it whole). */
export function shortName(name, n) {
  const s = String(name || "");
  return s.length > n ? `${s.slice(0, n - 1).trimEnd()}…` : s;
}

/** Names joined as a list in the page's language: "A", "A and B", "A, B and C". */
export function andList(names) {
  if (names.length <= 1) return names.join("");
  return t("{list} and {last}", {list: names.slice(0, -1).join(", "), last: names[names.length - 1]});
}

/** Makes a drawn part of a board a button: focusable, named in the page's language (label); Enter and
 * Space press it like a click. ``focusId`` names the part across redraws (see refocus); ``click``:
 * false when a mouse click already reaches the action through an enclosing group. */
export function pressable(node, label, focusId, ui, onpress, click = true) {
  node.setAttribute("role", "button");
  node.setAttribute("tabindex", "0");
  node.setAttribute("aria-label", label);
  node.setAttribute("data-focus", focusId);
  if (click) node.addEventListener("click", onpress);
  node.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    ev.preventDefault();
    ev.stopPropagation();
    if (ui) ui.focus = focusId; // the board is drawn again: the same part keeps the focus
    onpress(ev);
  });
}

/** After a redraw, the part pressed from the keyboard has the focus again. */
export function refocus(root, ui) {
  if (!ui || !ui.focus) return;
  const node = root.querySelector(`[data-focus="${CSS.escape(ui.focus)}"]`);
  if (node) node.focus();
}

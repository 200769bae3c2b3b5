// The lobby: create a table (game, players, options, seats) and list open and running tables.
import {api, getName, h, setName, setSeat} from "./common.js";

let catalog = [];
let levels = [];
let levelInfo = {};
const $ = (id) => document.getElementById(id);

function currentGame() {
  return catalog.find((g) => g.name === $("game").value);
}

function renderPlayers() {
  const g = currentGame();
  const sel = $("players");
  const old = Number(sel.value) || g.min_players;
  sel.replaceChildren(...Array.from({length: g.max_players - g.min_players + 1}, (_, k) => {
    const n = g.min_players + k;
    return h("option", {value: n, selected: n === old ? true : null}, String(n));
  }));
  renderOptions();
  renderSeats();
}

function renderOptions() {
  const g = currentGame();
  const n = $("players").value;
  const defaults = (g.defaults && g.defaults[n]) || {};
  const box = $("options");
  box.replaceChildren();
  for (const opt of g.options) {
    const value = opt.name in defaults ? defaults[opt.name] : opt.default;
    const id = `opt-${opt.name}`;
    let input;
    if (typeof value === "boolean") {
      input = h("input", {type: "checkbox", id, checked: value ? true : null, dataset: {kind: "bool", name: opt.name}});
    } else {
      input = h("input", {type: "text", id, value: JSON.stringify(value), dataset: {kind: "json", name: opt.name,
        initial: JSON.stringify(value)}});
    }
    box.append(h("div", {class: "form-row"}, h("label", {for: id}, opt.name), input),
      h("div", {class: "opt-doc"}, opt.doc));
  }
}

function renderSeats() {
  const n = Number($("players").value);
  const box = $("seats");
  box.replaceChildren();
  for (let i = 0; i < n; i++) {
    const sel = h("select", {id: `seat-${i}`},
      h("option", {value: "open"}, i === 0 ? "Open — I sit here" : "Open (a friend joins)"),
      ...levels.map((l) => h("option", {value: `ai:${l}`}, levelInfo[l] ? `AI: ${l} — ${levelInfo[l]}` : `AI: ${l}`)));
    if (i === 0) {
      sel.append(h("option", {value: "open-spectate"}, "Open (I only watch)"));
    }
    box.append(h("div", {class: "form-row"}, h("label", {for: `seat-${i}`}, `Seat ${i + 1}`), sel));
  }
}

function collectOptions() {
  const options = {};
  for (const input of $("options").querySelectorAll("input")) {
    const name = input.dataset.name;
    if (input.dataset.kind === "bool") {
      options[name] = input.checked;
      continue;
    }
    if (input.value === input.dataset.initial) continue; // keep the server's default
    let value;
    try { value = JSON.parse(input.value); } catch { value = input.value; }
    options[name] = value;
  }
  return options;
}

async function create() {
  $("create-error").textContent = "";
  const g = currentGame();
  const players = Number($("players").value);
  const name = $("name").value.trim();
  setName(name);
  const seats = [];
  let sit = null;
  for (let i = 0; i < players; i++) {
    const v = $(`seat-${i}`).value;
    if (v.startsWith("ai:")) seats.push({kind: "ai", level: v.slice(3)});
    else {
      seats.push({kind: "open"});
      if (v === "open" && i === 0) sit = 0;
    }
  }
  const body = {game: g.name, players, options: collectOptions(), seats, unlisted: $("unlisted").checked};
  if (sit !== null) { body.sit = sit; body.name = name || null; }
  try {
    const res = await api("/api/tables", body);
    if (res.token) setSeat(res.id, res.seat, res.token);
    location.href = res.url;
  } catch (e) {
    $("create-error").textContent = e.message;
  }
}

/** "under a minute", "12 min", "2 h 5 min": a wait of ``seconds``. */
function duration(seconds) {
  if (seconds < 60) return "under a minute";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

function statusCell(t) {
  if (t.status === "playing" && t.stalled) {
    const s = t.waiting_for === null || t.waiting_for === undefined ? null : t.seats[t.waiting_for];
    const note = s ? `waiting for ${s.name || `player ${t.waiting_for + 1}`} (away) for ${duration(t.idle)}`
      : `no move for ${duration(t.idle)}`;
    return h("td", {}, h("span", {class: "status stalled"}, "stalled"), h("span", {class: "stall-note"}, note));
  }
  return h("td", {}, h("span", {class: `status ${t.status}`}, t.status));
}

async function refresh() {
  try {
    const {tables} = await api("/api/tables");
    const rows = tables.filter((t) => t.status !== "broken").map((t) => {
      const seatText = (s) => (s.kind !== "open" ? s.name : s.held_for ? `(kept for ${s.held_for})` : "(open)");
      const names = t.seats.map(seatText).join(", ");
      const open = t.seats.filter((s) => s.kind === "open" && !s.held_for).length;
      const link = t.status === "over" ? h("a", {href: `/replay/${t.id}`}, "replay")
        : h("a", {href: `/t/${t.id}`}, open ? "join" : "watch");
      return h("tr", {}, h("td", {}, t.title || t.game), h("td", {}, names), statusCell(t), h("td", {}, link));
    });
    $("table-list").replaceChildren(...(rows.length ? rows : [h("tr", {}, h("td", {colspan: 4, class: "muted"}, "no tables yet"))]));
  } catch (e) {
    $("table-list").replaceChildren(h("tr", {}, h("td", {colspan: 4, class: "error"}, e.message)));
  }
}

/** Ids of the tables where this browser holds a seat token (stored by setSeat in common.js). */
function myTableIds() {
  const ids = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key && key.startsWith("ludoteca.seat.")) ids.push(key.slice("ludoteca.seat.".length));
  }
  return ids.filter((id) => /^[A-Za-z0-9_-]{1,32}$/.test(id)).slice(-50);
}

async function refreshMine() {
  const ids = myTableIds();
  $("my-tables").hidden = ids.length === 0;
  if (!ids.length) return;
  try {
    const {tables} = await api(`/api/tables?ids=${ids.join(",")}`);
    const rows = tables.map((t) => {
      const link = t.status === "over" ? h("a", {href: `/replay/${t.id}`}, "replay")
        : h("a", {href: `/t/${t.id}`}, t.status === "playing" || t.status === "waiting" ? "back to the table" : "open");
      return h("tr", {}, h("td", {}, t.title || t.game), h("td", {}, t.seats.map((s) => s.name || "(open)").join(", ")),
        statusCell(t), h("td", {}, link));
    });
    $("my-table-list").replaceChildren(...(rows.length ? rows
      : [h("tr", {}, h("td", {colspan: 4, class: "muted"}, "none of your tables is kept any more"))]));
  } catch (e) {
    $("my-table-list").replaceChildren(h("tr", {}, h("td", {colspan: 4, class: "error"}, e.message)));
  }
}

async function init() {
  $("name").value = getName();
  const data = await api("/api/games");
  catalog = data.games;
  levels = data.levels;
  levelInfo = data.level_info || {};
  $("tagline").textContent = `${catalog.map((g) => g.title).join(" · ")} — play with friends`;
  $("game").replaceChildren(...catalog.map((g) => h("option", {value: g.name}, g.title)));
  $("game").addEventListener("change", renderPlayers);
  const rulesLink = h("a", {id: "rules-link", class: "rules-link"}, "Rules");
  $("game").after(rulesLink);
  const showRules = () => { rulesLink.href = `/rules/${encodeURIComponent($("game").value)}`; };
  $("game").addEventListener("change", showRules);
  showRules();
  $("players").addEventListener("change", () => { renderOptions(); renderSeats(); });
  $("create-btn").addEventListener("click", create);
  $("refresh").addEventListener("click", refresh);
  renderPlayers();
  refresh();
  refreshMine();
  setInterval(refresh, 4000);
  setInterval(refreshMine, 15000);
}

init();

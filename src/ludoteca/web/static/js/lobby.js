// The lobby: create a table (game, players, options, seats) and list open and running tables.
import {api, getName, h, me, seatName, setName, setSeat} from "./common.js";
import {LANG, languageSwitch, t, translatePage} from "./i18n.js";
import {addPaceControls, addPaceFilter, paceSetting, paceShown, paceTag} from "./lobby-pace.js";
import {CONTROLS, startValue} from "./options.js";

/** The words of the tables' states and of the AI levels (the server sends their codes). */
const STATUS = {waiting: t("waiting"), playing: t("playing"), over: t("over"), expired: t("expired"),
  broken: t("broken"), stalled: t("stalled")};
const LEVELS = {random: t("random"), heuristic: t("heuristic"), mcts: t("mcts"), beginner: t("beginner"),
  easy: t("easy"), medium: t("medium"), hard: t("hard"), expert: t("expert"), perfect: t("perfect")};
const levelName = (l) => LEVELS[l] || l;
/** "medium ≈ 1,200" (the level's measured rating for this game and player count), or the name. */
let levelRatings = {};
function levelLabel(l, game, players) {
  const r = ((levelRatings[game] || {})[players] || {})[l];
  if (!r) return levelName(l);
  return t("{level} ≈ {rating}", {level: levelName(l), rating: new Intl.NumberFormat(LANG).format(r.rating)});
}

let catalog = [];
let levels = [];
let levelInfo = {};
/** Levels offered only for some tables (a solved game's perfect AI), and those the server says this table
 * may seat (POST /api/levels, asked whenever the game, the player count or an option changes). */
let solvedLevels = [];
let tableLevels = null;
let levelsAsked = 0;
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

// --- the game's options: one control per declared kind (core/options.py), never JSON text ------------------
/** Each option's control: {opt, initial, read() -> value | undefined (undefined: keep the server's default)}. */
let controls = [];

function renderOptions() {
  const g = currentGame();
  const n = $("players").value;
  const box = $("options");
  box.replaceChildren();
  controls = [];
  const designers = [];
  const variants = [];
  for (const opt of g.options) {
    const make = CONTROLS[opt.kind];
    if (!make) continue; // an option without a kind a person can set (the terminal and the lab still can)
    const control = make(opt, `opt-${opt.name}`, startValue(g, opt, n));
    controls.push({opt, read: control.read});
    if (control.designer) designers.push(...control.row);
    else if (opt.variant) variants.push(control.row[0], h("div", {class: "opt-doc"}, opt.help), ...control.row.slice(1));
    else box.append(control.row[0], h("div", {class: "opt-doc"}, opt.help), ...control.row.slice(1));
  }
  // the rulebook's numbers and switches (every one at the rulebook's value by default) and a designer's
  // files: folded, so a player setting up a table sees only what a table usually sets
  if (designers.length || variants.length) {
    box.append(h("details", {class: "designers", id: "designers"},
      h("summary", {}, t("For designers")), ...variants, ...designers));
  }
}

/** The levels this table may seat: the server's answer, or (until it comes) those every game offers. */
const seatLevels = () => tableLevels || levels.filter((l) => !solvedLevels.includes(l));

/** Ask the server which AI levels the form's table may seat, then offer those (the latest answer wins). */
async function refreshLevels() {
  const ask = ++levelsAsked;
  const body = {game: $("game").value, players: Number($("players").value), options: collectOptions()};
  let answer = null;
  try { answer = await api("/api/levels", body); } catch { answer = null; } // refused options: "Create" says why
  if (ask !== levelsAsked) return;
  const before = JSON.stringify(seatLevels());
  tableLevels = answer && Array.isArray(answer.levels) ? answer.levels : null;
  if (JSON.stringify(seatLevels()) !== before) renderSeats();
}
let levelsTimer = null;
const refreshLevelsSoon = () => { clearTimeout(levelsTimer); levelsTimer = setTimeout(refreshLevels, 150); };

function renderSeats() {
  const n = Number($("players").value);
  const game = $("game").value;
  const box = $("seats");
  const kept = Array.from(box.querySelectorAll("select"), (s) => s.value); // each seat's choice stays where it can
  box.replaceChildren();
  for (let i = 0; i < n; i++) {
    const sel = h("select", {id: `seat-${i}`},
      h("option", {value: "open"}, i === 0 ? t("Open — I sit here") : t("Open (a friend joins)")),
      ...seatLevels().map((l) => h("option", {value: `ai:${l}`}, levelInfo[l]
        ? t("AI: {level} — {strength}", {level: levelLabel(l, game, n), strength: levelInfo[l]})
        : t("AI: {level}", {level: levelLabel(l, game, n)}))));
    if (i === 0) {
      sel.append(h("option", {value: "open-spectate"}, t("Open (I only watch)")));
    }
    if (kept[i] && Array.from(sel.options).some((o) => o.value === kept[i])) sel.value = kept[i];
    box.append(h("div", {class: "form-row"}, h("label", {for: `seat-${i}`}, t("Seat {n}", {n: i + 1})), sel));
  }
}

function collectOptions() {
  const options = {};
  for (const {opt, read} of controls) {
    const value = read();
    if (value !== undefined) options[opt.name] = value;
  }
  return options;
}

async function create() {
  $("create-error").textContent = "";
  const g = currentGame();
  const players = Number($("players").value);
  const name = $("name").value.trim();
  if (!$("name").readOnly) setName(name); // (not the account's name: the name typed when logged out stays)
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
  const body = {game: g.name, players, options: collectOptions(), seats, unlisted: $("unlisted").checked,
    ...tableSettings(), ...ratedSetting(), ...paceSetting()};
  if (sit !== null) { body.sit = sit; body.name = name || t("Player {n}", {n: sit + 1}); }
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
  if (seconds < 60) return t("under a minute");
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return t("{m} min", {m: minutes});
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? t("{h} h {m} min", {h: hours, m: minutes % 60}) : t("{h} h", {h: hours});
}

function statusCell(tb) {
  if (tb.status === "playing" && tb.stalled) {
    const s = tb.waiting_for === null || tb.waiting_for === undefined ? null : tb.seats[tb.waiting_for];
    const note = s
      ? t("waiting for {name} (away) for {time}", {name: s.name || t("player {n}", {n: tb.waiting_for + 1}),
        time: duration(tb.idle)})
      : t("no move for {time}", {time: duration(tb.idle)});
    return h("td", {}, h("span", {class: "status stalled"}, STATUS.stalled), h("span", {class: "stall-note"}, note));
  }
  return h("td", {}, h("span", {class: `status ${tb.status}`}, STATUS[tb.status] || tb.status));
}

async function refresh() {
  try {
    const {tables} = await api("/api/tables");
    const rows = tables.filter((tb) => tb.status !== "broken" && paceShown(tb)).map((tb) => {
      const seatText = (s, i) => (s.kind !== "open" ? seatName(tb.seats, i)
        : s.held_for ? t("(kept for {name})", {name: s.held_for}) : t("(open)"));
      const names = tb.seats.map(seatText).join(", ");
      const open = tb.seats.filter((s) => s.kind === "open" && !s.held_for).length;
      const link = tb.status === "over" ? h("a", {href: `/replay/${tb.id}`}, t("replay"))
        : h("a", {href: `/t/${tb.id}`}, open ? t("join") : t("watch"));
      return h("tr", {}, h("td", {}, tb.title || tb.game, ratedTag(tb), paceTag(tb)), h("td", {}, names),
        statusCell(tb), h("td", {}, link));
    });
    $("table-list").replaceChildren(...(rows.length ? rows
      : [h("tr", {}, h("td", {colspan: 4, class: "muted"}, t("no tables yet")))]));
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
    const rows = tables.map((tb) => {
      const link = tb.status === "over" ? h("a", {href: `/replay/${tb.id}`}, t("replay"))
        : h("a", {href: `/t/${tb.id}`}, tb.status === "playing" || tb.status === "waiting" ? t("back to the table")
          : t("open"));
      return h("tr", {}, h("td", {}, tb.title || tb.game, ratedTag(tb), paceTag(tb)),
        h("td", {}, tb.seats.map((s) => s.name || t("(open)")).join(", ")), statusCell(tb), h("td", {}, link));
    });
    $("my-table-list").replaceChildren(...(rows.length ? rows
      : [h("tr", {}, h("td", {colspan: 4, class: "muted"}, t("none of your tables is kept any more")))]));
  } catch (e) {
    $("my-table-list").replaceChildren(h("tr", {}, h("td", {colspan: 4, class: "error"}, e.message)));
  }
}

// The table's life (table-life engineer): abandoned seats and chat channels, chosen by the creator.
const ABANDON_MINUTES = [1, 3, 5, 10, 30, 60];

function addTableSettings() {
  const row = $("unlisted").closest(".form-row");
  const select = (id, choices, chosen) => h("select", {id},
    ...choices.map(([value, text]) => h("option", {value, selected: value === chosen ? true : null}, text)));
  row.after(
    h("div", {class: "form-row"}, h("label", {for: "abandon-after"}, t("Away limit")),
      select("abandon-after", ABANDON_MINUTES.map((m) => [String(m * 60), t("{n} min", {n: m})]), "180"),
      h("span", {class: "opt-note"}, t("how long a player may be disconnected during the game"))),
    h("div", {class: "form-row"}, h("label", {for: "abandoned"}, t("Then")),
      select("abandoned", [["ai", t("the easiest AI plays the seat")], ["end", t("the table ends, no winner")]], "ai")),
    h("div", {class: "form-row"}, h("label", {for: "chat-mode"}, t("Chat")),
      select("chat-mode", [["shared", t("one chat for everyone")], ["separate", t("spectators apart")]],
        "shared")));
}

function tableSettings() {
  if (!$("abandon-after")) return {};
  return {abandon_after: Number($("abandon-after").value), abandoned: $("abandoned").value, chat: $("chat-mode").value};
}

// Rated tables (web/accounts/ratings.py): offered to a logged-in player; the lists mark them.
function ratedTag(tb) {
  return tb.rated ? h("span", {class: "tag"}, t("rated")) : null;
}

async function addRatedChoice() {
  $("tagline").after(h("a", {href: "/leaderboard", class: "rules-link", id: "leaderboard-link"}, t("Leaderboards")));
  const {account} = await me;
  if (!account) return;
  // logged in: the tables know this player by the account's name (the server uses it whatever is typed)
  const name = $("name");
  name.value = account.name;
  name.readOnly = true;
  name.setAttribute("aria-describedby", "name-note");
  name.after(h("span", {class: "opt-note", id: "name-note"}, t("your account's name")));
  const row = $("unlisted").closest(".form-row");
  row.before(h("div", {class: "form-row"}, h("label", {for: "rated"}, t("Rated")), h("input", {type: "checkbox", id: "rated"}),
    h("span", {class: "opt-note"}, t("the result changes the players' ratings; every player must be logged in"))));
}

function ratedSetting() {
  return $("rated") && $("rated").checked ? {rated: true} : {};
}

/** The lab's link in the header, when the server's owner started it (ludoteca serve --lab; web/labs/). */
function showLabLink() {
  api("/api/lab").then((lab) => {
    if (!lab || !lab.on) return;
    const link = h("a", {href: "/lab", class: "rules-link", id: "lab-link"}, t("Lab"));
    const mine = $("my-games-link");
    if (mine) mine.after(link); else $("top").append(link);
  }).catch(() => {});
}

async function init() {
  translatePage();
  addTableSettings();
  addPaceControls($("unlisted").closest(".form-row"));
  addPaceFilter($("refresh"), refresh);
  addRatedChoice();
  $("top").append(languageSwitch());
  showLabLink();
  $("name").value = getName();
  const data = await api("/api/games");
  catalog = data.games;
  levels = data.levels;
  levelInfo = data.level_info || {};
  levelRatings = data.level_ratings || {};
  solvedLevels = data.solved_levels || [];
  $("tagline").textContent = t("{games} — play with friends", {games: catalog.map((g) => g.title).join(" · ")});
  $("game").replaceChildren(...catalog.map((g) => h("option", {value: g.name}, g.title)));
  $("game").addEventListener("change", renderPlayers);
  const rulesLink = h("a", {id: "rules-link", class: "rules-link"}, t("Rules"));
  $("game").after(rulesLink);
  const learnLink = h("a", {id: "learn-link", class: "learn-link"}, t("Learn to play"));
  rulesLink.after(learnLink);
  const showRules = () => {
    rulesLink.href = `/rules/${encodeURIComponent($("game").value)}`;
    learnLink.href = `/learn/${encodeURIComponent($("game").value)}`; // the guided first game (guide.js)
  };
  $("game").addEventListener("change", showRules);
  showRules();
  $("players").addEventListener("change", () => { renderOptions(); renderSeats(); refreshLevelsSoon(); });
  $("game").addEventListener("change", () => { tableLevels = null; renderSeats(); refreshLevelsSoon(); });
  $("options").addEventListener("change", refreshLevelsSoon);
  $("create-btn").addEventListener("click", create);
  $("refresh").addEventListener("click", refresh);
  renderPlayers();
  refreshLevels();
  refresh();
  refreshMine();
  setInterval(refresh, 4000);
  setInterval(refreshMine, 15000);
}

init();

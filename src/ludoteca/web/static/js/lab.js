// The lab in the browser (web/labs/): a form drawn from the games' option declarations (the lobby's
// controls, options.js), the runs of the server's lab with their progress, a run's results and two runs side by side.
import {api, h, me} from "./common.js";
import {LANG, languageSwitch, t, tn, translatePage} from "./i18n.js";
import {CONTROLS, capital, fileControl, startValue} from "./options.js";

const $ = (id) => document.getElementById(id);
const PERCENT = new Intl.NumberFormat(LANG, {style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1});
const POINTS = new Intl.NumberFormat(LANG, {signDisplay: "exceptZero", minimumFractionDigits: 1, maximumFractionDigits: 1});
const NUMBER = new Intl.NumberFormat(LANG, {maximumFractionDigits: 1});
const P_VALUE = new Intl.NumberFormat(LANG, {maximumSignificantDigits: 2});
const WHEN = new Intl.DateTimeFormat(LANG, {dateStyle: "short", timeStyle: "short"});

const AGENT_WORDS = {random: t("random moves"), heuristic: t("rules of thumb"), mcts: t("Monte-Carlo search"),
  strong: t("strong search")};
const LEVEL_WORDS = {beginner: t("beginner"), easy: t("easy"), medium: t("medium"), hard: t("hard"), expert: t("expert")};
const STATUS_WORDS = {queued: t("waiting in the queue"), running: t("playing"), cancelling: t("stopping"),
  done: t("done"), failed: t("stopped by an error"), cancelled: t("cancelled")};
const KIND_WORDS = {run: t("games measured"), balance: t("fairest setting")};
const STOP_WORDS = {separated: t("The best setting is clearly ahead of the others."),
  budget: t("The budget is spent: this is the best setting so far."), rounds: t("Every round was played.")};
const ACTIVE = ["queued", "running", "cancelling"];
const PLAYERS = "players";

let info = null;
let catalog = [];
let controls = [];
let compared = [];
let runs = [];
let openId = null;
const picked = new Set();

const agentWords = (a) => AGENT_WORDS[a] || (LEVEL_WORDS[a] ? t("AI level: {level}", {level: LEVEL_WORDS[a]}) : a);
const pct = (x) => (x === null || x === undefined ? "—" : PERCENT.format(x));
const interval = (ci) => (ci ? t("[{low}, {high}]", {low: pct(ci[0]), high: pct(ci[1])}) : "");
const points = (x) => POINTS.format(100 * x);
const pointsInterval = (ci) => t("[{low}, {high}]", {low: points(ci[0]), high: points(ci[1])});

function currentGame() {
  return catalog.find((g) => g.name === $("game").value);
}

function kind() {
  return $("kind-balance").checked ? "balance" : "run";
}

function playersCompared() {
  return compared.some((c) => c.name === PLAYERS);
}

function seatCount() {
  const g = currentGame();
  return playersCompared() ? g.max_players : Number($("players").value);
}

// --- the form ----------------------------------------------------------------------------------------------
function renderPlayers() {
  const g = currentGame();
  const old = Number($("players").value) || g.min_players;
  $("players").replaceChildren(...Array.from({length: g.max_players - g.min_players + 1}, (_, k) => {
    const n = g.min_players + k;
    return h("option", {value: n, selected: n === old ? true : null}, String(n));
  }));
  $("players").disabled = playersCompared();
  renderAgents();
  renderOptions();
  renderCompareChoice();
  showTotal();
}

function agentSelect(id, chosen) {
  const names = [...info.agents, ...info.levels];
  return h("select", {id}, ...names.map((a) => h("option", {value: a, selected: a === chosen ? true : null},
    capital(agentWords(a)))));
}

function renderAgents() {
  const box = $("agents");
  const each = $("agents-each") ? $("agents-each").checked : false;
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  const toggle = h("input", {type: "checkbox", id: "agents-each", checked: each ? true : null});
  toggle.addEventListener("change", renderAgents);
  const rows = [h("label", {class: "choice-row", for: "agents-each"}, toggle, h("span", {}, t("A different AI for each seat")))];
  if (each) {
    for (let i = 0; i < seatCount(); i++) {
      rows.push(h("div", {class: "form-row"}, h("label", {for: `agent-${i}`}, t("Seat {n}", {n: i + 1})),
        agentSelect(`agent-${i}`, old[i] || old[0] || "random")));
    }
  } else {
    rows.unshift(h("div", {class: "form-row"}, h("label", {for: "agent-all"}, t("AI players")),
      agentSelect("agent-all", old[0] || "random")));
  }
  box.replaceChildren(...rows);
}

function renderOptions() {
  const g = currentGame();
  const n = $("players").value;
  controls = [];
  const rows = [];
  for (const opt of g.options) {
    const make = CONTROLS[opt.kind];
    if (!make || compared.some((c) => c.name === opt.name)) continue;
    const control = make(opt, `opt-${opt.name}`, startValue(g, opt, n));
    controls.push({opt, read: control.read});
    rows.push(control.row[0], h("div", {class: "opt-doc"}, opt.help), ...control.row.slice(1));
  }
  $("options").replaceChildren(...rows);
}

/** The options that can be compared: the number of players, and each option with a few values (not files). */
function comparable() {
  const g = currentGame();
  const list = g.min_players < g.max_players ? [{name: PLAYERS, label: t("Players"), kind: "players"}] : [];
  for (const opt of g.options) if (["choice", "bool", "int", "file"].includes(opt.kind)) list.push(opt);
  return list.filter((o) => !compared.some((c) => c.name === o.name));
}

function renderCompareChoice() {
  $("compare-option").replaceChildren(...comparable().map((o) => h("option", {value: o.name}, capital(o.label))));
  $("compare-add").disabled = compared.length >= 3 || !comparable().length;
}

function checkboxes(name, items) {
  const boxes = items.map((item, i) => ({item, input: h("input", {type: "checkbox", id: `cmp-${name}-${i}`, checked: true})}));
  const node = h("div", {class: "values"}, ...boxes.map(({item, input}, i) =>
    h("label", {for: `cmp-${name}-${i}`}, input, h("span", {}, item.words))));
  boxes.forEach(({input}) => input.addEventListener("change", showTotal));
  return {node, read: () => boxes.filter((b) => b.input.checked).map((b) => b.item.value)};
}

function numbersField(opt) {
  const start = Number(opt.default ?? opt.low ?? 1);
  const next = opt.high !== undefined && start >= opt.high ? start - 1 : start + 1;
  const input = h("input", {type: "text", id: `cmp-${opt.name}`, inputmode: "numeric", value: `${start}, ${next}`,
    "aria-label": t("Values of {option}", {option: opt.label})});
  input.addEventListener("input", showTotal);
  const read = () => input.value.split(/[,;\s]+/).filter((x) => x !== "").map(Number);
  return {node: h("div", {}, input, h("div", {class: "opt-doc lab-doc"}, t("Whole numbers separated by commas, e.g. 3, 4, 5"))),
    read};
}

function addCompared() {
  const name = $("compare-option").value;
  const g = currentGame();
  if (!name) return;
  let entry;
  if (name === PLAYERS) {
    const counts = Array.from({length: g.max_players - g.min_players + 1}, (_, k) => g.min_players + k);
    entry = {name, label: t("Players"), ...checkboxes(name, counts.map((n) => ({value: n, words: String(n)})))};
  } else {
    const opt = g.options.find((o) => o.name === name);
    if (opt.kind === "choice") {
      entry = {name, label: opt.label, ...checkboxes(name, opt.choices.map((c) => ({value: c.value, words: capital(c.label)})))};
    } else if (opt.kind === "file") { // a designer's file against the usual material
      const control = fileControl(opt, `cmp-${name}`);
      entry = {name, label: opt.label, node: h("div", {}, ...control.row),
        read: () => { const content = control.read(); return content === undefined ? [] : [{default: true}, content]; }};
    } else if (opt.kind === "bool") {
      entry = {name, label: opt.label, ...checkboxes(name, [{value: false, words: t("no")}, {value: true, words: t("yes")}])};
    } else {
      entry = {name, label: opt.label, ...numbersField(opt)};
    }
  }
  compared.push(entry);
  renderCompared();
  renderPlayers();
}

function renderCompared() {
  $("compare").replaceChildren(...compared.map((c) => {
    const remove = h("button", {type: "button", class: "small", id: `cmp-remove-${c.name}`}, t("Remove"));
    remove.addEventListener("click", () => {
      compared = compared.filter((x) => x !== c);
      renderCompared();
      renderPlayers();
    });
    return h("div", {class: "compared"}, h("div", {class: "compared-head"}, h("span", {}, capital(c.label)), remove), c.node);
  }));
}

function variants() {
  return compared.reduce((n, c) => n * Math.max(1, c.read().length), 1);
}

function showTotal() {
  const games = kind() === "balance" ? Number($("budget").value) || 0 : (Number($("games").value) || 0) * variants();
  const v = variants();
  $("lab-total").textContent = kind() === "balance"
    ? tn("At most {n} game in all", "At most {n} games in all", games, {n: NUMBER.format(games)})
    : tn("{n} game in all", "{n} games in all", games, {n: NUMBER.format(games)})
      + (v > 1 ? " · " + tn("{n} variant", "{n} variants", v, {n: v}) : "");
}

function showKind() {
  const balance = kind() === "balance";
  document.querySelectorAll(".run-only").forEach((n) => { n.hidden = balance; });
  document.querySelectorAll(".balance-only").forEach((n) => { n.hidden = !balance; });
  $("length").closest(".form-row").hidden = !balance || $("target").value !== "length";
  showTotal();
}

function request() {
  const options = {};
  for (const {opt, read} of controls) {
    const value = read();
    if (value !== undefined) options[opt.name] = value;
  }
  const each = $("agents-each").checked;
  const agents = each ? [...$("agents").querySelectorAll("select")].map((s) => s.value) : [$("agent-all").value];
  const body = {kind: kind(), game: $("game").value, players: playersCompared() ? null : Number($("players").value),
    agents, seed: Number($("seed").value) || 0, options,
    compare: compared.map((c) => ({name: c.name, values: c.read()}))};
  if (body.kind === "balance") {
    body.budget = Number($("budget").value);
    body.target = $("target").value;
    if (body.target === "length") body.length = Number($("length").value);
  } else {
    body.games = Number($("games").value);
  }
  return body;
}

async function start() {
  $("lab-error").textContent = "";
  const bad = compared.find((c) => c.read().some((v) => typeof v === "number" && !Number.isInteger(v)));
  if (bad) {
    $("lab-error").textContent = t("{option}: whole numbers separated by commas", {option: capital(bad.label)});
    return;
  }
  $("lab-start").disabled = true;
  try {
    const run = await api("/api/lab/runs", request());
    await refresh();
    openRun(run.id);
  } catch (e) {
    $("lab-error").textContent = e.message;
  } finally {
    $("lab-start").disabled = false;
  }
}

// --- the runs ----------------------------------------------------------------------------------------------
function title(run) {
  return t("{game}: {what}", {game: run.title, what: KIND_WORDS[run.kind]});
}

function progress(run) {
  return [h("progress", {max: run.total, value: run.done, "aria-label": t("Progress")}),
    h("span", {class: "muted"}, t("{done} of {total} games · {status}", {done: NUMBER.format(run.done),
      total: NUMBER.format(run.total), status: STATUS_WORDS[run.status] || run.status}))];
}

async function cancel(run) {
  try {
    await api(`/api/lab/runs/${run.id}/cancel`, {});
  } catch (e) {
    $("lab-status").textContent = e.message;
  }
  await refresh();
}

function runItem(run) {
  const actions = [h("button", {type: "button", id: `open-${run.id}`, onclick: () => openRun(run.id)}, t("Open"))];
  if (run.mine && ACTIVE.includes(run.status)) {
    actions.push(h("button", {type: "button", class: "danger", id: `cancel-${run.id}`, onclick: () => cancel(run)}, t("Cancel")));
  }
  if (run.status === "done" && run.kind === "run") {
    const box = h("input", {type: "checkbox", id: `pick-${run.id}`, checked: picked.has(run.id) ? true : null});
    box.addEventListener("change", () => {
      if (box.checked) picked.add(run.id); else picked.delete(run.id);
      $("compare-runs").disabled = picked.size !== 2;
    });
    actions.push(h("label", {class: "pick", for: `pick-${run.id}`}, box, h("span", {}, t("Side by side"))));
  }
  return h("li", {id: `run-${run.id}`},
    h("div", {class: "run-head"}, h("span", {class: "run-title"}, title(run)),
      h("span", {class: "muted"}, t("by {name}, {when}", {name: run.owner, when: WHEN.format(new Date(run.created_at * 1000))}))),
    ...(ACTIVE.includes(run.status) ? progress(run) : [h("span", {class: "muted"}, STATUS_WORDS[run.status] || run.status)]),
    h("div", {class: "run-actions"}, ...actions));
}

function settingsList(run) {
  const items = [];
  items.push(run.players ? t("Players: {n}", {n: run.players}) : t("Players: compared"));
  items.push(t("AI: {agents}", {agents: run.agents.map((a, i) => (run.agents.length > 1
    ? t("seat {n}: {agent}", {n: i + 1, agent: agentWords(a)}) : agentWords(a))).join(", ")}));
  items.push(run.kind === "balance" ? t("At most {n} games", {n: NUMBER.format(run.games)})
    : t("Games per variant: {n}", {n: NUMBER.format(run.games)}));
  if (run.kind === "balance") {
    items.push(run.target === "length" ? t("Fairest: games of {n} turns", {n: NUMBER.format(run.length)})
      : t("Fairest: every seat wins as often"));
  }
  for (const o of run.options) items.push(`${capital(o.label)}: ${o.value}`);
  for (const c of run.compare) items.push(t("Compared: {option} ({values})", {option: c.label, values: c.values.join(", ")}));
  items.push(t("Seed: {seed}", {seed: run.seed}));
  return h("ul", {class: "run-settings"}, ...items.map((x) => h("li", {}, x)));
}

function verdict(c, names) {
  const params = {variant: names[c.variant] || "", baseline: names[c.baseline] || "", diff: points(c.diff || 0),
    interval: c.ci ? pointsInterval(c.ci) : ""};
  const text = {
    changes: t("{variant} changes the first player's win rate against {baseline}: {diff} points {interval}.", params),
    hint: t("A hint that {variant} changes the first player's win rate against {baseline}: {diff} points {interval}, not significant after Holm's adjustment; check it with a new run.", params),
    no_evidence: t("No evidence that {variant} changes the first player's win rate against {baseline}: {diff} points {interval}.", params),
    other_players: t("{variant} and {baseline} have different numbers of players: compare their advantages in the report.", params),
  }[c.verdict] || "";
  const mde = c.mde ? " " + t("This run would detect a change of {mde} points.", {mde: NUMBER.format(100 * c.mde)}) : "";
  return h("p", {class: "verdict"}, text + mde);
}

function firstPlayerSentence(v) {
  const f = v.first_player || {};
  const fair = 1 / (v.players || 2);
  const params = {rate: pct(f.rate), interval: interval(f.ci), fair: pct(fair), p: P_VALUE.format(f.p_value ?? 1)};
  return h("p", {class: "verdict"}, f.significant
    ? t("The first player wins {rate} {interval} against a fair {fair}: a real difference (p = {p}).", params)
    : t("No evidence that the first player wins more or less than a fair {fair}: {rate} {interval} (p = {p}).", params));
}

function runResults(run) {
  const r = run.results;
  if (!r) return [];
  if (run.kind === "balance") {
    return [h("p", {class: "verdict"}, t("Fairest setting: {best}", {best: r.best})),
      r.runner_up ? h("p", {}, t("Runner-up: {setting}", {setting: r.runner_up})) : null,
      h("p", {class: "muted"}, STOP_WORDS[r.stop] || ""),
      h("div", {class: "scroll-x"}, h("table", {class: "tables"},
        h("thead", {}, h("tr", {}, h("th", {scope: "col"}, t("Setting")), h("th", {scope: "col"}, t("Games")),
          h("th", {scope: "col"}, t("Distance from fair")))),
        h("tbody", {}, ...r.candidates.map((c) => h("tr", {class: c.best ? "best-row" : null}, h("td", {}, c.label),
          h("td", {class: "num"}, NUMBER.format(c.games)),
          h("td", {class: "num"}, run.target === "length" ? `${NUMBER.format(c.estimate)} ${t("[{low}, {high}]", {low: NUMBER.format(c.interval[0]), high: NUMBER.format(c.interval[1])})}`
            : `${pct(c.estimate)} ${interval(c.interval)}`))))))];
  }
  const names = r.variants.map((v, i) => v.label || t("variant {n}", {n: i + 1}));
  const figure = (label, value) => h("div", {}, h("dt", {}, label), h("dd", {}, value));
  return [
    ...(r.comparisons.length ? r.comparisons.map((c) => verdict(c, names)) : r.variants.map(firstPlayerSentence)),
    ...r.variants.map((v, k) => h("div", {class: "variant-card"},
      h("h3", {}, names[k]),
      h("dl", {class: "figures"},
        figure(t("Games"), NUMBER.format(v.games)),
        figure(t("First player wins"), `${pct(v.first_player.rate)} ${interval(v.first_player.ci)}`),
        ...v.seats.map((seat, i) => figure(t("Seat {n}", {n: i + 1}), `${pct(seat.rate)} ${interval(seat.ci)}`)),
        figure(t("Turns (mean)"), NUMBER.format(v.turns.mean ?? 0)),
        figure(t("Shared wins"), pct(v.shared.rate))))),
  ];
}

function links(run) {
  if (run.status !== "done") return null;
  const items = run.kind === "run"
    ? [h("a", {href: `/lab/runs/${run.id}/report`, id: "report-link"}, t("The whole report")),
      h("a", {href: `/lab/runs/${run.id}/games.csv`, download: "", id: "csv-link"}, t("Games (CSV, for a spreadsheet)"))]
    : [];
  items.push(h("a", {href: `/lab/runs/${run.id}/summary.json`, download: "", id: "json-link"}, t("Every figure (JSON, for a program)")));
  return h("div", {class: "run-links"}, ...items);
}

async function showRun() {
  if (!openId) return;
  let run;
  try {
    run = await api(`/api/lab/runs/${openId}`);
  } catch (e) {
    $("run-view").replaceChildren(h("p", {class: "error"}, e.message));
    return;
  }
  const close = h("button", {type: "button", class: "small", id: "close-run"}, t("Close"));
  close.addEventListener("click", () => { openId = null; $("run-view").hidden = true; });
  const failed = run.status === "failed" ? [h("p", {class: "error"}, t("The run stopped with an error."))] : [];
  $("run-view").replaceChildren(h("h2", {}, title(run), close), settingsList(run),
    ...(ACTIVE.includes(run.status) ? progress(run) : [h("p", {}, STATUS_WORDS[run.status] || run.status)]),
    ...failed, ...runResults(run), links(run));
  $("run-view").hidden = false;
}

function openRun(id) {
  openId = id;
  showRun().then(() => $("run-view").scrollIntoView({block: "start"}));
}

async function sideBySide() {
  const [a, b] = [...picked];
  let data;
  try {
    data = await api(`/api/lab/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
  } catch (e) {
    $("lab-status").textContent = e.message;
    return;
  }
  const first = (run) => (run.results && run.results.variants[0]) || null;
  const cell = (run, fn) => h("td", {}, first(run) ? fn(first(run), run) : "");
  const row = (label, fn) => h("tr", {}, h("th", {scope: "row"}, label), cell(data.a, fn), cell(data.b, fn));
  const d = data.difference;
  const sentence = d ? h("p", {class: "verdict"}, (d.significant
    ? t("The first player's win rate differs: B − A = {diff} points {interval} (p = {p}).", {diff: points(d.diff), interval: pointsInterval(d.ci), p: P_VALUE.format(d.p_value)})
    : t("No evidence that the first player's win rate differs: B − A = {diff} points {interval} (p = {p}).", {diff: points(d.diff), interval: pointsInterval(d.ci), p: P_VALUE.format(d.p_value)}))) : null;
  const close = h("button", {type: "button", class: "small", id: "close-side"}, t("Close"));
  close.addEventListener("click", () => { $("side-by-side").hidden = true; });
  $("side-by-side").replaceChildren(h("h2", {}, t("Side by side"), close),
    h("div", {class: "scroll-x"}, h("table", {class: "tables"},
      h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {scope: "col"}, `A: ${title(data.a)}`), h("th", {scope: "col"}, `B: ${title(data.b)}`))),
      h("tbody", {},
        h("tr", {}, h("th", {scope: "row"}, t("Settings")), h("td", {}, settingsList(data.a)), h("td", {}, settingsList(data.b))),
        row(t("First player wins"), (v) => `${pct(v.first_player.rate)} ${interval(v.first_player.ci)}`),
        row(t("Turns (mean)"), (v) => NUMBER.format(v.turns.mean ?? 0)),
        row(t("Shared wins"), (v) => pct(v.shared.rate))))),
    sentence, h("p", {class: "muted"}, t("The first variant of each run is compared.")));
  $("side-by-side").hidden = false;
  $("side-by-side").scrollIntoView({block: "start"});
}

async function refresh() {
  try {
    runs = (await api("/api/lab/runs")).runs;
  } catch (e) {
    $("lab-status").textContent = e.message;
    return;
  }
  $("runs-box").hidden = runs.length === 0;
  $("runs").replaceChildren(...runs.map(runItem));
  for (const id of [...picked]) if (!runs.some((r) => r.id === id && r.status === "done")) picked.delete(id);
  $("compare-runs").disabled = picked.size !== 2;
  if (openId) await showRun();
}

async function init() {
  translatePage();
  $("top").append(languageSwitch());
  try {
    info = await api("/api/lab");
  } catch (e) {
    info = {on: false, message: e.message};
  }
  if (!info.on) {
    $("lab-status").textContent = info.message;
    $("lab-status").className = "error";
    return;
  }
  const {account} = await me;
  if (!account) {
    $("lab-status").replaceChildren(t("The lab is for accounts: "),
      h("a", {href: "/login?next=%2Flab", id: "lab-login"}, t("log in or sign up")), ".");
    return;
  }
  $("lab-status").textContent = t("Each account runs one thing at a time, at most {n} games; runs are played after the games people are playing.",
    {n: NUMBER.format(info.max_games)});
  catalog = (await api("/api/games")).games;
  $("game").replaceChildren(...catalog.map((g) => h("option", {value: g.name}, g.title)));
  $("game").addEventListener("change", () => { compared = []; renderCompared(); renderPlayers(); });
  $("players").addEventListener("change", () => { renderAgents(); renderOptions(); showTotal(); });
  for (const id of ["kind-run", "kind-balance", "target"]) $(id).addEventListener("change", showKind);
  for (const id of ["games", "budget"]) $(id).addEventListener("input", showTotal);
  $("compare-add").addEventListener("click", addCompared);
  $("lab-start").addEventListener("click", start);
  $("compare-runs").addEventListener("click", sideBySide);
  renderPlayers();
  showKind();
  $("new-run").hidden = false;
  await refresh();
  setInterval(() => { if (document.visibilityState === "visible") refresh(); }, 1500);
}

init();

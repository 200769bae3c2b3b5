// The leaderboards: per game and player count, established ratings first, then provisional
// ones, each by the conservative rating (mu − 3σ). The choice of game and players is kept in the address.
import {api, h} from "./common.js";
import {LANG, languageSwitch, t, translatePage} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const number = new Intl.NumberFormat(LANG);
let games = [];

function fillPlayers(game, chosen) {
  const g = games.find((x) => x.name === game) || games[0];
  const counts = Array.from({length: g.max_players - g.min_players + 1}, (_, k) => g.min_players + k);
  $("players").replaceChildren(...counts.map((n) => h("option", {value: n, selected: n === chosen ? true : null},
    t("{n} players", {n}))));
}

function row(e) {
  const r = e.rating;
  return h("tr", {class: r.provisional ? "is-provisional" : null},
    h("td", {class: "num"}, number.format(e.place)),
    h("td", {}, h("a", {href: `/players/${encodeURIComponent(e.name)}`}, e.name)),
    h("td", {class: "num"}, number.format(r.display),
      r.provisional ? h("span", {class: "provisional", title: t("fewer than 10 rated games, or still uncertain")},
        t("provisional")) : null),
    h("td", {}, t("{low}–{high}", {low: number.format(r.low), high: number.format(r.high)})),
    h("td", {class: "num"}, number.format(e.games)), h("td", {class: "num"}, number.format(e.wins)));
}

async function show(game, players) {
  const query = new URLSearchParams();
  if (game) query.set("game", game);
  if (players) query.set("players", String(players));
  let data;
  try {
    data = await api(`/api/leaderboard?${query}`);
  } catch (e) {
    $("status").textContent = e.message;
    $("status").className = "error";
    return;
  }
  if (!games.length) {
    games = data.games;
    $("game").replaceChildren(...games.map((g) => h("option", {value: g.name}, g.title)));
  }
  $("game").value = data.game;
  fillPlayers(data.game, data.players);
  $("board-title").textContent = t("{game}, {n} players", {game: data.title, n: data.players});
  $("board-list").replaceChildren(...data.entries.map(row));
  $("board").hidden = data.entries.length === 0;
  $("status").className = "muted";
  $("status").textContent = data.entries.length ? "" : t("Nobody is rated here yet: play a rated table!");
  document.body.dataset.ready = "1";
}

function choose() {
  const game = $("game").value, players = Number($("players").value);
  const url = new URL(location.href);
  url.searchParams.set("game", game);
  url.searchParams.set("players", String(players));
  history.replaceState(null, "", url.href);
  show(game, players);
}

async function init() {
  translatePage();
  $("top").append(languageSwitch());
  $("choice").addEventListener("submit", (ev) => ev.preventDefault());
  $("game").addEventListener("change", () => {
    const g = games.find((x) => x.name === $("game").value);
    $("players").value = String(g.min_players);
    fillPlayers(g.name, g.min_players);
    choose();
  });
  $("players").addEventListener("change", choose);
  const params = new URLSearchParams(location.search);
  await show(params.get("game"), Number(params.get("players")) || null);
}

init();

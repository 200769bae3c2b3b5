// A player's profile: per game and player count the games played, wins, the rating with its
// range and whether it is provisional, the rating over time (an SVG plot, with the same figures as a
// table for screen readers and keyboards), and the player's finished tables with links to their replays.
import {api, h, svg} from "./common.js";
import {LANG, languageSwitch, t, translatePage} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const number = new Intl.NumberFormat(LANG);
const when = new Intl.DateTimeFormat(LANG, {dateStyle: "short", timeStyle: "short"});
const day = new Intl.DateTimeFormat(LANG, {dateStyle: "medium"});

function playerName() {
  const parts = location.pathname.split("/");
  try { return decodeURIComponent(parts[parts.length - 1] || ""); } catch { return ""; }
}

function gameHeading(r) {
  return t("{game}, {n} players", {game: r.title, n: r.players});
}

/** The figures of one rating: games, wins, rating (provisional marked) and its range. */
function figures(r) {
  const rating = r.rating;
  const item = (label, value, extra = null) => h("div", {}, h("dt", {}, label), h("dd", {}, value, extra));
  return h("dl", {class: "figures"},
    item(t("Games played"), number.format(r.games)),
    item(t("Wins"), number.format(r.wins)),
    item(t("Rating"), number.format(rating.display),
      rating.provisional ? h("span", {class: "provisional", title: t("fewer than 10 rated games, or still uncertain")},
        t("provisional")) : null),
    item(t("Range (95%)"), t("{low}–{high}", {low: number.format(rating.low), high: number.format(rating.high)})));
}

/** The rating after each rated game as a line over the games (x: rated game number, 0 = a newcomer's
 * rating when the history goes back that far; y: rating), with the 95% range as a band. The drawing is
 * as wide as the page allows, so that its texts keep their size on a phone. */
function plot(r, id) {
  const points = r.start ? [{...r.start, start: true}, ...r.history] : r.history;
  const first = r.start ? 0 : r.games - r.history.length + 1; // the number of the first point
  const W = Math.round(Math.min(800, Math.max(300, ($("ratings").clientWidth || 600) - 34)));
  const H = W < 500 ? 220 : 260, L = 58, R = 14, T = 14, B = 50;
  const values = points.flatMap((p) => [p.low, p.high, p.display]);
  let lo = Math.min(...values), hi = Math.max(...values);
  const pad = Math.max(10, (hi - lo) * 0.06);
  lo = Math.floor((lo - pad) / 10) * 10; hi = Math.ceil((hi + pad) / 10) * 10;
  const x = (k) => (points.length === 1 ? L + (W - L - R) / 2 : L + (k * (W - L - R)) / (points.length - 1));
  const y = (v) => T + ((hi - v) * (H - T - B)) / (hi - lo);
  const titleId = `${id}-title`, descId = `${id}-desc`;
  const root = svg("svg", {class: "rating-plot", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-labelledby": `${titleId} ${descId}`});
  svg("title", {id: titleId, text: t("Rating over time: {game}", {game: gameHeading(r)})}, root);
  const last = points[points.length - 1];
  svg("desc", {id: descId, text: t("{n} rated games; the rating went from {from} to {to}.",
    {n: r.history.length, from: points[0].display, to: last.display})}, root);
  for (let k = 0; k <= 4; k++) { // horizontal grid and the rating ticks
    const v = Math.round(lo + ((hi - lo) * k) / 4);
    svg("line", {class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v)}, root);
    svg("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end", text: number.format(v)}, root);
  }
  const band = points.map((p, k) => `${x(k)},${y(p.high)}`).concat(points.map((p, k) => `${x(k)},${y(p.low)}`).reverse());
  if (points.length > 1) svg("polygon", {class: "band", points: band.join(" ")}, root);
  svg("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}, root);
  svg("line", {class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B}, root);
  const ticks = [...new Set([0, Math.floor((points.length - 1) / 2), points.length - 1])];
  for (const k of ticks) svg("text", {x: x(k), y: H - B + 18, "text-anchor": "middle", text: number.format(first + k)}, root);
  svg("text", {x: L + (W - L - R) / 2, y: H - 8, "text-anchor": "middle", text: t("Rated games")}, root);
  svg("text", {x: 14, y: T + (H - T - B) / 2, "text-anchor": "middle",
    transform: `rotate(-90 14 ${T + (H - T - B) / 2})`, text: t("Rating")}, root);
  if (points.length > 1) svg("polyline", {class: "line", points: points.map((p, k) => `${x(k)},${y(p.display)}`).join(" ")}, root);
  points.forEach((p, k) => svg("circle", {class: p.start ? "point start" : "point", cx: x(k), cy: y(p.display), r: 4,
    title: p.start ? t("start: {rating}", {rating: p.display})
      : t("game {n}: {rating}", {n: first + k, rating: p.display})}, root));
  return root;
}

/** A cell of a table whose rows are cards on a phone (ratings.css, ``table.cards``): ``label``, its column's
 * name, shows there only (screen readers have the table's headers). */
function cardCell(cls, label, ...content) {
  return h("td", {class: cls, role: "cell"},
    label ? h("span", {class: "cell-label", "aria-hidden": "true"}, label) : null, ...content);
}

/** The plot's figures as a table (the accessible alternative). */
function historyTable(r) {
  const first = r.games - r.history.length + 1;
  const rows = r.history.map((p, k) => h("tr", {role: "row"},
    cardCell("num", t("Rated game"), number.format(first + k)),
    cardCell(null, t("Date"), day.format(new Date(p.at * 1000))),
    cardCell("num", t("Rating"), number.format(p.display)),
    cardCell(null, t("Range (95%)"), t("{low}–{high}", {low: number.format(p.low), high: number.format(p.high)})),
    cardCell("replay", null, h("a", {href: `/replay/${encodeURIComponent(p.table)}`}, t("replay")))));
  const th = (cls, ...content) => h("th", {scope: "col", role: "columnheader", class: cls}, ...content);
  return h("details", {},
    h("summary", {}, t("Rating history as a table")),
    h("div", {class: "scroll-x"}, h("table", {class: "tables cards", role: "table"},
      h("caption", {class: "visually-hidden"}, t("Rating over time: {game}", {game: gameHeading(r)})),
      h("thead", {role: "rowgroup"}, h("tr", {role: "row"}, th("num", t("Rated game")), th(null, t("Date")),
        th("num", t("Rating")), th(null, t("Range (95%)")),
        th(null, h("span", {class: "visually-hidden"}, t("Replay"))))),
      h("tbody", {role: "rowgroup"}, rows))));
}

function ratingCard(r, k) {
  const id = `plot-${k}`;
  return h("section", {class: "panel rating-card", "aria-labelledby": `${id}-h`},
    h("h2", {id: `${id}-h`}, gameHeading(r)), figures(r),
    r.history.length ? plot(r, id) : null, r.history.length ? historyTable(r) : null);
}

function resultText(tb) {
  if (tb.reason === "abandoned" && !tb.won) return t("abandoned");
  if (tb.won) return tb.shared ? t("shared win") : t("won");
  return t("lost");
}

/** One finished table (on a phone, a card: see :func:`cardCell`). */
function finishedRow(tb) {
  const ended = when.format(new Date(tb.ended_at * 1000));
  return h("tr", {role: "row"},
    cardCell("game", null, tb.title),
    cardCell(null, t("Players"), tb.names.filter(Boolean).join(", ")),
    cardCell(null, t("Result"), resultText(tb), tb.rated ? h("span", {class: "tag"}, t("rated")) : null),
    cardCell("num", t("Rating after"), tb.rating_after === null ? "—" : number.format(tb.rating_after)),
    cardCell("ended", t("Ended"), ended),
    cardCell("replay", null, h("a", {href: tb.replay, "aria-label": t("replay of {game}, {date}",
      {game: tb.title, date: ended})}, t("replay"))));
}

async function init() {
  translatePage();
  $("top").append(languageSwitch());
  const name = playerName();
  $("player-name").textContent = name || t("Player");
  let data;
  try {
    data = await api(`/api/players/${encodeURIComponent(name)}`);
  } catch (e) {
    $("status").textContent = e.message;
    $("status").className = "error";
    document.title = t("ludoteca — no such player");
    return;
  }
  document.title = t("ludoteca — {name}", {name: data.name});
  $("player-name").textContent = data.name;
  $("status").textContent = t("Player since {date}", {date: day.format(new Date(data.created_at * 1000))});
  const drawRatings = () => $("ratings").replaceChildren(...(data.ratings.length ? data.ratings.map(ratingCard)
    : [h("p", {class: "panel muted"}, t("No rated games yet."))]));
  drawRatings();
  let width = $("ratings").clientWidth, timer = null;
  window.addEventListener("resize", () => { // the plots are drawn to the page's width: again when it changes
    clearTimeout(timer);
    timer = setTimeout(() => {
      if ($("ratings").clientWidth === width) return;
      width = $("ratings").clientWidth;
      const open = [...document.querySelectorAll(".rating-card details")].map((d) => d.open);
      drawRatings();
      document.querySelectorAll(".rating-card details").forEach((d, k) => { d.open = !!open[k]; });
    }, 150);
  });
  $("finished").hidden = false;
  $("finished-list").replaceChildren(...(data.tables.length ? data.tables.map(finishedRow)
    : [h("tr", {role: "row"}, h("td", {colspan: 6, class: "muted", role: "cell"}, t("No finished tables yet.")))]));
  document.body.dataset.ready = "1";
}

init();

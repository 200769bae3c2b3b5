// The lobby's pace controls (web/master/pace.py): live or turn-based, the time per move (1 hour to 3 days),
// the reserve, what happens when a player's time runs out and the table's webhook (a club's channel told every
// turn and the end; nobody else ever sees it); the list's "turn-based" tag and its filter.
import {h} from "./common.js";
import {t} from "./i18n.js";
import {timeLeft} from "./time-left.js";

const $ = (id) => document.getElementById(id);
const HOUR = 3600, DAY = 86400;
const PRESETS = [HOUR, 4 * HOUR, 12 * HOUR, DAY, 2 * DAY, 3 * DAY];
const RESERVES = [0, HOUR, 4 * HOUR, DAY, 3 * DAY];

function select(id, choices, chosen) {
  return h("select", {id}, ...choices.map(([value, text]) =>
    h("option", {value: String(value), selected: String(value) === String(chosen) ? true : null}, text)));
}

/** The pace rows, after ``row`` (a .form-row of the creation form); the turn-based ones show when chosen. */
export function addPaceControls(row) {
  const turnRows = [
    h("div", {class: "form-row pace-row"}, h("label", {for: "move-time"}, t("Time per move")),
      select("move-time", PRESETS.map((s) => [s, timeLeft(s)]), DAY)),
    h("div", {class: "form-row pace-row"}, h("label", {for: "reserve"}, t("Reserve")),
      select("reserve", RESERVES.map((s) => [s, s ? t("up to {time}", {time: timeLeft(s)}) : t("none")]), 0),
      h("span", {class: "opt-note"}, t("time a player saves by moving early, for a later move"))),
    h("div", {class: "form-row pace-row"}, h("label", {for: "on-timeout"}, t("When time runs out")),
      select("on-timeout", [["ai_move", t("the AI plays that move")],
        ["ai_seat", t("the AI plays it; at a second miss it takes the seat")],
        ["claim", t("the opponent may claim the win (two players)")]], "ai_move")),
    h("div", {class: "form-row pace-row"}, h("label", {for: "table-webhook"}, t("Club webhook")),
      h("input", {id: "table-webhook", type: "text", inputmode: "url", autocomplete: "off", spellcheck: "false",
        maxlength: "2000", placeholder: "https://…"}),
      h("span", {class: "opt-note"},
        t("optional: a Discord or Slack webhook; that channel hears every turn and the game's end"))),
  ];
  const paceRow = h("div", {class: "form-row"}, h("label", {for: "pace"}, t("Pace")),
    select("pace", [["live", t("live: everyone plays now")], ["turn-based", t("turn-based: a move every few hours or days")]],
      "live"));
  row.after(paceRow, ...turnRows);
  const show = () => {
    const turnBased = $("pace").value === "turn-based";
    for (const r of turnRows) r.hidden = !turnBased;
    const away = $("abandon-after") && $("abandon-after").closest(".form-row");
    const then = $("abandoned") && $("abandoned").closest(".form-row");
    for (const r of [away, then]) if (r) r.hidden = turnBased; // a turn-based table has no away limit
  };
  $("pace").addEventListener("change", show);
  show();
}

/** The pace keys of POST /api/tables ({} for a live table). */
export function paceSetting() {
  if (!$("pace") || $("pace").value !== "turn-based") return {};
  const hook = $("table-webhook") ? $("table-webhook").value.trim() : "";
  return {pace: "turn-based", move_time: Number($("move-time").value), reserve: Number($("reserve").value),
    on_timeout: $("on-timeout").value, ...(hook ? {webhook: hook} : {})};
}

/** The list's tag of a turn-based table: "turn-based · 1 day". */
export function paceTag(tb) {
  if (tb.pace !== "turn-based") return null;
  return h("span", {class: "tag pace-tag"}, tb.move_time ? t("turn-based · {time}", {time: timeLeft(tb.move_time)})
    : t("turn-based"));
}

/** The list's filter (all, live, turn-based), before ``heading``'s refresh button; ``changed`` redraws. */
export function addPaceFilter(after, changed) {
  const filter = select("pace-filter", [["", t("all")], ["live", t("live")], ["turn-based", t("turn-based")]], "");
  filter.setAttribute("aria-label", t("Show tables"));
  filter.addEventListener("change", changed);
  after.after(" ", filter);
}

export function paceShown(tb) {
  const wanted = $("pace-filter") ? $("pace-filter").value : "";
  return !wanted || (tb.pace || "live") === wanted;
}

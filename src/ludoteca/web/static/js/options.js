// A game's options as controls, one per declared kind (core/options.py), never JSON text: the lobby's table
// settings and the lab's forms (lab.js) draw them alike from /api/games (web/lobby/option_words.py).
import {h} from "./common.js";
import {t} from "./i18n.js";

export const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** The option's starting value at this player count: the game's defaults (/api/games "defaults"), else its own. */
export function startValue(g, opt, n) {
  const defaults = (g.defaults && g.defaults[n]) || {};
  if (opt.name in defaults) return defaults[opt.name];
  return opt.default_follows ? undefined : opt.default;
}

/** A checkbox drawn as a switch (style.css: .opt-switch), with its own words beside it. */
export function toggle(id, checked, words) {
  const input = h("input", {type: "checkbox", role: "switch", id, class: "opt-switch", checked: checked ? true : null});
  return {input, node: h("label", {class: "switch-row", for: id}, input, h("span", {class: "switch-words"}, words))};
}

export function numberInput(id, opt, value, placeholder) {
  return h("input", {type: "number", id, inputmode: "numeric", step: 1, min: opt.low ?? null, max: opt.high ?? null,
    value: value === undefined || value === null ? null : String(value), placeholder: placeholder || null,
    class: "opt-number"});
}

/** A number field's value: a number, or undefined when it is empty. */
export function numberOf(input) {
  const text = input.value.trim();
  return text === "" ? undefined : Number(text);
}

export function choiceControl(opt, id, value) {
  const start = Math.max(0, opt.choices.findIndex((c) => c.value === value));
  const select = h("select", {id, class: "opt-choice"},
    ...opt.choices.map((c, i) => h("option", {value: String(i), selected: i === start ? true : null}, capital(c.label))));
  const note = h("div", {class: "opt-doc choice-help"});
  const explain = () => { note.textContent = opt.choices[Number(select.value)].help || ""; };
  select.addEventListener("change", explain);
  explain();
  return {row: [h("div", {class: "form-row"}, h("label", {for: id}, capital(opt.label)), select), note],
    read: () => (Number(select.value) === start ? undefined : opt.choices[Number(select.value)].value)};
}

export function boolControl(opt, id, value) {
  const sw = toggle(id, value, capital(opt.label));
  return {row: [h("div", {class: "form-row"}, sw.node)],
    read: () => (sw.input.checked === Boolean(value) ? undefined : sw.input.checked)};
}

export function intControl(opt, id, value) {
  const input = numberInput(id, opt, value);
  return {row: [h("div", {class: "form-row"}, h("label", {for: id}, capital(opt.label)), input)],
    read: () => { const v = numberOf(input); return v === undefined || v === value ? undefined : v; }};
}

/** Seconds, or none: a switch with the words of none ("no hourglass") and the seconds beside it. */
export function secondsControl(opt, id, value) {
  const off = value === null && !opt.default_follows;
  const input = numberInput(id, opt, off ? undefined : value);
  const unit = h("span", {class: "opt-unit"}, t("seconds"));
  const empty = value === undefined || value === null; // a default that follows another option (e.g. the clock)
  const sw = toggle(`${id}-none`, off, capital(opt.none_label));
  const sync = () => { input.disabled = sw.input.checked; };
  sw.input.addEventListener("change", sync);
  sync();
  return {row: [h("div", {class: "form-row"}, h("label", {for: id}, capital(opt.label)), input, unit),
    empty ? h("div", {class: "opt-doc"}, t("Default: {value}.", {value: opt.default_words})) : null,
    h("div", {class: "form-row seconds-none"}, sw.node)].filter(Boolean),
  read: () => {
    if (sw.input.checked) return off ? undefined : null;
    const v = numberOf(input);
    return v === undefined || (v === value && !off) ? undefined : v;
  }};
}

/** A designer's file (a tile set, a board): read as text here, sent as its JSON content. */
export function fileControl(opt, id) {
  let content;
  const status = h("div", {class: "opt-doc file-status", role: "status"}, t("Now: {what}", {what: opt.default_words}));
  // the browser's own file button speaks the browser's language: a label of ours opens it instead
  const input = h("input", {type: "file", id, accept: ".json,application/json", class: "opt-file",
    "aria-label": capital(opt.label)});
  const pick = h("label", {for: id, class: "file-pick"}, t("Choose a file"));
  const clear = h("button", {type: "button", class: "small file-clear", hidden: true}, t("Use the usual one"));
  input.addEventListener("change", async () => {
    content = undefined;
    status.classList.remove("error");
    const file = input.files && input.files[0];
    clear.hidden = !file;
    if (!file) { status.textContent = t("Now: {what}", {what: opt.default_words}); return; }
    try {
      content = JSON.parse(await file.text());
      status.textContent = t("Now: the file {file}", {file: file.name});
    } catch {
      status.classList.add("error");
      status.textContent = t("{file} cannot be read: it is not a JSON file", {file: file.name});
    }
  });
  clear.addEventListener("click", () => {
    input.value = "";
    input.dispatchEvent(new Event("change"));
  });
  return {designer: true, row: [h("div", {class: "form-row file-row"}, h("span", {class: "file-label"}, capital(opt.label)),
    input, pick, clear),
    h("div", {class: "opt-doc"}, opt.help), status],
  read: () => content};
}

export const CONTROLS = {choice: choiceControl, bool: boolControl, int: intControl, seconds_or_none: secondsControl,
  file: fileControl};

// A turn-based table's club webhook, for its creator only (web/notices/table_hook.py): the page says that one
// is set and where it goes (its host only, never the address), and the creator may replace or remove it.
// The server decides who the creator is (the seat they took, or their account): anyone else is refused and
// the part stays hidden, so nobody else learns whether the table has a webhook.
import {api, getSeat, h, me} from "./common.js";
import {t} from "./i18n.js";
import {tableId} from "./table-state.js";

let state = null; // {webhook: {host} | null} once the server said this viewer made the table
let part = null; // the pace box's part that shows it (kept across the box's redraws: a half-typed address stays)
let editing = false;
let error = "";
let asked = false;

function token() {
  const mine = getSeat(tableId);
  return mine ? mine.token : null;
}

async function send(body) {
  state = await api(`/api/tables/${tableId}/webhook`, {token: token(), ...body});
}

function render() {
  if (!state) {
    part = null;
    return;
  }
  if (!part) part = h("div", {id: "pace-hook", class: "pace-hook"});
  const hook = state.webhook;
  const line = h("p", {id: "pace-hook-line"}, hook ? t("Club webhook: {host}", {host: hook.host}) : t("No club webhook"));
  const children = editing && !hook ? [] : [line]; // adding one: the field's label says it
  if (editing) {
    const input = h("input", {type: "url", id: "pace-hook-url", inputmode: "url", autocomplete: "off",
      placeholder: "https://discord.com/api/webhooks/…", "aria-describedby": "pace-hook-error"});
    const save = h("button", {class: "primary", id: "pace-hook-save", type: "submit"}, t("Save"));
    const cancel = h("button", {type: "button", id: "pace-hook-cancel", onclick: () => {
      editing = false;
      error = "";
      render();
    }}, t("Cancel"));
    const form = h("form", {class: "pace-hook-form", novalidate: true}, // the server's words, in the page's language
      h("label", {for: "pace-hook-url"}, hook ? t("New club webhook") : t("Club webhook")), input,
      h("div", {class: "pace-hook-buttons"}, save, cancel));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      if (!input.value.trim()) { // an empty address would remove it: "Remove" does that
        error = t("Paste your club's webhook address, starting with https://");
        render();
        return;
      }
      try {
        await send({url: input.value.trim()});
        editing = false;
        error = "";
      } catch (e) {
        error = e.message;
      }
      render();
      if (editing) part.querySelector("#pace-hook-url").value = input.value;
    });
    children.push(form);
  } else {
    const buttons = [h("button", {type: "button", id: "pace-hook-edit", onclick: () => {
      editing = true;
      error = "";
      render();
      part.querySelector("#pace-hook-url").focus();
    }}, hook ? t("Replace") : t("Add a club webhook"))];
    if (hook) {
      buttons.push(h("button", {type: "button", id: "pace-hook-remove", onclick: async () => {
        try {
          await send({url: null});
          error = "";
        } catch (e) {
          error = e.message;
        }
        render();
      }}, t("Remove")));
    }
    children.push(h("div", {class: "pace-hook-buttons"}, ...buttons));
  }
  children.push(h("p", {id: "pace-hook-error", class: "pace-hook-error", role: "alert"}, error));
  part.replaceChildren(...children);
}

/** Ask once whether this viewer made the table; ``redraw`` draws the pace box again when the answer came. */
export async function askHook(redraw) {
  if (asked) return;
  asked = true;
  const who = await me;
  if (!token() && !(who && who.account)) return;
  try {
    await send({});
  } catch { state = null; } // not the creator: nothing to show
  render();
  redraw();
}

/** The creator's webhook part of the pace box (null for anyone else). */
export function hookPart() {
  return part;
}

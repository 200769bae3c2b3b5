// The moderators' page (web/accounts/moderation.py): who is at a table now, close a table, remove a chat line,
// rename or suspend an account, the moderation log. Every action asks the server, which checks the role.
import {api, h} from "./common.js";
import {LANG, languageSwitch, t, translatePage} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const when = new Intl.DateTimeFormat(LANG, {dateStyle: "short", timeStyle: "short"});

function say(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "muted";
}

async function act(path, body, done) {
  try {
    await api(path, body);
    say(done);
    await load();
  } catch (e) {
    say(e.message, true);
  }
}

const ACTIONS = {
  grant: () => t("moderator role given"), revoke: () => t("moderator role taken back"),
  suspend: () => t("account suspended"), restore: () => t("account restored"), rename: () => t("name changed"),
  remove_chat: () => t("chat message removed"), close_table: () => t("table closed"),
};

function logLine(e) {
  const what = ACTIONS[e.action] ? ACTIONS[e.action]() : e.action;
  const to = e.detail && e.detail.to ? ` → ${e.detail.to}` : "";
  return h("li", {}, h("span", {class: "muted"}, when.format(new Date(e.at * 1000))), " ",
    t("{admin}: {target}, {what}", {admin: e.admin, target: e.target + to, what}));
}

function chatLine(c) {
  const text = c.removed ? t("(removed by a moderator)") : c.text;
  const remove = c.removed ? null : h("button", {type: "button", class: "admin-action",
    onclick: () => act(`/api/admin/chat/${c.id}/remove`, {}, t("Message removed."))}, t("Remove"));
  return h("li", {}, h("a", {href: `/t/${encodeURIComponent(c.table)}`}, c.table), " · ",
    h("strong", {}, c.name || ""), " ", h("span", {class: "admin-chat-text"}, text), " ", remove);
}

function accountLine(a) {
  const rename = h("button", {type: "button", class: "admin-action", onclick: () => {
    const name = prompt(t("New name for {name}", {name: a.name}), a.name);
    if (name && name.trim() && name.trim() !== a.name) {
      act(`/api/admin/accounts/${encodeURIComponent(a.name)}/rename`, {name: name.trim()}, t("Account renamed."));
    }
  }}, t("Rename"));
  const suspend = h("button", {type: "button", class: "admin-action", onclick: () =>
    act(`/api/admin/accounts/${encodeURIComponent(a.name)}/suspend`, {suspended: !a.suspended},
      a.suspended ? t("Account restored.") : t("Account suspended."))},
  a.suspended ? t("Restore") : t("Suspend"));
  const tags = [a.admin ? t("one of the moderators") : null, a.suspended ? t("account suspended") : null]
    .filter(Boolean).join(", ");
  return h("li", {}, h("a", {href: `/players/${encodeURIComponent(a.name)}`}, a.name),
    tags ? h("span", {class: "muted"}, ` (${tags})`) : null, " ", rename, " ", suspend);
}

async function findAccounts() {
  try {
    const data = await api(`/api/admin/accounts?q=${encodeURIComponent($("accounts-q").value.trim())}`);
    $("accounts").replaceChildren(...data.accounts.map(accountLine));
    if (!data.accounts.length) $("accounts").append(h("li", {class: "muted"}, t("No account found.")));
  } catch (e) {
    say(e.message, true);
  }
}

async function load() {
  let data;
  try {
    data = await api("/api/admin");
  } catch (e) {
    say(e.code === "not_logged_in" ? t("Log in with a moderator's account to use this page.")
      : e.code === "not_admin" ? t("This page is for the club's moderators.") : e.message, true);
    document.body.dataset.ready = "1";
    return;
  }
  $("admin").hidden = false;
  $("worker").textContent = t("This server process: {n} open connections, {tables} tables loaded.",
    {n: data.worker.connections, tables: data.worker.tables_loaded});
  $("online").replaceChildren(...data.online.map((o) => h("li", {},
    h("a", {href: `/t/${encodeURIComponent(o.table)}`}, o.table), " · ", o.name || t("Seat {n}", {n: o.seat + 1}))));
  if (!data.online.length) $("online").append(h("li", {class: "muted"}, t("Nobody is at a table now.")));
  $("chat").replaceChildren(...data.chat.map(chatLine));
  if (!data.chat.length) $("chat").append(h("li", {class: "muted"}, t("No chat message yet.")));
  $("log").replaceChildren(...data.log.map(logLine));
  if (!data.log.length) $("log").append(h("li", {class: "muted"}, t("Nothing yet.")));
  await findAccounts();
  if ($("status").className !== "error" && $("status").textContent === t("Loading…")) say("");
  document.body.dataset.ready = "1";
}

function init() {
  translatePage();
  $("top").append(languageSwitch());
  $("close-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = $("close-id").value.trim();
    if (id) act(`/api/admin/tables/${encodeURIComponent(id)}/close`, {}, t("Table closed."));
  });
  $("accounts-form").addEventListener("submit", (ev) => { ev.preventDefault(); findAccounts(); });
  load();
}

init();

// The account page's notices (web/notices/routes.py): which events, which channels, quiet hours,
// the e-mail address (a confirmation link is mailed), Web Push in this browser, a webhook; and the pages the
// e-mails link to (confirm the address, stop the e-mails). Every text through t().
import {api, me} from "./common.js";
import {LANG, t} from "./i18n.js";

const $ = (id) => document.getElementById(id);
const SUBSCRIBE_WAIT = 20000; // ms the browser's push service may take to answer
let view = null;

function say(text, error = false) {
  $("notices-error").textContent = error ? text : "";
  $("notices-status").textContent = error ? "" : text;
}

function checked(name) {
  return [...document.querySelectorAll(`input[name="${name}"]`)].filter((x) => x.checked).map((x) => x.value);
}

function timezone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch { return "UTC"; }
}

/** Show the server's view of the account's choices. */
function show(data) {
  view = data;
  for (const box of document.querySelectorAll('input[name="event"]')) box.checked = data.events.includes(box.value);
  for (const box of document.querySelectorAll('input[name="channel"]')) box.checked = data.channels.includes(box.value);
  $("quiet-on").checked = !!data.quiet;
  if (data.quiet) { $("quiet-start").value = data.quiet.start; $("quiet-end").value = data.quiet.end; }
  $("notice-lang").value = data.lang;
  $("notice-email").value = data.email || "";
  $("notice-webhook").value = data.webhook || "";
  $("email-remove").hidden = !data.email;
  $("webhook-remove").hidden = !data.webhook;
  const off = !data.mail_on;
  $("notice-email").disabled = off && !data.email;
  $("email-save").disabled = off;
  document.querySelector('input[name="channel"][value="email"]').disabled = off;
  $("email-state").textContent = off ? t("This server sends no e-mail: ask its keeper to set it up.")
    : !data.email ? t("No address yet.")
    : data.email_verified ? t("Confirmed: the e-mails about your games go there.")
    : t("Not confirmed yet: open the link we mailed to this address.");
  showPush();
}

async function run(action, done) {
  say("");
  try {
    show(await action());
    if (done) say(done);
  } catch (e) {
    say(e.message, true);
  }
}

function saveChoices() {
  const quiet = $("quiet-on").checked ? {start: $("quiet-start").value, end: $("quiet-end").value} : null;
  return run(() => api("/api/notices", {events: checked("event"), channels: checked("channel"), quiet,
    timezone: timezone(), lang: $("notice-lang").value}), t("Your choices are saved."));
}

// --- Web Push in this browser -------------------------------------------------------------------------
function pushSupported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function keyBytes(base64) {
  const padded = (base64 + "=".repeat((4 - (base64.length % 4)) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

async function currentSubscription() {
  if (!pushSupported()) return null;
  const registration = await navigator.serviceWorker.getRegistration("/");
  return registration ? registration.pushManager.getSubscription() : null;
}

async function showPush() {
  if (!pushSupported()) {
    $("push-state").textContent = t("This browser cannot show notices from a web page.");
    $("push-on").hidden = true;
    $("push-off").hidden = true;
    return;
  }
  const subscription = await currentSubscription().catch(() => null);
  $("push-on").hidden = !!subscription;
  $("push-off").hidden = !subscription;
  $("push-state").textContent = subscription ? t("This browser shows your notices.")
    : Notification.permission === "denied" ? t("This browser blocks notices from this site: allow them in its settings.")
    : t("This browser does not show your notices yet.");
}

async function pushOn() {
  say("");
  try {
    const registration = await navigator.serviceWorker.register("/sw.js", {scope: "/"});
    if (await Notification.requestPermission() !== "granted") {
      say(t("This browser blocks notices from this site: allow them in its settings."), true);
      return;
    }
    await navigator.serviceWorker.ready;
    const subscribing = registration.pushManager.subscribe({userVisibleOnly: true,
      applicationServerKey: keyBytes(view.push_key)});
    const late = new Promise((resolve, reject) => setTimeout(() => reject(new Error("timeout")), SUBSCRIBE_WAIT));
    const subscription = await Promise.race([subscribing, late]);
    show(await api("/api/notices/push", {subscription: subscription.toJSON()}));
    say(t("This browser shows your notices."));
  } catch (e) {
    // the server's refusals come in the page's language; the browser's own reasons do not: ours instead
    const ours = typeof e.code === "string"; // a refusal of the server (web/errors.py), not a DOMException
    say(ours ? e.message : t("This browser could not sign up for notices: try again later, or in another browser."), true);
  }
}

async function pushOff() {
  const subscription = await currentSubscription().catch(() => null);
  if (!subscription) return showPush();
  const endpoint = subscription.endpoint;
  await subscription.unsubscribe().catch(() => null);
  await run(() => api("/api/notices/push/remove", {endpoint}), t("This browser will show no more notices."));
}

/** The page /account: the logged-in account's notices (else to the log-in page, and back here). */
export async function noticesPage() {
  document.title = `ludoteca — ${t("Your account")}`;
  const {account} = await me;
  if (!account) {
    location.href = "/login?next=/account";
    return;
  }
  $("notices").hidden = false;
  $("notice-lang").value = LANG;
  $("notices-save").addEventListener("click", saveChoices);
  $("email-save").addEventListener("click", () => run(() => api("/api/notices/email",
    {email: $("notice-email").value}), t("A confirmation link is on its way to this address.")));
  $("email-remove").addEventListener("click", () => run(() => api("/api/notices/email", {email: null}),
    t("The address is removed.")));
  $("webhook-save").addEventListener("click", () => run(() => api("/api/notices/webhook",
    {url: $("notice-webhook").value}), t("The webhook is saved.")));
  $("webhook-remove").addEventListener("click", () => run(() => api("/api/notices/webhook", {url: null}),
    t("The webhook is removed.")));
  $("push-on").addEventListener("click", pushOn);
  $("push-off").addEventListener("click", pushOff);
  try {
    show(await api("/api/notices"));
  } catch (e) {
    say(e.message, true);
  }
}

/** The pages an e-mail links to: confirm the address (/notices/verify) or stop the e-mails (/notices/unsubscribe,
 * after a button: a link checker opening the link changes nothing). */
export function linkPage(mode) {
  const token = new URLSearchParams(location.search).get("token") || "";
  $("link-panel").hidden = false;
  const title = mode === "verify" ? t("Confirm your e-mail address") : t("Stop the e-mails");
  document.title = `ludoteca — ${title}`;
  $("link-title").textContent = title;
  const done = (text) => { $("link-text").textContent = text; $("link-button").hidden = true; };
  const failed = (e) => done(e.code === "bad_token"
    ? t("This link is not valid any more. Ask for a new one on your account page.") : e.message);
  if (mode === "verify") {
    $("link-text").textContent = t("Confirming…");
    api("/api/notices/verify", {token})
      .then(() => done(t("Your e-mail address is confirmed: you will be told about your games there."))).catch(failed);
    return;
  }
  $("link-text").textContent = t("Stop the e-mails about your games?");
  $("link-button").textContent = t("Stop the e-mails");
  $("link-button").hidden = false;
  $("link-button").addEventListener("click", () => api(`/notices/unsubscribe?token=${encodeURIComponent(token)}`, {})
    .then(() => done(t("You will get no more e-mails from ludoteca."))).catch(failed));
}

// The /login and /signup pages (optional accounts): one form, two modes; every text through t().
// The same page is the account page /account (notices by e-mail, push and webhook: notices.js) and
// the pages the notices' e-mails link to: /notices/verify and /notices/unsubscribe.
import {api, h, me} from "./common.js";
import {languageSwitch, t, translatePage} from "./i18n.js";
import {linkPage, noticesPage} from "./notices.js";

const $ = (id) => document.getElementById(id);
const signup = location.pathname === "/signup";
const mode = {"/account": "account", "/notices/verify": "verify", "/notices/unsubscribe": "unsubscribe"}[location.pathname]
  || "login";

/** Where to go once logged in: the page that sent us here (?next=/t/abc), same site only; else the lobby. */
function nextPage() {
  const next = new URLSearchParams(location.search).get("next") || "/";
  return next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") ? next : "/";
}

function showError(text, field = null) {
  $("account-error").textContent = text;
  for (const id of ["account-name", "account-password"]) {
    if (id === field) $(id).setAttribute("aria-invalid", "true");
    else $(id).removeAttribute("aria-invalid");
  }
  if (field) $(field).focus();
}

/** The browser-side checks: the same rules as the server (web/accounts/accounts.py), told before sending. */
function problem(name, password) {
  if (signup) {
    if (name.length < 3 || name.length > 32) return [t("An account name has 3 to 32 characters."), "account-name"];
    if (!/^[\p{L}\p{N}_.\- ]+$/u.test(name) || name.includes("  ")) {
      return [t("An account name has letters, digits, spaces, _ - and . only."), "account-name"];
    }
    if (password.length < 8 || password.length > 128) return [t("A password has 8 to 128 characters."), "account-password"];
  } else {
    if (!name) return [t("Type your account name."), "account-name"];
    if (!password) return [t("Type your password."), "account-password"];
  }
  return null;
}

async function submit(ev) {
  ev.preventDefault();
  const name = $("account-name").value.trim();
  const password = $("account-password").value;
  const wrong = problem(name, password);
  if (wrong) { showError(...wrong); return; }
  showError("");
  $("account-submit").disabled = true;
  try {
    await api(signup ? "/api/signup" : "/api/login", {name, password});
    location.href = nextPage();
  } catch (e) {
    $("account-submit").disabled = false;
    showError(e.message, ["bad_password", "bad_login"].includes(e.code) ? "account-password" : "account-name");
  }
}

function setup() {
  const title = signup ? t("Create an account") : t("Log in");
  document.title = `ludoteca — ${title}`;
  $("account-title").textContent = title;
  $("account-submit").textContent = signup ? t("Sign up") : t("Log in");
  $("account-password").autocomplete = signup ? "new-password" : "current-password";
  for (const id of ["account-name-help", "account-password-help"]) { // the rules of a new name and password
    $(id).hidden = !signup;
    if (!signup) $(id.replace("-help", "")).removeAttribute("aria-describedby");
  }
  const query = location.search;
  $("account-switch").replaceChildren(signup ? t("Already have an account?") : t("No account yet?"), " ",
    h("a", {href: (signup ? "/login" : "/signup") + query, id: "account-other"}, signup ? t("Log in") : t("Sign up")));
  $("account-form").addEventListener("submit", submit);
  me.then(({account}) => {
    if (!account) return;
    const note = h("p", {class: "account-already", role: "status"},
      t("You are logged in as {name}.", {name: account.name}), " ", h("a", {href: nextPage()}, t("Go back")));
    $("account-form").before(note);
  });
  $("account-name").focus();
}

translatePage();
$("top").append(languageSwitch());
if (mode === "login") setup();
else {
  $("account-form").closest("section").hidden = true;
  if (mode === "account") noticesPage();
  else linkPage(mode);
}

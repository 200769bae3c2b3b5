// The languages of the browser client: English and Italian, from catalogs the server serves.
//
// Every text a person reads is written in English in the source as the literal first argument of a
// call of t (with {name} placeholders filled from its second argument), so that Babel's JavaScript
// extractor finds it (scripts/i18n.py); the Italian lives in the
// .po catalogs (the shell's locale/it/LC_MESSAGES/web.po and each game's own), which the server merges
// and serves as JSON at /i18n/<lang>.json. This module loads that catalog before any other module of
// the page runs (top-level await), so t() is synchronous everywhere. A text whose words depend on a count
// goes through tn(singular, plural, n): the catalog's msgid_plural entry gives every form, and the
// language's plural rule (the .po's Plural-Forms, which Babel writes from CLDR) picks one — never
// `n === 1 ? a : b`.
//
// The language: ?lang= in the address (then remembered), else the cookie the switch sets (ludoteca_lang,
// shared with the rules pages and sent with every request, so the server answers in it too), else the
// browser's preferred languages (navigator.languages), else English. Outside a page (node, in the
// tests) the language is English.
//
// Pages: mark texts with data-i18n (the element's text is the msgid) and attributes with
// data-i18n-placeholder / -title / -aria-label, and call translatePage() once; put languageSwitch() in
// the header.

export const LANGUAGES = ["en", "it"];
export const LANGUAGE_NAMES = {en: "English", it: "Italiano"};
export const COOKIE = "ludoteca_lang";

const IN_PAGE = typeof document !== "undefined";

function cookieLanguage() {
  if (!IN_PAGE) return null;
  const m = document.cookie.match(/(?:^|;\s*)ludoteca_lang=([a-z]{2})/);
  return m && LANGUAGES.includes(m[1]) ? m[1] : null;
}

function browserLanguage() {
  if (typeof navigator === "undefined") return null;
  for (const tag of navigator.languages || [navigator.language || ""]) {
    const code = String(tag).toLowerCase().slice(0, 2);
    if (LANGUAGES.includes(code)) return code;
  }
  return null;
}

/** A language the address asks for (?lang=it, as the switch's links and the rules pages have it): it
 * sticks, like a choice made with the switch. */
function queryLanguage() {
  if (!IN_PAGE) return null;
  const code = new URLSearchParams(location.search).get("lang");
  if (!code || !LANGUAGES.includes(code.toLowerCase())) return null;
  remember(code.toLowerCase());
  return code.toLowerCase();
}

function remember(lang) {
  document.cookie = `${COOKIE}=${lang}; path=/; max-age=${365 * 24 * 3600}; SameSite=Lax`;
}

/** The language of this page: ?lang=, else the switch's cookie, else the browser's preference, else English. */
export const LANG = queryLanguage() || cookieLanguage() || browserLanguage() || LANGUAGES[0];

async function loadCatalog(lang) {
  if (lang === LANGUAGES[0] || !IN_PAGE) return {};
  try {
    const res = await fetch(`/i18n/${lang}.json`);
    if (!res.ok) return {};
    return (await res.json()) || {};
  } catch {
    return {};
  }
}

const OPS = {
  "*": (a, b) => a * b, "/": (a, b) => Math.trunc(a / b), "%": (a, b) => a % b, "+": (a, b) => a + b,
  "-": (a, b) => a - b, "<": (a, b) => +(a < b), ">": (a, b) => +(a > b), "<=": (a, b) => +(a <= b),
  ">=": (a, b) => +(a >= b), "==": (a, b) => +(a === b), "!=": (a, b) => +(a !== b),
  "&&": (a, b) => +(a && b), "||": (a, b) => +(a || b),
};
const PRECEDENCE = {"*": 6, "/": 6, "%": 6, "+": 5, "-": 5, "<": 4, ">": 4, "<=": 4, ">=": 4, "==": 3, "!=": 3,
  "&&": 2, "||": 1};

/** A catalog's plural rule (the gettext expression of its Plural-Forms header, which Babel writes from the
 * CLDR rules, e.g. "(n != 1)") as a function count -> index of the form; read without eval (the pages'
 * Content-Security-Policy forbids it). A rule that does not read gives English's. */
export function pluralRule(expr) {
  const tokens = String(expr).match(/\d+|n|&&|\|\||[=!<>]=|[<>?:()%!*/+-]/g) || [];
  let i = 0;
  const fail = () => { throw new Error(`plural rule: ${expr}`); };
  const primary = () => {
    const tk = tokens[i++];
    if (tk === "(") { const v = ternary(); if (tokens[i++] !== ")") fail(); return v; }
    if (tk === "!") { const v = primary(); return (n) => +!v(n); }
    if (tk === "n") return (n) => n;
    if (/^\d+$/.test(tk || "")) { const k = Number(tk); return () => k; }
    return fail();
  };
  const binary = (min) => {
    let left = primary();
    while (Object.hasOwn(PRECEDENCE, tokens[i] || "") && PRECEDENCE[tokens[i]] >= min) {
      const op = tokens[i++];
      const l = left, r = binary(PRECEDENCE[op] + 1);
      left = (n) => OPS[op](l(n), r(n));
    }
    return left;
  };
  const ternary = () => {
    const cond = binary(1);
    if (tokens[i] !== "?") return cond;
    i++;
    const a = ternary();
    if (tokens[i++] !== ":") fail();
    const b = ternary();
    return (n) => (cond(n) ? a(n) : b(n));
  };
  try {
    const rule = ternary();
    if (i !== tokens.length) fail();
    return (n) => Number(rule(Math.abs(Math.trunc(Number(n)))));
  } catch {
    return (n) => +(n !== 1);
  }
}

const CATALOG = await loadCatalog(LANG);
const MESSAGES = CATALOG.messages || {};
const PLURALS = CATALOG.plurals || {};
const PLURAL = pluralRule(CATALOG.plural || "(n != 1)");
if (IN_PAGE) document.documentElement.lang = LANG;

/** The text in the page's language: msgid is the English text; {name} placeholders take params. */
export function t(msgid, params = null) {
  const text = Object.hasOwn(MESSAGES, msgid) && MESSAGES[msgid] ? MESSAGES[msgid] : msgid;
  return params ? fill(text, params) : text;
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (all, name) => (Object.hasOwn(params, name) ? String(params[name]) : all));
}

/** The form of a text that suits the count n, like gettext's ngettext: the catalog's forms of the message
 * (its msgid_plural entry) chosen by the language's plural rule; English (or a message the catalog lacks):
 * singular when the rule says form 0, else plural. n is also a placeholder: {n}. */
export function tn(singular, plural, n, params = {}) {
  const index = PLURAL(n);
  const forms = Object.hasOwn(PLURALS, singular) ? PLURALS[singular] : null;
  const text = forms && forms[Math.min(index, forms.length - 1)] ? forms[Math.min(index, forms.length - 1)]
    : index === 0 ? singular : plural;
  return fill(text, {...params, n});
}

/** Remember a language (a cookie for a year, shared with the rules pages) and reload in it. */
export function setLanguage(lang) {
  if (!LANGUAGES.includes(lang)) return;
  remember(lang);
  const url = new URL(location.href);
  if (url.searchParams.has("lang")) {
    url.searchParams.delete("lang");
    location.replace(url.href);
  } else location.reload();
}

/** Attributes a page marks for translation: data-i18n-placeholder, data-i18n-title, data-i18n-aria-label
 * (the attribute's English value, or the data-i18n-… value when it has one, is the msgid). */
export const ATTRIBUTES = ["placeholder", "title", "aria-label"];

/** Translate a page's marked texts (scripts/i18n.py extracts them): every element with data-i18n gets
 * the translation of its text (or of the attribute's value when it has one; the element holds text
 * only), every data-i18n-<attribute> its attribute's; sets <html lang>. Run once per element. */
export function translatePage(root = document) {
  document.documentElement.lang = LANG;
  if (LANG === LANGUAGES[0]) return;
  for (const el of root.querySelectorAll("[data-i18n]")) {
    const msgid = el.getAttribute("data-i18n") || el.textContent.trim().replace(/\s+/g, " ");
    if (msgid) el.textContent = t(msgid);
  }
  for (const attr of ATTRIBUTES) {
    for (const el of root.querySelectorAll(`[data-i18n-${attr}]`)) {
      const msgid = el.getAttribute(`data-i18n-${attr}`) || el.getAttribute(attr) || "";
      if (msgid.trim()) el.setAttribute(attr, t(msgid.trim().replace(/\s+/g, " ")));
    }
  }
}

/** The language switch of a page's header: "English · Italiano", the current one marked; choosing the
 * other sets the cookie (shared with the rules pages) and reloads. */
export function languageSwitch() {
  const nav = document.createElement("nav");
  nav.className = "lang-switch";
  nav.setAttribute("aria-label", t("Language"));
  LANGUAGES.forEach((code, i) => {
    if (i) nav.append(" · ");
    const link = document.createElement("a");
    link.href = `?lang=${code}`;
    link.lang = code;
    link.textContent = LANGUAGE_NAMES[code];
    if (code === LANG) {
      link.className = "current";
      link.setAttribute("aria-current", "true");
    } else link.hreflang = code;
    link.addEventListener("click", (ev) => {
      ev.preventDefault();
      if (code !== LANG) setLanguage(code);
    });
    nav.append(link);
  });
  return nav;
}

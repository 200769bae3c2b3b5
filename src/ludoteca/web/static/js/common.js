// Shared helpers of the ludoteca browser client (no build step, no dependencies).

export const COLORS = ["#d7263d", "#1b6ca8", "#2a9d3f", "#f08a24", "#7b3fa0", "#159b9b"];
export const COLOR_NAMES = ["red", "blue", "green", "orange", "purple", "teal"];
export const SVGNS = "http://www.w3.org/2000/svg";

/** Create an SVG element with attributes, appended to parent if given. */
export function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "style") node.style.cssText = String(v); // CSSOM: allowed by the CSP, unlike style="…"
    else if (k === "onclick") node.addEventListener("click", v);
    else if (k === "title") {
      const t = document.createElementNS(SVGNS, "title");
      t.textContent = v;
      node.appendChild(t);
    } else node.setAttribute(k, String(v));
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** Create an HTML element: h("button", {class: "x", onclick: f}, "text", child...). */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else if (k === "style") node.style.cssText = String(v); // CSSOM: allowed by the CSP, unlike style="…"
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

export async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) throw new Error((data && data.message) || `${res.status} ${res.statusText}`);
  return data;
}

export function getName() {
  return localStorage.getItem("ludoteca.name") || "";
}

export function setName(name) {
  localStorage.setItem("ludoteca.name", name);
}

/** The seat token this browser holds for a table: {seat, token} or null. */
export function getSeat(tableId) {
  try {
    const v = JSON.parse(localStorage.getItem(`ludoteca.seat.${tableId}`) || "null");
    return v && typeof v.token === "string" ? v : null;
  } catch { return null; }
}

export function setSeat(tableId, seat, token) {
  localStorage.setItem(`ludoteca.seat.${tableId}`, JSON.stringify({seat, token}));
}

export function sameAction(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function key(x) {
  return Array.isArray(x) ? x.join(",") : String(x);
}

const DIE_PIPS = {
  1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
  4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
  6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
};

/** Draw a die at (x, y) of side s showing value (1-6 pips; anything else as text; null: blank). */
export function drawDie(parent, x, y, s, value, opts = {}) {
  const g = svg("g", {class: "die" + (opts.dim ? " dim" : ""), transform: `translate(${x},${y})`}, parent);
  svg("rect", {x: 0, y: 0, width: s, height: s, rx: s * 0.18, fill: opts.fill || "#fffdf5",
    stroke: opts.stroke || "#333", "stroke-width": Math.max(1.5, s * 0.04)}, g);
  if (typeof value === "number" && DIE_PIPS[value]) {
    for (const [dx, dy] of DIE_PIPS[value]) {
      svg("circle", {cx: s / 2 + dx * s * 0.27, cy: s / 2 + dy * s * 0.27, r: s * 0.085, fill: opts.pip || "#222"}, g);
    }
  } else if (value !== null && value !== undefined) {
    svg("text", {x: s / 2, y: s / 2, "text-anchor": "middle", "dominant-baseline": "central",
      "font-size": String(value).length > 1 ? s * 0.42 : s * 0.6, "font-weight": "bold", fill: "#222",
      text: String(value)}, g);
  }
  if (opts.label) {
    svg("text", {x: s / 2, y: s + 14, "text-anchor": "middle", "font-size": 12, fill: "#444", text: opts.label}, g);
  }
  return g;
}

/** A readable sentence for an action (canonical JSON) of any of the four games. */
export function describe(game, a, names = []) {
  const who = (s) => (s === "bank" ? "the bank" : names[s] || `player ${Number(s) + 1}`);
  const tri = (t) => `${t[0]},${t[1]} ${t[2]}`;
  const cell = (c) => `row ${c[0] + 1} col ${c[1] + 1}`;
  if (!a || typeof a !== "object") return String(a);
  if ("pass" in a) return "pass";
  if ("stop" in a) return "stop";
  if ("timeout" in a) return "the hourglass ran out";
  if (game === "exactly") {
    if ("roll" in a) return `rolls ${a.roll === "?" ? "?" : a.roll === 0 ? "0" : a.roll}`;
    if ("coin" in a) return `moves ${a.coin}¢ from ${who(a.from)} to ${who(a.to)}`;
  }
  if (game === "tri") {
    if ("place" in a) return `places on ${tri(a.place)}`;
    if ("expand" in a) return `expands to ${tri(a.expand)}`;
    if ("attack" in a) return `attacks ${tri(a.attack)}`;
    if ("teleport" in a && a.teleport.from) {
      return `moves the unit on ${tri([...a.teleport.square, a.teleport.from])} to ${tri(a.teleport.to)} (teleport)`;
    }
    if ("teleport" in a) return `teleports from square ${a.teleport.square.join(",")} to ${tri(a.teleport.to)}`;
    if ("card" in a) return `plays card +${a.card}`;
    if ("void" in a) return `empties ${tri(a.void)}`;
    if ("roll" in a) return `rolls ${a.roll}`;
    if ("income" in a) return `income die: ${a.income}`;
    if ("out" in a) return `${who(a.out)} is out`;
  }
  if (game === "tohm") {
    if ("roll" in a) return `rolls ${a.roll}`;
    if ("place" in a) return `places on ${cell(a.place)}`;
    if ("remove" in a) return `removes the token on ${cell(a.remove)}`;
    if ("move" in a) return `moves ${cell(a.move[0])} → ${cell(a.move[1])}`;
  }
  if (game === "exagon") {
    if ("deal" in a) return `deals tile ${a.deal}`;
    if ("place" in a) return `places tile ${a.place.tile} at ${a.place.at.join(",")} (rotation ${a.place.rot})`;
    if ("give" in a) return `gives tile ${a.give.tile} to ${who(a.give.to)}`;
  }
  return JSON.stringify(a);
}

export function seatName(seats, i) {
  const s = seats && seats[i];
  return (s && s.name) || `Seat ${i + 1}`;
}

export function resultText(result, seats) {
  if (!result) return "";
  const w = result.winners || [];
  const names = w.map((i) => seatName(seats, i));
  if (w.length === 1) return `${names[0]} wins!`;
  if (w.length === 0) return "Nobody wins.";
  return `Shared win: ${names.join(" and ")}`;
}

// Drawing a game's board with the game's own client, as every page does it: the client's render(ctx)
// into an <svg>, then the cells of the last move framed. (The guided game uses it; the table's
// renderBoard and the rules diagrams do the same steps.)
//
// The client's interface (render(ctx), phaseText, seatInfo, describe, EVENTS, ANNOUNCE, lastMoveCells, …)
// and ctx's fields: docs/architecture.md, "Adding a game" (the example: games/_example/client.js).
import {h, lastMoveCells, svg} from "./common.js";
import {t} from "./i18n.js";

/** Frames the cells ("r,c" keys, the client's data-cell) of the last move on a drawn board. */
export function markCells(root, cells) {
  for (const k of cells) {
    const cell = root.querySelector(`[data-cell="${CSS.escape(k)}"]`);
    if (!cell) continue;
    cell.classList.add("last-move");
    const b = cell.getBBox(); // a frame just inside the cell, drawn over it
    svg("rect", {x: b.x + 3, y: b.y + 3, width: Math.max(0, b.width - 6), height: Math.max(0, b.height - 6), rx: 6,
      class: "last-move-mark"}, cell);
  }
}

/** Draws the board of ``ctx`` with the game's client ``renderer`` and marks the last move of the log
 * ``entries`` (log entries as a table sends them: {i, seat, events}). */
/** On a phone the board scrolls sideways inside its frame (style.css). When the things the player may
 * tap now (a client marks them ``.legal``) fit in the frame's width but some are out of sight — say the
 * battle's cards appeared under the board while the frame was scrolled to the attacked triangle — scroll
 * so they all show; when they are spread wider than the frame, scroll only if none is in sight. */
export function revealTargets(board) {
  const frame = board.parentElement;
  if (!frame || frame.scrollWidth <= frame.clientWidth + 1) return;
  const boxes = [...board.querySelectorAll(".legal")].map((e) => e.getBoundingClientRect()).filter((r) => r.width);
  if (!boxes.length) return;
  const view = frame.getBoundingClientRect();
  const left = Math.min(...boxes.map((r) => r.left));
  const right = Math.max(...boxes.map((r) => r.right));
  const seen = (r) => r.left >= view.left - 1 && r.right <= view.right + 1;
  if (right - left <= view.width - 16 ? boxes.every(seen) : boxes.some(seen)) return;
  frame.scrollLeft += left - view.left - 8;
}

export function drawBoard(renderer, ctx, entries = []) {
  const board = ctx.svg;
  board.replaceChildren();
  if (ctx.controls) ctx.controls.replaceChildren();
  if (!renderer) {
    svg("text", {x: 20, y: 40, text: t("No board drawing for this game; use the move list below.")}, board);
    return;
  }
  try {
    renderer.render(ctx);
    markCells(board, lastMoveCells(renderer, entries.filter(Boolean)));
    revealTargets(board);
  } catch (e) {
    console.error(e);
    svg("text", {x: 20, y: 40, fill: "#c0392b", text: t("Drawing error: {message}", {message: e.message})}, board);
  }
}

// --- zoom: the board fits the width it has; a player zooms in for detail, with the buttons or
// two fingers on the board, and the board's frame then scrolls (style.css: #board-wrap.zoomed, --zoom) -------
const ZOOMS = [1, 1.5, 2, 3];
const MAX_ZOOM = 4;

/** Sets the zoom of the board in ``wrap`` (1: the whole board fits), keeping the point at the middle of the
 * frame (or the point ``at``, {x, y} in the frame's pixels) where it was. */
export function setZoom(wrap, zoom, at = null) {
  const old = Number(wrap.dataset.zoom) || 1;
  const z = Math.max(1, Math.min(MAX_ZOOM, zoom));
  if (Math.abs(z - old) < 0.01) return;
  const px = at ? at.x : wrap.clientWidth / 2, py = at ? at.y : wrap.clientHeight / 2;
  const fx = (wrap.scrollLeft + px) / Math.max(1, wrap.scrollWidth), fy = (wrap.scrollTop + py) / Math.max(1, wrap.scrollHeight);
  wrap.dataset.zoom = String(z);
  wrap.style.setProperty("--zoom", String(z));
  wrap.classList.toggle("zoomed", z > 1);
  wrap.scrollLeft = fx * wrap.scrollWidth - px;
  wrap.scrollTop = fy * wrap.scrollHeight - py;
  wrap.dispatchEvent(new CustomEvent("zoom", {detail: z}));
}

/** The zoom buttons of the board in ``wrap`` (a row of two 44-px buttons), and zooming by pinching it. */
export function zoomTools(wrap) {
  const step = (dir) => () => {
    const z = Number(wrap.dataset.zoom) || 1;
    const next = dir > 0 ? ZOOMS.find((x) => x > z + 0.01) || MAX_ZOOM : [...ZOOMS].reverse().find((x) => x < z - 0.01) || 1;
    setZoom(wrap, next);
  };
  const out = h("button", {type: "button", id: "zoom-out", class: "zoom-out", "aria-label": t("Zoom out"),
    title: t("Zoom out"), onclick: step(-1)}, "−");
  const inn = h("button", {type: "button", id: "zoom-in", class: "zoom-in", "aria-label": t("Zoom in"),
    title: t("Zoom in"), onclick: step(1)}, "+");
  const update = () => {
    const z = Number(wrap.dataset.zoom) || 1;
    out.disabled = z <= 1;
    inn.disabled = z >= MAX_ZOOM;
  };
  wrap.addEventListener("zoom", update);
  update();
  // two fingers on the board: pinch to zoom (one finger still taps and, when zoomed, scrolls the frame)
  let pinch = null;
  const spread = (ts) => Math.hypot(ts[0].clientX - ts[1].clientX, ts[0].clientY - ts[1].clientY);
  wrap.addEventListener("touchstart", (ev) => {
    if (ev.touches.length === 2) pinch = {d: spread(ev.touches), z: Number(wrap.dataset.zoom) || 1};
  }, {passive: true});
  wrap.addEventListener("touchmove", (ev) => {
    if (!pinch || ev.touches.length !== 2) return;
    ev.preventDefault();
    const r = wrap.getBoundingClientRect();
    const at = {x: (ev.touches[0].clientX + ev.touches[1].clientX) / 2 - r.left,
      y: (ev.touches[0].clientY + ev.touches[1].clientY) / 2 - r.top};
    setZoom(wrap, pinch.z * spread(ev.touches) / Math.max(1, pinch.d), at);
  }, {passive: false});
  const end = (ev) => { if (ev.touches.length < 2) pinch = null; };
  wrap.addEventListener("touchend", end);
  wrap.addEventListener("touchcancel", end);
  return h("div", {class: "zoom-tools", role: "group", "aria-label": t("Board size")}, out, inn);
}

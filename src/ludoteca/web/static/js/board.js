// Drawing a game's board with the game's own client, as every page does it: the client's render(ctx)
// into an <svg>, then the cells of the last move framed. (The guided game uses it; the table's
// renderBoard and the rules diagrams do the same steps.)
//
// ctx is what table.js context() builds: {svg, controls, pos, legal, you, seats, names, colors, ui, act,
// toMove, redraw, replay, status}.
import {lastMoveCells, svg} from "./common.js";
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

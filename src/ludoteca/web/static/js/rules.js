// The diagrams of a rules page (web/lobby/rules.py): each <svg class="rules-board" data-board="…"> is drawn by
// the game's own browser client (/games/<name>/client.js render(ctx)), as the table draws its board
// (table.js context()), from a real position the server read with the game's engine. The boards are
// pictures: nothing on them can be clicked, and nothing is sent anywhere.
import {markCells} from "/static/js/board.js";
import {COLORS, lastMoveCells, loadClient} from "/static/js/common.js";

const article = document.getElementById("rules");
const game = article ? article.dataset.game : null;
// the page's language is the server's choice (?lang=, the cookie, Accept-Language): i18n.js, loaded with
// the clients, guesses it again from the cookie and the browser; the page keeps the server's
if (article && article.dataset.lang) document.documentElement.lang = article.dataset.lang;
const boards = [...document.querySelectorAll("svg.rules-board[data-board]")];

function context(root, data) {
  const names = data.names || [];
  const pos = data.pos;
  return {
    svg: root, controls: null, pos, legal: data.legal || [], you: data.you ?? null,
    seats: names.map((name) => ({name, kind: "human", connected: true})), names, colors: COLORS,
    ui: {...(data.ui || {})}, act: () => {}, redraw: () => {}, replay: true,
    toMove: Number.isInteger(pos.to_move) ? pos.to_move : null, status: pos.phase === "over" ? "over" : "playing",
  };
}

/** Frames the cells of the move that led to this board, as the table marks the last move. */
function markLastMove(client, root, events) {
  if (!events || !events.length) return;
  markCells(root, lastMoveCells(client, [{events}]));
}

function draw(client, root) {
  root.replaceChildren();
  let data;
  try { data = JSON.parse(root.dataset.board); } catch { return; }
  try {
    client.render(context(root, data));
    markLastMove(client, root, data.events);
    root.removeAttribute("style"); // the table's sizing hints (--board-min-width) do not apply here
    root.dataset.drawn = "true";
  } catch (e) {
    console.error(e);
    root.dataset.drawn = "error";
  }
}

async function main() {
  if (!game || !boards.length) return;
  const client = await loadClient(game);
  if (!client || typeof client.render !== "function") return;
  const drawAll = () => { for (const root of boards) draw(client, root); };
  drawAll();
  document.body.classList.add("diagrams-drawn");
  // the clients lay a board out for phones below 600 px (style.css's phone block): redraw across it
  if (window.matchMedia) window.matchMedia("(max-width: 600px)").addEventListener("change", drawAll);
}

main();

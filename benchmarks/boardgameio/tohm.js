// TOHM for two to five players as a boardgame.io game: the rules of ../shared/RULES.md section 3,
// written for boardgame.io 0.50 so that ludoteca's server can be measured beside boardgame.io's
// with the same game (benchmarks/vs_boardgameio.py). The die is rolled by the server
// (ctx.random) at the start of each turn; the player to move sends one action of G.legal, in
// ludoteca's JSON form ({"place": [r, c]}, {"remove": [r, c]}, {"move": [[r, c], [r2, c2]]},
// {"pass": true}). Moves run on the server only (client: false), as ludoteca's do.
const { INVALID_MOVE } = require('boardgame.io/core');

const LAYOUT = [
  [3, 4, 5, 6, 4],
  [5, 6, 3, 4, 6],
  [4, 3, 6, 5, 3],
  [6, 5, 4, 3, 5],
  [5, 3, 6, 4, 4],
];
const AREA = { 2: [3, 3], 3: [3, 4], 4: [4, 4], 5: [5, 5] };
const TOKENS = 5;
const TROPHIES = 10;
const TURN_LIMIT = 1000;

function cells(G) {
  const out = [];
  for (let r = 0; r < G.rows; r++) for (let c = 0; c < G.cols; c++) out.push([r, c]);
  return out;
}

function legal(G, seat) {
  const all = cells(G);
  const full = all.filter(([r, c]) => G.board[r][c] !== null);
  const empty = all.filter(([r, c]) => G.board[r][c] === null);
  let actions = [];
  if (G.roll === 1) {
    actions = full.map((cell) => ({ remove: cell }));
  } else if (G.roll === 2) {
    for (const from of full) for (const to of empty) actions.push({ move: [from, to] });
  } else if (G.supply[seat] > 0) {
    actions = empty.filter(([r, c]) => G.layout[r][c] === G.roll).map((cell) => ({ place: cell }));
  }
  return actions.length ? actions : [{ pass: true }];
}

// The runs of three or more of one owner through (r, c), horizontally and vertically.
function runs(G, r, c) {
  const owner = G.board[r][c];
  const found = [];
  for (const [dr, dc] of [[0, 1], [1, 0]]) {
    const run = [[r, c]];
    for (const sign of [1, -1]) {
      let rr = r + sign * dr, cc = c + sign * dc;
      while (rr >= 0 && rr < G.rows && cc >= 0 && cc < G.cols && G.board[rr][cc] === owner) {
        run.push([rr, cc]);
        rr += sign * dr;
        cc += sign * dc;
      }
    }
    if (run.length >= 3) found.push(run);
  }
  return found;
}

function score(G, r, c) {
  const owner = G.board[r][c];
  const found = runs(G, r, c);
  if (!found.length) return;
  const back = new Set();
  for (const run of found) {
    for (const [rr, cc] of run) back.add(rr * G.cols + cc);
    if (G.trophies_left > 0) {
      G.trophies[owner] += 1;
      G.trophies_left -= 1;
    }
  }
  for (const k of back) {
    G.board[Math.floor(k / G.cols)][k % G.cols] = null;
    G.supply[owner] += 1;
  }
}

const TOHM = {
  name: 'tohm',
  minPlayers: 2,
  maxPlayers: 5,
  setup: ({ ctx }) => {
    const [rows, cols] = AREA[ctx.numPlayers];
    return {
      players: ctx.numPlayers, rows, cols,
      layout: LAYOUT.slice(0, rows).map((row) => row.slice(0, cols)),
      board: Array.from({ length: rows }, () => Array(cols).fill(null)),
      supply: Array(ctx.numPlayers).fill(TOKENS), trophies: Array(ctx.numPlayers).fill(0),
      trophies_left: TROPHIES, roll: null, turn: 0, legal: [],
    };
  },
  turn: {
    onBegin: ({ G, ctx, random }) => {
      G.roll = random.D6();
      G.legal = legal(G, Number(ctx.currentPlayer));
    },
  },
  moves: {
    act: {
      client: false,
      move: ({ G, ctx, events }, action) => {
        const text = JSON.stringify(action);
        if (!G.legal.some((a) => JSON.stringify(a) === text)) return INVALID_MOVE;
        const seat = Number(ctx.currentPlayer);
        if (action.place) {
          const [r, c] = action.place;
          G.board[r][c] = seat;
          G.supply[seat] -= 1;
          score(G, r, c);
        } else if (action.remove) {
          const [r, c] = action.remove;
          G.supply[G.board[r][c]] += 1;
          G.board[r][c] = null;
        } else if (action.move) {
          const [[r, c], [r2, c2]] = action.move;
          G.board[r2][c2] = G.board[r][c];
          G.board[r][c] = null;
          score(G, r2, c2);
        }
        G.turn += 1;
        G.legal = [];
        events.endTurn();
      },
    },
  },
  endIf: ({ G }) => {
    if (G.trophies_left > 0 && G.turn < TURN_LIMIT) return undefined;
    const best = Math.max(...G.trophies);
    return { winners: G.trophies.flatMap((t, i) => (t === best ? [String(i)] : [])) };
  },
};

module.exports = { TOHM };

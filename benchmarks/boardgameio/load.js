// The load of benchmarks/server_load.py against boardgame.io's server: TABLES two-player matches,
// two socket.io clients each, every client answering its turn after a random think time (uniform
// in [0, 2 * think]) with a random legal action. Protocol with the measuring process (stdin and
// stdout, one JSON line each): prints {"started": N} once every match is under way, reads
// {"schedule": [[start, think], ...], "stop_at": T}, plays, prints {"samples", "peer", "errors",
// "games", "cpu"} (wall time sent, seconds to the sender's update / to the opponent's).
const { io } = require('socket.io-client');
const readline = require('readline');

const [base, tablesArg, thinkArg, seedArg] = process.argv.slice(2);
const TABLES = Number(tablesArg);
let schedule = [[0, Number(thinkArg)]];
let stopAt = Infinity;
let seed = Number(seedArg) || 1;
function random() { // mulberry32: reproducible think times and choices
  seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const now = () => Date.now() / 1000;
const perf = () => performance.now() / 1000;
function think() {
  let value = schedule[0][1];
  for (const [start, t] of schedule) if (now() >= start) value = t;
  return value;
}
const stats = { samples: [], peer: [], errors: {}, games: 0 };
const started = new Set();
function error(name) { stats.errors[name] = (stats.errors[name] || 0) + 1; }

async function post(path, body) {
  const res = await fetch(`http://${base}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return res.json();
}

function playMatch(matchID, creds) {
  return new Promise((resolve) => {
    const pending = { at: null };  // the last action sent at this match: [stateID, wall, perf, seat]
    let over = false;
    const sockets = [];
    const finish = (value) => {
      if (over) return;
      over = true;
      for (const s of sockets) s.close();
      resolve(value);
    };
    for (const seat of [0, 1]) {
      const socket = io(`http://${base}/tohm`, { transports: ['websocket'], forceNew: true });
      sockets.push(socket);
      let sent = null;
      let busy = false;
      const onState = (state) => {
        if (!state) return;
        const t = perf();
        const sid = state._stateID;
        if (pending.at && pending.at[3] !== seat && sid > pending.at[0]) {
          stats.peer.push([pending.at[1], t - pending.at[2]]);
          pending.at = null;
        }
        if (sent && sid > sent[0]) {
          stats.samples.push([sent[1], t - sent[2]]);
          sent = null;
        }
        if (state.ctx.gameover) { finish(true); return; }
        started.add(matchID);
        if (state.ctx.currentPlayer === String(seat) && !busy && state.G.legal.length) {
          busy = true;
          const wait = think();
          setTimeout(() => {
            busy = false;
            if (now() >= stopAt) return;
            const action = state.G.legal[Math.floor(random() * state.G.legal.length)];
            sent = [sid, now(), perf()];
            pending.at = [sid, sent[1], sent[2], seat];
            socket.emit('update', {
              type: 'MAKE_MOVE',
              payload: { type: 'act', args: [action], playerID: String(seat), credentials: creds[seat] },
            }, sid, matchID, String(seat));
          }, wait > 0 ? random() * 2 * wait * 1000 : 0);
        }
      };
      socket.on('connect', () => socket.emit('sync', matchID, String(seat), creds[seat], 2));
      socket.on('sync', (_id, info) => onState(info && info.state));
      socket.on('update', (_id, state) => onState(state));
      socket.on('connect_error', () => { error('client:connect'); finish(false); });
    }
    const check = setInterval(() => {
      if (now() >= stopAt) { clearInterval(check); finish(false); }
    }, 200);
  });
}

async function tableLoop() {
  while (now() < stopAt) {
    try {
      const { matchID } = await post('/games/tohm/create', { numPlayers: 2 });
      const creds = [];
      for (const seat of [0, 1]) {
        const joined = await post(`/games/tohm/${matchID}/join`, { playerID: String(seat), playerName: `bench${seat}` });
        creds.push(joined.playerCredentials);
      }
      if (await playMatch(matchID, creds)) stats.games += 1;
    } catch (e) {
      error(`client:${e.name}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function main() {
  const loops = [];
  for (let i = 0; i < TABLES; i++) {
    loops.push(tableLoop());
    if (i % 20 === 19) await new Promise((r) => setTimeout(r, 50));
  }
  const deadline = now() + 240;
  while (started.size < TABLES && now() < deadline) await new Promise((r) => setTimeout(r, 100));
  console.log(JSON.stringify({ started: started.size }));
  const rl = readline.createInterface({ input: process.stdin });
  const line = await new Promise((r) => rl.once('line', r));
  const plan = JSON.parse(line);
  schedule = plan.schedule;
  stopAt = plan.stop_at;
  await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, (stopAt - now() + 5) * 1000))]);
  const cpu = process.cpuUsage();
  // exit once the (large) line is written: process.exit() would cut a pipe's pending output
  process.stdout.write(JSON.stringify({ ...stats, cpu: (cpu.user + cpu.system) / 1e6 }) + '\n',
    () => process.exit(0));
}
main();

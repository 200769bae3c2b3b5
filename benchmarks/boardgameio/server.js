// boardgame.io's server for the side-by-side benchmark: node server.js PORT memory|flatfile [DIR]
const { Server, FlatFile } = require('boardgame.io/server');
const { TOHM } = require('./tohm');

const [port, storage, dir] = process.argv.slice(2);
const db = storage === 'flatfile' ? new FlatFile({ dir, logging: false }) : undefined;
const server = Server({ games: [TOHM], db, origins: [/.*/] });
server.run(Number(port)).then(({ appServer }) => {
  // koa-socket-2 (boardgame.io's socket.io glue) builds the HTTP server with the Koa callback of
  // the moment it is attached, before run() adds the lobby's routes: with today's Koa the lobby
  // API answers 404. Serving the Koa callback again fixes it; the benchmark's clients use
  // socket.io's websocket transport only (its upgrade requests do not go through 'request').
  appServer.removeAllListeners('request');
  appServer.on('request', server.app.callback());
  console.log(`listening ${port}`);
});

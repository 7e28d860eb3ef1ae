// Node.js WebSocket echo peer for the kiln benchmark suite: the `ws` package on the `http`
// module, one process. GET /ws/echo echoes every text and binary message as sent, with
// permessage-deflate when the client offers it; GET /pong answers the readiness probe.
'use strict';

const http = require('http');
const { WebSocketServer } = require('ws');

const port = Number(process.env.PORT || 8080);

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/pong') {
    res.writeHead(200, { Server: 'node', 'Content-Type': 'text/plain', 'Content-Length': 4 });
    res.end('PONG');
  } else {
    res.writeHead(404, { 'Content-Length': 0 });
    res.end();
  }
});

// perMessageDeflate: negotiated only when offered; the threshold 0 compresses every echo, as
// kiln and the Go peer do. Pings and close frames are answered by `ws` itself.
const wss = new WebSocketServer({
  server,
  path: '/ws/echo',
  maxPayload: 1 << 20,
  perMessageDeflate: { threshold: 0 },
});

wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  ws.on('error', () => ws.terminate());
});

server.listen(port, '127.0.0.1');

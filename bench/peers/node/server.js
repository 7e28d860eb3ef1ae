// Node.js `http` peer for the kiln benchmark suite: one process, no dependencies.
'use strict';

const http = require('http');
const fs = require('fs');
const path = require('path');

const port = Number(process.env.PORT || 8080);
const staticDir = process.env.STATIC_DIR || 'static';

function send(res, type, body) {
  res.writeHead(200, { Server: 'node', 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function bigtable(query) {
  const rows = Math.min(Number(query.get('rows')) || 1000, 10000);
  const cols = Math.min(Number(query.get('cols')) || 50, 1000);
  const parts = ['<table>'];
  for (let r = 0; r < rows; r++) {
    parts.push('<tr>');
    for (let c = 1; c <= cols; c++) parts.push('<td>', String(c), '</td>');
    parts.push('</tr>');
  }
  parts.push('</table>');
  return parts.join('');
}

function serveStatic(res, name) {
  const root = path.resolve(staticDir);
  const file = path.resolve(root, '.' + path.sep + name);
  if (!file.startsWith(root + path.sep)) {
    res.writeHead(404, { Server: 'node', 'Content-Length': 0 });
    return res.end();
  }
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404, { Server: 'node', 'Content-Length': 0 });
      return res.end();
    }
    send(res, 'text/plain', data);
  });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  switch (url.pathname) {
    case '/pong': return send(res, 'text/plain', 'PONG');
    case '/hello': return send(res, 'text/plain', 'Hello World!');
    case '/plaintext': return send(res, 'text/plain', 'Hello, World!');
    case '/json': return send(res, 'application/json', JSON.stringify({ message: 'Hello, World!' }));
    case '/bigtable': return send(res, 'text/html; charset=utf-8', bigtable(url.searchParams));
  }
  if (url.pathname.startsWith('/static/')) return serveStatic(res, url.pathname.slice('/static/'.length));
  res.writeHead(404, { Server: 'node', 'Content-Length': 0 });
  res.end();
});

server.keepAliveTimeout = 65000;
server.listen(port, '127.0.0.1', 4096);
process.on('SIGTERM', () => process.exit(0));

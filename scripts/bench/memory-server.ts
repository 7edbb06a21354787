// The hit limit for a Node front door: a bare node:http server answering every GET with the same
// bytes from memory and the headers an image answer carries. One process, no routing, no log.
// env: PORT, FILE (the bytes), CONTENT_TYPE.
import fs from 'node:fs';
import http from 'node:http';

const bytes = fs.readFileSync(process.env.FILE ?? '');
const headers = {
  'Content-Type': process.env.CONTENT_TYPE ?? 'image/webp',
  'Content-Length': String(bytes.length),
  ETag: '"bench"',
  'Cache-Control': 'public, max-age=31536000, immutable',
};
const server = http.createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(bytes);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.send?.({ type: 'listening' }));
process.on('SIGTERM', () => process.exit(0));

// Express baselines: `express.static` over a folder holding the same derivative bytes the service
// serves from cache, and a hello-world route. env: PORT, STATIC_DIR.
import express from 'express';
import http from 'node:http';
import path from 'node:path';

const app = express();
app.disable('x-powered-by');
app.get('/hello', (_req, res) => {
  res.send('Hello World!');
});
app.use('/static', express.static(path.resolve(process.env.STATIC_DIR ?? '.'), { maxAge: '1y', immutable: true }));
const server = http.createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.send?.({ type: 'listening' }));
process.on('SIGTERM', () => process.exit(0));

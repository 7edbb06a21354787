// "Raw sharp": the same work as the service, in one process, with nothing around it — the practical
// limit on this machine. A bare node:http server so the same load generator measures it:
//   GET  /t/<file>?w=&f=&q=&fit=…  reads the original from disk, renders it with the service's own
//        pipeline (src/imaging/pipeline.ts, same plan, same encoder settings) and sends the bytes;
//   POST /upload                    multipart like the service: sharp metadata + file write.
// env: PORT, PHOTOS_DIR, UPLOAD_DIR, WEBP_EFFORT/AVIF_EFFORT (read as the service reads them),
//      RAW_SHARP_CONCURRENCY (libvips threads; default sharp's own = cores).
import Busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadConfig } from '../../src/config.js';
import { resolvePlan, type TransformRequest } from '../../src/imaging/params.js';
import { renderDerivative } from '../../src/imaging/pipeline.js';

const config = loadConfig(process.env);
const photosDir = path.resolve(process.env.PHOTOS_DIR ?? '.');
const uploadDir = path.resolve(process.env.UPLOAD_DIR ?? path.join(os.tmpdir(), 'raw-uploads'));
const settings = { avifEffort: config.avifEffort, webpEffort: config.webpEffort, maxInputPixels: config.maxInputPixels };
if (process.env.RAW_SHARP_CONCURRENCY) sharp.concurrency(Number(process.env.RAW_SHARP_CONCURRENCY));

function num(v: string | null): number | undefined {
  return v === null ? undefined : Number(v);
}

async function transform(url: URL, res: http.ServerResponse) {
  const file = path.join(photosDir, path.basename(decodeURIComponent(url.pathname.slice(3))));
  const q = url.searchParams;
  const request: TransformRequest = { w: num(q.get('w')), h: num(q.get('h')), q: num(q.get('q')), f: (q.get('f') ?? undefined) as TransformRequest['f'], fit: (q.get('fit') ?? undefined) as TransformRequest['fit'] };
  const { plan } = resolvePlan('B', request, { accept: '', sourceFormat: 'jpeg', preferWebpWhenUnsure: false });
  const source = await fs.readFile(file);
  const out = await renderDerivative(source, plan, settings);
  res.writeHead(200, { 'Content-Type': out.contentType, 'Content-Length': out.buffer.length });
  res.end(out.buffer);
}

function upload(req: http.IncomingMessage, res: http.ServerResponse) {
  const bb = Busboy({ headers: req.headers, limits: { files: 1, fileSize: 20 * 1024 * 1024 } });
  let done: Promise<{ width?: number; height?: number; format?: string; bytes: number }> | null = null;
  bb.on('file', (_name, stream) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    done = new Promise((resolve, reject) => {
      stream.on('end', () => {
        const bytes = Buffer.concat(chunks);
        sharp(bytes)
          .metadata()
          .then(async (meta) => {
            await fs.writeFile(path.join(uploadDir, `${randomUUID()}.${meta.format === 'jpeg' ? 'jpg' : meta.format}`), bytes);
            resolve({ width: meta.width, height: meta.height, format: meta.format, bytes: bytes.length });
          }, reject);
      });
      stream.on('error', reject);
    });
  });
  bb.on('close', () => {
    if (!done) {
      res.writeHead(400).end();
      return;
    }
    done.then(
      (info) => {
        const body = JSON.stringify(info);
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(415).end(String(err));
      },
    );
  });
  req.pipe(bb);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://raw');
  if (req.method === 'GET' && url.pathname.startsWith('/t/')) {
    transform(url, res).catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  } else if (req.method === 'POST' && url.pathname === '/upload') {
    upload(req, res);
  } else if (url.pathname === '/health') {
    res.end('ok');
  } else {
    res.writeHead(404).end();
  }
});
server.keepAliveTimeout = 65_000;
await fs.mkdir(uploadDir, { recursive: true });
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => process.send?.({ type: 'listening' }));
process.on('SIGTERM', () => process.exit(0));

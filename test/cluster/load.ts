// The client host: mixed load (uploads, transforms, srcsets) through every front door for a fixed
// time. Open loop, as independent callers: each door gets `perDoorPerSecond` new requests a second
// whether earlier ones were answered or not (a stuck door does not slow the load down), up to
// `maxInFlight` per door. A request not answered within `answerLimitMs`
// is abandoned and recorded with status 0 (a caller left waiting). Prints "started <epoch ms>" when
// it begins, then one JSON line (LoadResult) when every request has ended.
// Usage: node load.js '<json Options>'
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { Acknowledgements, LoadResult, RequestRecord } from './load-report.js';

interface Options {
  doors: string[];
  key: string;
  durationMs: number;
  perDoorPerSecond: number;
  maxInFlight: number;
  answerLimitMs: number;
  /** Distinguishes this run's public ids from earlier scenarios'. */
  tag: string;
  /** Long renders (AVIF from a large noisy original) sent `atMs` after the start: jobs that are running when a fault comes. */
  heavy?: { atMs: number; count: number };
}

const options = JSON.parse(process.argv[2]) as Options;
const records: RequestRecord[] = [];
const ack: Acknowledgements = { uploads: [], derivatives: [] };
let sequence = 0;

async function call(door: number, op: RequestRecord['op'], path: string, init: RequestInit = {}): Promise<unknown> {
  const start = Date.now();
  const record: RequestRecord = { op, door, start, end: start, status: 0 };
  try {
    const res = await fetch(options.doors[door] + path, { ...init, headers: { 'X-API-Key': options.key }, signal: AbortSignal.timeout(options.answerLimitMs) });
    const text = await res.text();
    record.status = res.status;
    if (res.headers.get('retry-after')) record.retryAfter = res.headers.get('retry-after')!;
    return res.status === 200 ? JSON.parse(text) : null;
  } catch {
    return null; // no answer: status stays 0
  } finally {
    record.end = Date.now();
    records.push(record);
  }
}

async function uploadOne(door: number): Promise<void> {
  const n = sequence++;
  const bytes = await sharp({ create: { width: 320 + (n % 40), height: 240, channels: 3, background: { r: (n * 37) % 256, g: (n * 91) % 256, b: (n * 53) % 256 } } }).jpeg({ quality: 80 }).toBuffer();
  const publicId = `${options.tag}-${n}`;
  const form = new FormData();
  form.append('public_id', publicId);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `${publicId}.jpg`);
  const body = (await call(door, 'upload', '/cdn/upload', { method: 'POST', body: form })) as { imageId: string; public_url: string } | null;
  if (body) ack.uploads.push({ imageId: body.imageId, publicId, sha256: createHash('sha256').update(bytes).digest('hex'), url: body.public_url });
}

async function transformOne(door: number): Promise<void> {
  const image = ack.uploads[Math.floor(Math.random() * ack.uploads.length)];
  const w = 16 + 8 * Math.floor(Math.random() * 36);
  const f = ['webp', 'jpeg', 'avif'][Math.floor(Math.random() * 3)];
  const body = (await call(door, 'transform', `/transform?src=${encodeURIComponent(image.url)}&w=${w}&f=${f}`)) as { public_url: string } | null;
  if (body) ack.derivatives.push(body.public_url);
}

async function srcsetOne(door: number): Promise<void> {
  const image = ack.uploads[Math.floor(Math.random() * ack.uploads.length)];
  await call(door, 'srcset', `/generate/srcset?src=${encodeURIComponent(image.url)}&w=100,200,300`);
}

async function heavyRenders(door: number, source: string, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const body = (await call(door, 'transform', `/transform?src=${encodeURIComponent(source)}&w=${2000 + 8 * i}&f=avif&q=80`)) as { public_url: string } | null;
      if (body) ack.derivatives.push(body.public_url);
    }),
  );
}

let heavySource: string | null = null;
if (options.heavy) {
  const bytes = await sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 120, g: 120, b: 120 }, noise: { type: 'gaussian', mean: 128, sigma: 40 } } }).jpeg({ quality: 90 }).toBuffer();
  const publicId = `${options.tag}-heavy`;
  const form = new FormData();
  form.append('public_id', publicId);
  form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `${publicId}.jpg`);
  const body = (await call(0, 'upload', '/cdn/upload', { method: 'POST', body: form })) as { imageId: string; public_url: string } | null;
  if (!body) throw new Error('the large original for the long renders was not accepted');
  ack.uploads.push({ imageId: body.imageId, publicId, sha256: createHash('sha256').update(bytes).digest('hex'), url: body.public_url });
  heavySource = body.public_url;
}

const started = Date.now();
process.stdout.write(`started ${started}\n`);
async function oneRequest(door: number): Promise<void> {
  const roll = Math.random();
  if (ack.uploads.length < 2 || roll < 0.35) await uploadOne(door);
  else if (roll < 0.85) await transformOne(door);
  else await srcsetOne(door);
}

const running: Promise<void>[] = [];
if (options.heavy && heavySource) {
  const { atMs, count } = options.heavy;
  const source = heavySource;
  running.push(new Promise((r) => setTimeout(r, atMs)).then(() => Promise.all([heavyRenders(0, source, Math.ceil(count / 2)), heavyRenders(1, source, Math.floor(count / 2))])).then(() => undefined));
}
const inFlight = options.doors.map(() => 0);
for (let tick = 0; Date.now() - started < options.durationMs; tick++) {
  for (let door = 0; door < options.doors.length; door++) {
    if (inFlight[door] >= options.maxInFlight) continue;
    inFlight[door]++;
    running.push(oneRequest(door).finally(() => inFlight[door]--));
  }
  await new Promise((r) => setTimeout(r, Math.max(0, started + ((tick + 1) * 1000) / options.perDoorPerSecond - Date.now())));
}
await Promise.all(running);
const result: LoadResult = { records, ack };
process.stdout.write(JSON.stringify(result) + '\n');

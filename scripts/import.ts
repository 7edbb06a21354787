// `npm run import -- <folder | file-of-urls> --key <k> [--project <name>] [--concurrency N]
//   [--public-id-from path|name] [--base-url URL] [--report FILE] [--retries N]`
// Uploads every image through the public API (POST /cdn/upload) with bounded concurrency, retries
// with backoff on 429/5xx/network errors (honouring Retry-After), and resume: images already on
// the server with the same public id and checksum are skipped. Ends with a summary and a JSON
// report of failures; exits 1 when anything failed.
import cliProgress from 'cli-progress';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { safeFetch } from '../src/net/safe-fetch.js';

const IMAGE_EXT = /\.(jpe?g|png|webp|avif)$/i;
const USAGE = 'usage: npm run import -- <folder | file-of-urls> --key <key> [--project <name>] [--concurrency N] [--public-id-from path|name] [--base-url URL] [--report FILE]';

interface Item {
  source: string; // file path or URL
  publicId: string;
}

interface Failure {
  source: string;
  publicId: string;
  status: number | null;
  reason: string;
  attempts: number;
}

function publicIdFor(relative: string, mode: 'path' | 'name'): string {
  const noExt = relative.replace(/\.[^./]+$/, '');
  const chosen = mode === 'name' ? path.basename(noExt) : noExt.split(path.sep).join('/');
  return chosen
    .split('/')
    .map((seg) => seg.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '') || 'x')
    .join('/')
    .slice(0, 200);
}

function listFolder(root: string, mode: 'path' | 'name'): Item[] {
  const out: Item[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (IMAGE_EXT.test(entry.name)) out.push({ source: full, publicId: publicIdFor(path.relative(root, full), mode) });
    }
  };
  walk(root);
  return out;
}

function listUrls(file: string, mode: 'path' | 'name'): Item[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((url) => {
      const u = new URL(url);
      return { source: url, publicId: publicIdFor(decodeURIComponent(u.pathname.replace(/^\/+/, '')) || u.hostname, mode) };
    });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterMs: number | null) {
    super(message);
  }
}

function retryable(err: unknown): boolean {
  if (err instanceof HttpError) return err.status === 429 || err.status >= 500;
  return !(err instanceof Error && err.name === 'SafeFetchError' && (err as { status?: number }).status !== 502 && (err as { status?: number }).status !== 504);
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      project: { type: 'string' },
      concurrency: { type: 'string', default: '4' },
      'public-id-from': { type: 'string', default: 'path' },
      'base-url': { type: 'string' },
      report: { type: 'string', default: 'import-report.json' },
      retries: { type: 'string', default: '5' },
      quiet: { type: 'boolean', default: false },
    },
  });
  const input = positionals[0];
  if (!input || !values.key) throw new Error(USAGE);
  const mode = values['public-id-from'] === 'name' ? 'name' : 'path';
  const runtimeFile = path.resolve(process.env.DATA_DIR ?? './data', 'runtime.json');
  const baseUrl = (values['base-url'] ?? process.env.PICTOR_URL ?? (fs.existsSync(runtimeFile) ? (JSON.parse(fs.readFileSync(runtimeFile, 'utf8')) as { baseUrl: string }).baseUrl : 'http://localhost:8080')).replace(/\/+$/, '');
  const concurrency = Math.max(1, Math.min(64, Number(values.concurrency)));
  const maxRetries = Math.max(0, Number(values.retries));
  const headers = { 'X-API-Key': values.key, 'X-Pictor-Priority': 'bulk' };
  const items = fs.statSync(input).isDirectory() ? listFolder(input, mode) : listUrls(input, mode);

  // Resume: what the server already has (public id → checksum; public ids are unique per user).
  const existing = new Map<string, string>();
  let cursor: string | null = null;
  do {
    const qs = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const res = await fetch(`${baseUrl}/cdn/images?${qs}`, { headers });
    if (res.status === 401) throw new Error('the API key was refused (401)');
    if (!res.ok) throw new Error(`listing existing images failed: HTTP ${res.status}`);
    const page = (await res.json()) as { images: { public_id: string; checksum?: string }[]; next_cursor: string | null };
    for (const img of page.images) if (img.checksum) existing.set(img.public_id, img.checksum);
    cursor = page.next_cursor;
  } while (cursor);

  const bar = new cliProgress.SingleBar(
    { format: 'import |{bar}| {value}/{total} done {done} failed {failed} skipped {skipped} | {rate}/s | ETA {eta_formatted}', noTTYOutput: !values.quiet, notTTYSchedule: 2000, etaBuffer: 50 },
    cliProgress.Presets.shades_classic,
  );
  const counts = { done: 0, failed: 0, skipped: 0 };
  const failures: Failure[] = [];
  const started = Date.now();
  if (!values.quiet) bar.start(items.length, 0, { ...counts, rate: '0.0' });
  const tick = () => {
    const secs = (Date.now() - started) / 1000;
    if (!values.quiet) bar.increment({ ...counts, rate: ((counts.done + counts.skipped) / Math.max(secs, 0.001)).toFixed(1) });
  };

  const uploadOne = async (item: Item) => {
    let attempts = 0;
    for (;;) {
      attempts++;
      try {
        const bytes = item.source.startsWith('http://') || item.source.startsWith('https://')
          ? (await safeFetch(item.source, { maxBytes: 100 * 1024 * 1024, allowedContentTypes: ['image/'] })).buffer
          : fs.readFileSync(item.source);
        const checksum = createHash('sha256').update(bytes).digest('hex');
        if (existing.get(item.publicId) === checksum) {
          counts.skipped++;
          return;
        }
        const form = new FormData();
        form.append('public_id', item.publicId);
        if (values.project) form.append('project', values.project);
        form.append('file', new Blob([new Uint8Array(bytes)]), path.basename(item.publicId) + path.extname(new URL(item.source, 'file:///').pathname));
        const res = await fetch(`${baseUrl}/cdn/upload`, { method: 'POST', body: form, headers });
        if (!res.ok) {
          const body = await res.text();
          const retryAfter = Number(res.headers.get('retry-after'));
          let detail = body;
          try {
            const parsed = JSON.parse(body) as { detail?: unknown };
            detail = typeof parsed.detail === 'string' ? parsed.detail : JSON.stringify(parsed.detail);
          } catch {
            /* keep text */
          }
          throw new HttpError(res.status, `HTTP ${res.status}: ${detail}`.slice(0, 500), Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null);
        }
        await res.arrayBuffer();
        counts.done++;
        return;
      } catch (err) {
        if (attempts <= maxRetries && retryable(err)) {
          const backoff = err instanceof HttpError && err.retryAfterMs ? err.retryAfterMs : Math.min(30_000, 250 * 2 ** (attempts - 1)) * (0.5 + Math.random());
          await sleep(backoff);
          continue;
        }
        counts.failed++;
        failures.push({
          source: item.source,
          publicId: item.publicId,
          status: err instanceof HttpError ? err.status : ((err as { status?: number }).status ?? null),
          reason: err instanceof Error ? err.message : String(err),
          attempts,
        });
        return;
      }
    }
  };

  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++];
        await uploadOne(item);
        tick();
      }
    }),
  );
  if (!values.quiet) bar.stop();
  const seconds = (Date.now() - started) / 1000;
  const summary = { total: items.length, ...counts, seconds: Number(seconds.toFixed(2)), files_per_second: Number(((counts.done + counts.skipped) / Math.max(seconds, 0.001)).toFixed(1)) };
  fs.writeFileSync(values.report!, JSON.stringify({ summary, failures }, null, 2));
  process.stdout.write(`imported ${counts.done}, skipped ${counts.skipped} (already there), failed ${counts.failed} of ${items.length} in ${summary.seconds} s (${summary.files_per_second} files/s); report: ${values.report}\n`);
  if (counts.failed > 0) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`import failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});

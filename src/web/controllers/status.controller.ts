import type { Request, Response } from 'express';
import { liveWorkers } from '../../jobs/worker-heartbeat.js';
import { adminCredentialOf, isAdminToken } from '../monitoring/admin-auth.js';
import type { WebDeps } from '../web-deps.js';

export const SERVICE_VERSION = '0.0.1';

export function rootController(deps: WebDeps) {
  return (_req: Request, res: Response) => {
    const base = deps.config.baseUrl;
    res.json({
      name: 'Pictor',
      description: 'Image delivery and transformation service with a passport-photo processor',
      version: SERVICE_VERSION,
      links: {
        health: `${base}/health`,
        plans: `${base}/plans`,
        passport_specs: `${base}/passport-photo/specs`,
        upload: `${base}/upload`,
        transform: `${base}/transform`,
        srcset: `${base}/generate/srcset`,
        cdn: deps.config.cdnUrl,
      },
    });
  };
}

async function timed(check: () => Promise<unknown>, timeoutMs = 2000): Promise<{ ok: boolean; latency_ms: number; error?: string; detail?: unknown }> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - start), ...(detail !== undefined ? { detail } : {}) };
  } catch (err) {
    return { ok: false, latency_ms: Math.round(performance.now() - start), error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

type CheckResult = Awaited<ReturnType<typeof timed>>;

/**
 * The storage probe writes and fsyncs a file: its result is reused for `cacheMs`, and callers
 * arriving while one runs share it, so /health cannot make the service fsync without bound.
 */
class CachedProbe {
  private last: { at: number; result: Promise<CheckResult> } | null = null;
  constructor(
    private readonly probe: () => Promise<CheckResult>,
    private readonly cacheMs: number,
  ) {}

  run(): Promise<CheckResult> {
    const now = Date.now();
    if (!this.last || now - this.last.at >= this.cacheMs) this.last = { at: now, result: this.probe() };
    return this.last.result;
  }
}

/**
 * GET /health. The public answer is status only: ok or failing per component. Latencies, worker
 * processes (host:pid) and error texts (which can name hosts and paths) are shown only with the
 * admin credential (ADMIN_TOKEN, as for /metrics).
 */
export function healthController(deps: WebDeps) {
  const storageProbe = new CachedProbe(() => timed(() => deps.storage.check()), deps.config.healthCacheMs);
  return async (req: Request, res: Response) => {
    const [redis, catalog, storage, workers] = await Promise.all([
      timed(() => deps.redis.ping().then(() => undefined)),
      timed(() => deps.catalog.ping()),
      storageProbe.run(),
      timed(async () => {
        const live = await liveWorkers(deps.redis);
        if (live.length === 0) throw new Error('no live worker process (none sent a heartbeat recently)');
        return { count: live.length, processes: live.map((w) => ({ id: w.id, queues: w.queues, concurrency: w.concurrency })) };
      }),
    ]);
    const checks: Record<string, CheckResult> = { redis, catalog, storage, worker: workers };
    const failing = Object.entries(checks).filter(([, c]) => !c.ok).map(([name]) => name);
    const admin = isAdminToken(adminCredentialOf(req), deps.config.adminToken);
    const shown = admin ? checks : Object.fromEntries(Object.entries(checks).map(([name, c]) => [name, { ok: c.ok }]));
    res.setHeader('Cache-Control', 'no-store');
    res.status(failing.length === 0 ? 200 : 503).json({ status: failing.length === 0 ? 'ok' : 'unhealthy', version: SERVICE_VERSION, failing, checks: shown });
  };
}

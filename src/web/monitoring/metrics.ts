// Prometheus metrics of the front door (prom-client), one registry per app so several apps in one
// process (tests) never collide. Served by GET /metrics together with the workers' job metrics,
// which the workers push through Redis (src/jobs/job-metrics.ts). Queue counts and worker memory
// are read from Redis at scrape time (render), so they are exact whenever Prometheus looks.
import cluster from 'node:cluster';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { workerMetricsText } from '../../jobs/job-metrics.js';
import { ALL_QUEUES } from '../../jobs/job-contract.js';
import { liveWorkers } from '../../jobs/worker-heartbeat.js';
import { clusterMetricsSource } from '../front-door-cluster.js';
import type { WebDeps } from '../web-deps.js';

/** BullMQ states reported per queue (completed/failed: as many as BullMQ keeps, see job-producer). */
export const JOB_STATES = ['waiting', 'prioritized', 'delayed', 'waiting-children', 'active', 'completed', 'failed'] as const;
/** States that make a queue's depth: work accepted and not yet started. */
const DEPTH_STATES = ['waiting', 'prioritized', 'delayed'] as const;

const BYTES_SERVED = Symbol('pictor.bytesServed');

/** Hit-path counts of one route not yet added to the counters. */
interface PendingHits {
  labels: { method: string; route: string; status_code: string };
  requests: number;
  cacheHits: number;
  bytes: number;
}

type RouteRequest = Request & { route?: { path?: unknown } };

/** The Express route pattern that handled a request (never the raw URL: bounded label values). */
export function routeLabel(req: Request, res: Response): string {
  const route = (req as RouteRequest).route;
  if (route && route.path !== undefined) {
    const pattern = Array.isArray(route.path) ? route.path.join('|') : String(route.path);
    return `${req.baseUrl ?? ''}${pattern}` || '/';
  }
  // A middleware mount (static files, a sub-app) that answered by itself.
  if (req.baseUrl) return `${req.baseUrl}/*`;
  return res.statusCode === 404 ? '(unmatched)' : '(middleware)';
}

export interface FrontDoorMetrics {
  registry: Registry;
  /** Counts every request when it finishes; mount before the routes. */
  middleware: (req: Request, res: Response, next: NextFunction) => void;
  /**
   * The same for a request the hit path answered with `bytes` of image under `route` (the route's
   * label, `cacheHit`: its X-Cache said HIT), when its response closed.
   */
  countHit: (res: ServerResponse, route: string, bytes: number, cacheHit: boolean, started: number) => void;
  /** Prometheus text of the front door plus the workers' pushed job metrics. */
  render(): Promise<{ contentType: string; body: string }>;
}

export function createFrontDoorMetrics(deps: WebDeps): FrontDoorMetrics {
  // This process's own metrics; in a front-door cluster they are summed over its processes.
  const registry = new Registry();
  // Gauges read from Redis at scrape time: the same for every process, so never summed.
  const scrapeRegistry = new Registry();
  // process_resident_memory_bytes, heap, event loop lag, GC… of the front door process. Event loop
  // lag is sampled every 100 ms, not prom-client's 10 ms: that timer woke an idle front door 100
  // times a second (~10 ms of CPU per second per process on a 2-core VM, ~1 % of every miss).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  const allProcesses = cluster.isWorker ? clusterMetricsSource(registry) : null;

  // The hit path's counts are summed per route in plain numbers and added to the counters below
  // when they are read (prom-client calls `collect` first): a hit costs no label hashing for them.
  const pendingHits = new Map<string, PendingHits>();
  const addPendingHits = () => {
    for (const [route, p] of pendingHits) {
      if (p.requests) requests.inc(p.labels, p.requests);
      if (p.cacheHits) cache.inc({ route, result: 'hit' }, p.cacheHits);
      if (p.bytes) bytesServed.inc({ route }, p.bytes);
      p.requests = p.cacheHits = p.bytes = 0;
    }
  };
  const labels = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'pictor_http_requests_total', help: 'HTTP requests by route pattern, method and status', labelNames: labels, registers: [registry], collect: addPendingHits });
  const duration = new Histogram({
    name: 'pictor_http_request_duration_seconds',
    help: 'HTTP request duration (until the response is sent) by route pattern, method and status',
    labelNames: labels,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const cache = new Counter({
    name: 'pictor_derivative_cache_total',
    help: 'Transform requests answered from an existing derivative (hit) or by a new job (miss), from X-Cache',
    labelNames: ['route', 'result'],
    registers: [registry],
    collect: addPendingHits,
  });
  const bytesServed = new Counter({ name: 'pictor_image_bytes_served_total', help: 'Image bytes sent to clients (stored originals and derivatives)', labelNames: ['route'], registers: [registry], collect: addPendingHits });

  /** Redis away or slow: leave those gauges empty rather than fail or stall the scrape. */
  const redisOk = async <T>(work: () => Promise<T>, timeoutMs = 2000): Promise<T | null> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([work(), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)))]);
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  };

  const queueJobs = new Gauge({ name: 'pictor_queue_jobs', help: 'Jobs per queue and BullMQ state, read at scrape time (getJobCounts)', labelNames: ['queue', 'state'], registers: [scrapeRegistry] });
  const queueDepth = new Gauge({
    name: 'pictor_queue_depth',
    help: 'Jobs accepted and not started yet (waiting + prioritized + delayed)',
    labelNames: ['queue'],
    registers: [scrapeRegistry],
  });
  const workers = new Gauge({ name: 'pictor_workers', help: 'Worker processes with a live heartbeat', registers: [scrapeRegistry] });
  const workerMemory = new Gauge({
    name: 'pictor_worker_resident_memory_bytes',
    help: 'Resident memory of each live worker process (from its Redis heartbeat)',
    labelNames: ['worker', 'queues'],
    registers: [scrapeRegistry],
  });

  /** Reads queue counts and heartbeats from Redis right before each scrape is rendered. */
  const refresh = async () => {
    const [counts, live] = await Promise.all([
      Promise.all(ALL_QUEUES.map((queue) => redisOk(() => deps.jobs.jobCounts(queue, ...JOB_STATES)))),
      redisOk(() => liveWorkers(deps.redis)),
    ]);
    queueJobs.reset();
    queueDepth.reset();
    ALL_QUEUES.forEach((queue, i) => {
      const c = counts[i];
      if (!c) return;
      for (const state of JOB_STATES) queueJobs.set({ queue, state }, c[state] ?? 0);
      queueDepth.set({ queue }, DEPTH_STATES.reduce((sum, state) => sum + (c[state] ?? 0), 0));
    });
    workerMemory.reset();
    workers.reset();
    if (live) {
      workers.set(live.length);
      for (const w of live) workerMemory.set({ worker: w.id, queues: w.queues.join(',') }, w.rssBytes);
    }
  };

  /** Counts the request when its response ends ('close' comes after 'finish', and also when the client hung up). */
  const track = (req: IncomingMessage, res: ServerResponse, route: () => string) => {
    const start = performance.now();
    res.once('close', () => {
      const l = { method: req.method ?? '', route: route(), status_code: String(res.statusCode) };
      requests.inc(l);
      duration.observe(l, (performance.now() - start) / 1000);
      const xCache = res.getHeader('X-Cache');
      if (xCache === 'HIT' || xCache === 'MISS') cache.inc({ route: l.route, result: xCache === 'HIT' ? 'hit' : 'miss' });
    });
  };

  const middleware = (req: Request, res: Response, next: NextFunction) => {
    (res.locals as Record<symbol, unknown>)[BYTES_SERVED] = (n: number) => bytesServed.inc({ route: routeLabel(req, res) }, n);
    track(req, res, () => routeLabel(req, res));
    next();
  };

  const countHit = (res: ServerResponse, route: string, bytes: number, cacheHit: boolean, started: number) => {
    let p = pendingHits.get(route);
    if (!p) pendingHits.set(route, (p = { labels: { method: 'GET', route, status_code: '200' }, requests: 0, cacheHits: 0, bytes: 0 }));
    const status = res.statusCode;
    if (status === 200) {
      p.requests++;
      duration.observe(p.labels, (performance.now() - started) / 1000);
    } else {
      const l = { method: 'GET', route, status_code: String(status) };
      requests.inc(l);
      duration.observe(l, (performance.now() - started) / 1000);
    }
    if (cacheHit) p.cacheHits++;
    p.bytes += bytes;
  };

  return {
    registry,
    middleware,
    countHit,
    async render() {
      await refresh();
      const own = allProcesses ? await allProcesses() : await registry.metrics();
      const scraped = await scrapeRegistry.metrics();
      const fromWorkers = await redisOk(() => workerMetricsText(deps.redis));
      return { contentType: registry.contentType, body: [own, scraped, fromWorkers].filter(Boolean).join('\n') };
    },
  };
}

/** Called by the image responder with the bytes it sent (a no-op outside a metered app). */
export function countBytesServed(res: Response, bytes: number): void {
  const count = (res.locals as Record<symbol, unknown> | undefined)?.[BYTES_SERVED];
  if (typeof count === 'function' && bytes > 0) (count as (n: number) => void)(bytes);
}

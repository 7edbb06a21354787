// Whether this front door reaches the data host (Redis and the catalog) right now. A link that
// breaks sends no reset: without this, every request would wait out its own command limit before
// its 503. A probe (a Redis PING and a catalog ping, each limited to PROBE_TIMEOUT_MS) runs every
// PROBE_INTERVAL_MS; the link counts as down from the first probe that neither answers (an error
// reply is an answer), and as up again from the first probe that one of them answers. While it is
// down, requests that need the data host are refused at once with 503 + Retry-After:
// dataHostGate() notes the refusal on the response, and answerErrorsAs (which every API route
// passes) answers it in the route's error shape.
// One of the two failing alone is not a lost link (a Redis or catalog restart): a stopped Redis
// refuses its commands at once anyway, and what does not need it (a stored derivative) still works.
// A catalog the driver has lost would make each command wait out server selection (3 s) first, so
// while it is away, requests that write are refused at once (each records something in the
// catalog, but for the passport endpoints, whose photos are answered and never stored); reads go
// on, since a cache or storage may answer them.
// The driver learns of a lost catalog only from a command of its own process: the other front
// doors (node:cluster children, other hosts) would send their next write down a dead socket and
// wait out server selection. So a front door whose connection is lost says so on a Redis channel
// at once (the publish leaves before the answer of the request that met the loss), and every
// other front door refuses writes from that message on, until a catalog ping of its own succeeds:
// a host cut off from the catalog alone stops the writes of the others for one ping only. A ping
// the catalog refuses (ShutdownInProgress from one whose journal failed) keeps the refusal.
import os from 'node:os';
import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Catalog } from '../../catalog/catalog.js';
import { unavailable, type ServiceError } from '../../errors.js';

const PROBE_INTERVAL_MS = 500;
/**
 * Both answer in milliseconds over a working link; 1.5 s leaves room for a loaded machine and a
 * slow link (200 ms delay plus a retransmission), so only a link that carries nothing trips it.
 */
const PROBE_TIMEOUT_MS = 1_500;
/** A caller refused meanwhile may retry after this (the probe looks again every half second). */
const RETRY_AFTER_SECONDS = 1;
/** These answer for themselves: /health reports each backing service's own check. */
const ANSWERED_WITHOUT_DATA_HOST = new Set(['/', '/health']);
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Passport photos are processed and answered, never catalogued. */
const NOT_CATALOGUED = '/passport-photo/';
/** Where front doors report a lost catalog connection; the message names the sender. */
export const CATALOG_LOST_CHANNEL = 'pictor:catalog-lost';
const SENDER = `${os.hostname()}:${process.pid}`;

/**
 * An error the server sent back (Redis' MISCONF on a full disk, a catalog refusing a command) is
 * an answer: the link carries, and the refusal is the request's own to meet.
 */
function answered(result: PromiseSettledResult<unknown>): boolean {
  if (result.status === 'fulfilled') return true;
  const name = (result.reason as Error | undefined)?.name;
  return name === 'ReplyError' || name === 'MongoServerError';
}

function limited(what: string, work: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export class DataHostLink {
  private down: { since: number; reason: string } | null = null;
  /** When another front door reported the catalog lost; null once a ping sent after it answered. */
  private lostElsewhereAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** A ping sent for a catalog error a request met is still out (lookAtCatalog sends one at a time). */
  private looking = false;

  /** `subscriber`: the front door's subscriber connection (its owner closes it), for the other front doors' reports. */
  constructor(
    private readonly redis: Redis,
    private readonly catalog: Catalog,
    private readonly log: Logger,
    private readonly subscriber: Redis | null = null,
  ) {}

  /** Resolves once subscribed to the reports of the other front doors. */
  async start(): Promise<void> {
    this.catalog.connection.on('disconnected', this.reportLoss);
    this.schedule();
    if (!this.subscriber) return;
    this.subscriber.on('message', this.onMessage);
    // While Redis is away the subscriber reconnects and subscribes again by itself; reports sent
    // meanwhile are lost, and each front door learns from its own probe.
    await this.subscriber.subscribe(CATALOG_LOST_CHANNEL);
  }

  stop(): void {
    this.stopped = true;
    this.catalog.connection.off('disconnected', this.reportLoss);
    this.subscriber?.off('message', this.onMessage);
    if (this.timer) clearTimeout(this.timer);
  }

  get reachable(): boolean {
    return this.down === null;
  }

  /** The 503 for a request that needs the data host while it is unreachable; null otherwise. */
  refusal(req: Request): ServiceError | null {
    if (ANSWERED_WITHOUT_DATA_HOST.has(req.path)) return null;
    if (this.down) return unavailable(`The queue and catalog are unreachable from this server (${this.down.reason}); retry shortly`, RETRY_AFTER_SECONDS);
    if ((!this.catalog.connected || this.lostElsewhereAt !== null) && !READS.has(req.method) && !req.path.startsWith(NOT_CATALOGUED)) return unavailable('The catalog is unreachable from this server; nothing was stored; retry shortly', RETRY_AFTER_SECONDS);
    return null;
  }

  /**
   * A catalog error a request met may be the first sign of a catalog going away: one whose journal
   * failed answers a read with a plain error, which leaves the driver as it was, and a ping with
   * ShutdownInProgress, which makes it drop the server at once (and this front door refuse writes
   * and tell the others) instead of at the next probe or when the catalog's process has exited.
   */
  lookAtCatalog(): void {
    if (this.looking || this.stopped) return;
    this.looking = true;
    this.pingCatalog()
      .catch(() => undefined)
      .finally(() => (this.looking = false));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probe().finally(() => this.schedule()), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Sent while this process's driver marks the catalog lost, before the failed command returns. */
  private readonly reportLoss = (): void => {
    // With Redis away too the publish fails at once; the gate already refuses everything then.
    if (!this.stopped) this.redis.publish(CATALOG_LOST_CHANNEL, SENDER).catch(() => undefined);
  };

  private readonly onMessage = (channel: string, sender: string): void => {
    if (channel === CATALOG_LOST_CHANNEL && sender !== SENDER) this.lostElsewhere();
  };

  private lostElsewhere(): void {
    this.lostElsewhereAt = performance.now();
    this.pingCatalog().catch(() => undefined);
  }

  /** A catalog ping; one that succeeds clears a loss reported before it was sent (an error reply is no catalog to write to). */
  private pingCatalog(): Promise<unknown> {
    const sentAt = performance.now();
    const ping = limited('catalog ping', this.catalog.ping());
    void Promise.allSettled([ping]).then(([result]) => {
      if (result.status === 'fulfilled' && this.lostElsewhereAt !== null && this.lostElsewhereAt <= sentAt) this.lostElsewhereAt = null;
    });
    return ping;
  }

  private async probe(): Promise<void> {
    const [redis, catalog] = await Promise.allSettled([limited('Redis PING', this.redis.ping()), this.pingCatalog()]);
    if (!answered(redis) && !answered(catalog)) {
      this.markDown(`${(redis as PromiseRejectedResult).reason?.message}; ${(catalog as PromiseRejectedResult).reason?.message}`);
      return;
    }
    if (this.down) {
      this.log.warn({ downMs: Date.now() - this.down.since }, 'data host reachable again; requests pass');
      this.down = null;
    }
  }

  private markDown(reason: string): void {
    if (this.down || this.stopped) return;
    this.down = { since: Date.now(), reason };
    this.log.warn({ reason }, 'data host unreachable; requests that need it are refused with 503 until a probe passes');
  }
}

/** Notes the refusal of a request that arrives while the data host is unreachable (see answerErrorsAs). */
export function dataHostGate(link: DataHostLink) {
  return (req: Request, res: Response, next: NextFunction) => {
    const refusal = link.refusal(req);
    if (refusal) res.locals.dataHostRefusal = refusal;
    next();
  };
}

/** Error middleware (before the error handler): a request's catalog error reply makes the link look at the catalog now. */
export function catalogErrorWatch(link: DataHostLink) {
  return (err: unknown, _req: Request, _res: Response, next: NextFunction) => {
    if ((err as Error | undefined)?.name === 'MongoServerError') link.lookAtCatalog();
    next(err);
  };
}

export function dataHostRefusal(res: Response): ServiceError | null {
  return (res.locals.dataHostRefusal as ServiceError | undefined) ?? null;
}

import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config.js';
import type { JobProducer } from '../jobs/job-producer.js';
import type { Storage } from '../storage/storage.js';
import type { BandwidthCounter } from './services/bandwidth-counter.js';
import type { DataHostLink } from './services/data-host-link.js';
import type { DerivativeCache } from './services/derivative-cache.js';
import type { HitMemo } from './services/hit-memo.js';
import type { ImageCache } from './services/image-cache.js';
import type { PlanLimits } from './services/plan-limits.js';

/** Everything the front door's routes need, built once by the server entry (or a test). */
export interface WebDeps {
  config: Config;
  catalog: Catalog;
  storage: Storage;
  jobs: JobProducer;
  redis: Redis;
  log: Logger;
  /** Image documents by id and by public id, dropped on delete/replace in every front door. */
  images: ImageCache;
  /** Derivative presence and hot derivative bytes. */
  derivatives: DerivativeCache;
  /** Answers recorded for the hit path (src/web/hit-path.ts). */
  hits: HitMemo;
  /** Bytes served per owner, written to the catalog in batches. */
  bandwidth: BandwidthCounter;
  /** Plan limits that refuse work (monthly transformations and bandwidth, storage for derivatives). */
  limits: PlanLimits;
  /** Whether Redis and the catalog are reachable (the server's probe); absent in apps built without it. */
  dataHost?: DataHostLink;
}

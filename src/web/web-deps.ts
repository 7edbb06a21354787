import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { Config } from '../config.js';
import type { JobProducer } from '../jobs/job-producer.js';
import type { Storage } from '../storage/storage.js';

/** Everything the front door's routes need, built once by the server entry (or a test). */
export interface WebDeps {
  config: Config;
  catalog: Catalog;
  storage: Storage;
  jobs: JobProducer;
  redis: Redis;
  log: Logger;
}

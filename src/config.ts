// One typed configuration object built from environment variables and validated at start-up.
// A wrong value stops the process with one line naming the variable (see ConfigError).
import os from 'node:os';
import path from 'node:path';

export type StorageDriverName = 'local' | 'gcs';

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  cdnUrl: string;
  redisUrl: string;
  mongoUrl: string;
  storageDriver: StorageDriverName;
  localStorageDir: string;
  gcsBucket: string;
  gcsApiEndpoint: string | undefined;
  gcsProjectId: string | undefined;
  maxUploadBytes: number;
  maxInputPixels: number;
  workerConcurrency: number;
  jobTimeoutMs: number;
  queueMaxWaiting: number;
  apiKeysSeed: string;
  demoToken: string;
  demoOrigins: string[];
  demoSources: string[];
  adminToken: string;
  logLevel: string;
  /**
   * AVIF encoder effort (0-9). 0 by default: at a quality matching WebP q80 (PSNR) it encodes an
   * 800 px image in ~0.7× WebP's time at ~0.9× its size; effort 1-2 save ~8-9% more bytes for
   * ~2.7-4.3× the time (scripts/bench, scenario 5; docs/performance.md).
   */
  avifEffort: number;
  /** WebP encoder effort (0-6); 3 by default (sharp's own default is 4). */
  webpEffort: number;
  /** libvips threads per job; 0 = automatic (see libvipsThreadsFor). */
  sharpThreads: number;
  apiKeyCacheMs: number;
  /**
   * How long the front door keeps image documents it looked up (0 = off). Deletes and
   * replacements drop entries at once in every front door (Redis pub/sub); the TTL only bounds
   * how stale an entry can get if such a message is lost.
   */
  imageCacheMs: number;
  /** Memory for hot derivative bytes in each front door, in MiB (0 = off). */
  memoryCacheMb: number;
  /** Memory for decoded JPEG originals in each worker process, in MiB (0 = off; workers/decoded-source-cache.ts). */
  decodedSourceCacheMb: number;
  /** Front-door processes sharing the port (`node dist/src/web/server.js` runs a cluster when > 1). */
  frontDoorProcesses: number;
  publicDerivativesPerImage: number;
  /** New derivatives the demo route may create per image (its own budget, separate from /cdn/{id}'s). */
  demoDerivativesPerImage: number;
  /** Largest output side keyless requests (/cdn/{id} without the owner's key, demo routes) may get. */
  keylessMaxSide: number;
  /** A render running longer is cancelled (libvips' own timeout) and answered 422; 0 = no limit. */
  renderTimeoutSeconds: number;
  /** Largest output (width × height after dpr, crop, rot and pad) a render may produce, checked before decoding. */
  maxOutputPixels: number;
  /**
   * Jobs one tenant may have waiting per queue (0 = no per-tenant accounting). Past it the tenant
   * gets 429; below it, a tenant's jobs beyond its first queue behind other tenants' (see JobProducer).
   */
  tenantMaxWaiting: number;
  /** Async uploads one user may have accepted and not yet finalised. */
  maxAsyncUploadsPerUser: number;
  /** Bytes one user may have staged by async uploads not yet finalised. */
  maxStagedBytesPerUser: number;
  /** How long /health reuses its probes' results (the storage probe writes and fsyncs a file). */
  healthCacheMs: number;
  /** How long the front door reuses an owner's monthly usage when checking plan limits. */
  quotaCacheMs: number;
  publicRateLimitPerMin: number;
  demoRateLimitPerMin: number;
  /**
   * BullMQ job lock and stalled check. A worker renews its locks every jobLockMs / 2; a dead
   * worker's job runs again within about jobLockMs + stalledIntervalMs (docs/durability.md).
   */
  jobLockMs: number;
  stalledIntervalMs: number;
  /** fsync policy of the private redis-server `npm start` runs (its append-only file in DATA_DIR). */
  redisAppendFsync: 'always' | 'everysec';
  /** Journal bytes after which `npm start`'s embedded catalog compacts (at least the snapshot's size). */
  catalogCompactMinBytes: number;
  heartbeatMs: number;
  /** V8 old-generation growth before a full GC, percent of the live heap (0 = V8's own choice); see src/heap-growth.ts. */
  heapGrowingPercent: number;
  /** Named parameter sets (PRESETS, JSON): `preset=<name>` expands to one; explicit parameters win. */
  presets: Record<string, PresetValues>;
  /** Keyless /cdn/{id} accepts only `preset` (plus `f` and `v`): no arbitrary sizes from the public. */
  publicPresetsOnly: boolean;
  /** Cache lifetime (seconds) of answers that can change: unversioned /cdn/{id} and originals. */
  unversionedMaxAgeSeconds: number;
  /** Animated WebP uploads are accepted up to this many frames (1 = no animation). */
  maxAnimatedFrames: number;
  /** Behind a reverse proxy: client addresses (rate limits) come from X-Forwarded-For; otherwise only a proxy on loopback is trusted. */
  trustProxy: boolean;
  /**
   * The queue names WORKER_QUEUES lists (empty: all). Checked against the queues where they are
   * defined, by servedQueues (src/jobs/job-contract.ts), in the worker processes and `npm start`.
   */
  workerQueues: readonly string[];
}

export type PresetValues = Record<string, string | number | boolean>;

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`Invalid configuration: ${variable} ${detail}`);
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = str(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name, fallback);
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `must be ${allowed.map((a) => `"${a}"`).join(' or ')}, got "${raw}"`);
  return raw as T;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (/^(true|1)$/i.test(raw.trim())) return true;
  if (/^(false|0)$/i.test(raw.trim())) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/** PRESETS: `{"name": {"param": value, …}, …}`. Parameter values are checked against the registry's schema by the front door. */
function presets(env: Env): Record<string, PresetValues> {
  const raw = env.PRESETS;
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('PRESETS', 'must be JSON like {"thumb":{"w":200,"h":200,"fit":"cover"}}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError('PRESETS', 'must be a JSON object of named parameter sets');
  for (const [name, values] of Object.entries(parsed)) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new ConfigError('PRESETS', `has an invalid preset name "${name}" (letters, digits, _ and -)`);
    if (!values || typeof values !== 'object' || Array.isArray(values)) throw new ConfigError('PRESETS', `"${name}" must be an object of parameters`);
    for (const v of Object.values(values as object)) {
      if (!['string', 'number', 'boolean'].includes(typeof v)) throw new ConfigError('PRESETS', `"${name}" has a value that is not a string, number or boolean`);
    }
  }
  return parsed as Record<string, PresetValues>;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const baseUrl = url(env, 'BASE_URL', `http://localhost:${port}`, ['http:', 'https:']);
  const cdnUrl = url(env, 'CDN_URL', `${baseUrl}/files`, ['http:', 'https:']);
  const storageDriver = str(env, 'STORAGE_DRIVER', 'local');
  if (storageDriver !== 'local' && storageDriver !== 'gcs') {
    throw new ConfigError('STORAGE_DRIVER', `must be "local" or "gcs", got "${storageDriver}"`);
  }
  const gcsBucket = str(env, 'GCS_BUCKET', '');
  if (storageDriver === 'gcs' && gcsBucket === '') throw new ConfigError('GCS_BUCKET', 'is required when STORAGE_DRIVER=gcs');
  const gcsApiEndpoint = env.GCS_API_ENDPOINT ? url(env, 'GCS_API_ENDPOINT', '', ['http:', 'https:']) : undefined;
  const cores = Math.max(1, os.availableParallelism());
  const jobTimeoutMs = int(env, 'JOB_TIMEOUT_MS', 30_000, 100, 3_600_000);
  return {
    port,
    host: str(env, 'HOST', '0.0.0.0'),
    baseUrl,
    cdnUrl,
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    mongoUrl: url(env, 'MONGO_URL', 'mongodb://127.0.0.1:27017/pictor', ['mongodb:', 'mongodb+srv:']),
    storageDriver,
    localStorageDir: path.resolve(str(env, 'LOCAL_STORAGE_DIR', './data/storage')),
    gcsBucket,
    gcsApiEndpoint,
    gcsProjectId: env.GCS_PROJECT_ID || undefined,
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 20 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxInputPixels: int(env, 'MAX_INPUT_PIXELS', 50_000_000, 1, 1_000_000_000),
    // Cores + 1: one job more than cores keeps the cores busy while a job reads, stores or waits
    // for Redis (+4-6 % JPEG misses on 2 cores); 2 × cores cost ~10 % more CPU per transform.
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', cores + 1, 1, 256),
    jobTimeoutMs,
    queueMaxWaiting: int(env, 'QUEUE_MAX_WAITING', 20_000, 1, 10_000_000),
    apiKeysSeed: str(env, 'API_KEYS_SEED', ''),
    demoToken: str(env, 'DEMO_TOKEN', ''),
    demoOrigins: list(env, 'DEMO_ORIGINS', []),
    demoSources: list(env, 'DEMO_SOURCES', [cdnUrl]),
    adminToken: str(env, 'ADMIN_TOKEN', ''),
    logLevel: str(env, 'LOG_LEVEL', 'info'),
    avifEffort: int(env, 'AVIF_EFFORT', 0, 0, 9),
    webpEffort: int(env, 'WEBP_EFFORT', 3, 0, 6),
    sharpThreads: int(env, 'SHARP_THREADS', 0, 0, 256),
    apiKeyCacheMs: int(env, 'API_KEY_CACHE_MS', 5000, 0, 3_600_000),
    imageCacheMs: int(env, 'IMAGE_CACHE_MS', 10_000, 0, 3_600_000),
    memoryCacheMb: int(env, 'MEMORY_CACHE_MB', 64, 0, 65_536),
    decodedSourceCacheMb: int(env, 'DECODED_SOURCE_CACHE_MB', 128, 0, 65_536),
    frontDoorProcesses: int(env, 'FRONT_DOOR_PROCESSES', cores, 1, 256),
    publicDerivativesPerImage: int(env, 'PUBLIC_DERIVATIVES_PER_IMAGE', 50, 0, 100_000),
    demoDerivativesPerImage: int(env, 'DEMO_DERIVATIVES_PER_IMAGE', 20, 0, 100_000),
    // No upper bound here: the transform registry's largest side (MAX_SIDE) caps every output already.
    keylessMaxSide: int(env, 'KEYLESS_MAX_SIDE', 2500, 16, Number.MAX_SAFE_INTEGER),
    renderTimeoutSeconds: int(env, 'RENDER_TIMEOUT_SECONDS', 10, 0, 3600),
    // 40 MP: 4200² (the largest box w and h allow) with room to spare; a 13×169 source asked for
    // w=4000 would otherwise be a 4000×52000 render, refused only by the deadline after seconds.
    maxOutputPixels: int(env, 'MAX_OUTPUT_PIXELS', 40_000_000, 1, 1_000_000_000),
    tenantMaxWaiting: int(env, 'TENANT_MAX_WAITING', 1000, 0, 10_000_000),
    maxAsyncUploadsPerUser: int(env, 'MAX_ASYNC_UPLOADS_PER_USER', 50, 1, 1_000_000),
    maxStagedBytesPerUser: int(env, 'MAX_STAGED_BYTES_PER_USER', 1024 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
    healthCacheMs: int(env, 'HEALTH_CACHE_MS', 2000, 1000, 600_000),
    quotaCacheMs: int(env, 'QUOTA_CACHE_MS', 1000, 0, 60_000),
    publicRateLimitPerMin: int(env, 'PUBLIC_RATE_LIMIT_PER_MIN', 600, 1, 1_000_000),
    demoRateLimitPerMin: int(env, 'DEMO_RATE_LIMIT_PER_MIN', 60, 1, 1_000_000),
    jobLockMs: int(env, 'JOB_LOCK_MS', 3_000, 500, 600_000),
    stalledIntervalMs: int(env, 'JOB_STALLED_INTERVAL_MS', 1_000, 500, 600_000),
    redisAppendFsync: oneOf(env, 'EMBEDDED_REDIS_APPENDFSYNC', ['always', 'everysec'] as const, 'everysec'),
    catalogCompactMinBytes: int(env, 'EMBEDDED_CATALOG_COMPACT_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
    heartbeatMs: int(env, 'WORKER_HEARTBEAT_MS', 5_000, 100, 60_000),
    heapGrowingPercent: int(env, 'HEAP_GROWING_PERCENT', 100, 0, 1000),
    presets: presets(env),
    publicPresetsOnly: bool(env, 'PUBLIC_PRESETS_ONLY', false),
    unversionedMaxAgeSeconds: int(env, 'UNVERSIONED_MAX_AGE', 60, 0, 86_400),
    maxAnimatedFrames: int(env, 'MAX_ANIMATED_FRAMES', 200, 1, 10_000),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    workerQueues: list(env, 'WORKER_QUEUES', []),
  };
}

/**
 * libvips threads for a pipeline that starts while `activeJobs` jobs (itself included) are
 * rendering in a worker process: SHARP_THREADS, or by default the cores shared among them (at
 * least one). A lone job then uses every core (lowest latency), while a full worker runs one
 * thread per job, which renders more images per CPU second than several threads per job
 * (scripts/bench, cache miss at concurrency 4 and 16).
 */
export function libvipsThreadsFor(config: Pick<Config, 'sharpThreads'>, activeJobs: number, cores = os.availableParallelism()): number {
  if (config.sharpThreads > 0) return config.sharpThreads;
  return Math.max(1, Math.floor(cores / Math.max(1, activeJobs)));
}

/** Loads the config or exits with one clear line; used by process entry points. */
export function loadConfigOrExit(env: Env = process.env): Config {
  return exitOnConfigError(() => loadConfig(env));
}

/** What `read` returns; a ConfigError instead stops the process with its one line (exit 78). */
export function exitOnConfigError<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

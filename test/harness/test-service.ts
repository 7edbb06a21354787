// Starts the real service for a test: a private redis-server, the front door in this process
// (so tests can look at its catalog and queues) and worker processes forked from dist/workers.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createCredential, type Credential } from '../../src/catalog/api-keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import { readUsage } from '../../src/catalog/usage.js';
import { liveWorkers } from '../../src/jobs/worker-heartbeat.js';
import { FrontDoor } from '../../src/web/front-door.js';
import type { WebDeps } from '../../src/web/web-deps.js';
import { freePort, startRedisServer, type RedisServerHandle } from '../../scripts/lib/redis-server.js';
import { workerExecArgv } from '../../scripts/lib/worker-env.js';
import { catalogUrlFor } from './root-hooks.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const WORKER_ENTRY = path.resolve(here, '../../workers/main.js');

export interface TestServiceOptions {
  workers?: number;
  env?: Record<string, string>;
  /** Queues the workers serve (default: upload-finalize and transform; passport loads MediaPipe). */
  workerQueues?: string;
}

export class TestService {
  readonly workers: ChildProcess[] = [];
  private constructor(
    readonly config: Config,
    readonly env: Record<string, string>,
    readonly deps: WebDeps,
    readonly redis: RedisServerHandle,
    private readonly frontDoor: FrontDoor,
    readonly storageDir: string,
  ) {}

  get baseUrl(): string {
    return this.config.baseUrl;
  }

  static async start(options: TestServiceOptions = {}): Promise<TestService> {
    const redis = await startRedisServer();
    const port = await freePort();
    const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-test-'));
    const env: Record<string, string> = {
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
      REDIS_URL: redis.url,
      MONGO_URL: catalogUrlFor(`t_${randomBytes(5).toString('hex')}`),
      STORAGE_DRIVER: 'local',
      LOCAL_STORAGE_DIR: storageDir,
      API_KEY_CACHE_MS: '0',
      JOB_TIMEOUT_MS: '20000',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      WORKER_CONCURRENCY: '2',
      WORKER_HEARTBEAT_MS: '500',
      WORKER_QUEUES: options.workerQueues ?? 'upload-finalize,transform,analyze',
      ...options.env,
    };
    const config = loadConfig(env);
    const frontDoor = new FrontDoor(config, pino({ level: env.LOG_LEVEL }));
    const { deps } = await frontDoor.start();
    const service = new TestService(config, env, deps, redis, frontDoor, storageDir);
    for (let i = 0; i < (options.workers ?? 1); i++) service.startWorker();
    await service.waitForWorkers(options.workers ?? 1);
    return service;
  }

  startWorker(extraEnv: Record<string, string> = {}): ChildProcess {
    const child = fork(WORKER_ENTRY, [], { env: { ...process.env, ...this.env, ...extraEnv }, execArgv: workerExecArgv(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.workers.push(child);
    return child;
  }

  async waitForWorkers(count: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if ((await liveWorkers(this.deps.redis)).length >= count) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${count} worker(s) did not report within ${timeoutMs} ms`);
  }

  /**
   * Waits until the user's derivative bookkeeping has caught up with storage. Workers record
   * derivatives and count them in batches shortly after a transform job has answered
   * (workers/derivative-ledger.ts); a batch is complete once the stored derivative objects, the
   * catalog's derivative rows and the usage counter agree (the counter is written last). The
   * deadline allows for a heavily loaded machine (writing a batch's counter can take over 5 s
   * there); it returns as soon as the three agree.
   */
  async derivativesSettled(userId: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let seen = '';
    for (;;) {
      const [objects, rows, usage] = await Promise.all([
        this.deps.storage.list(`${userId}/`, { limit: 1000 }).then((page) => page.items.filter((o) => o.key.includes('&v=')).length),
        this.deps.catalog.derivatives.countDocuments({ userId }),
        readUsage(this.deps.catalog, userId),
      ]);
      if (objects === rows && rows === usage.derivativeCount) return;
      seen = `${objects} stored, ${rows} recorded, ${usage.derivativeCount} counted`;
      if (Date.now() > deadline) throw new Error(`${userId}: derivatives not settled within ${timeoutMs} ms (${seen})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async createUser(userId = `u${randomBytes(4).toString('hex')}`, plan = 'pro'): Promise<Credential> {
    return createCredential(this.deps.catalog, userId, plan);
  }

  url(p: string): string {
    return this.baseUrl + p;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.exitCode !== null || w.signalCode !== null) return resolve();
            w.once('exit', () => resolve());
            w.kill('SIGTERM');
          }),
      ),
    );
    await this.frontDoor.close();
    await this.redis.stop();
    fs.rmSync(this.storageDir, { recursive: true, force: true });
  }
}

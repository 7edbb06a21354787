// The service spread over the topology's hosts, every process started inside its host's namespace:
//   data   redis-server (AOF) :6379, embedded catalog :27017, storage (GCS protocol fake) :4443
//   w1, w2 two worker processes each (upload-finalize and transform queues)
//   f1, f2 one front door each on :8080 (both networks); f2 reaches the data host through the
//          link proxy on its loopback, which can add delay and loss
//   client the load (see load.ts)
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { persistenceArgs } from '../../scripts/lib/redis-server.js';
import { WORKER_NODE_FLAGS, workerEnv } from '../../scripts/lib/worker-env.js';
import { INTERNAL, PUBLIC, type HostName, type Topology } from './topology.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, '../..');

export const PORTS = { redis: 6379, catalog: 27017, gcs: 4443, web: 8080 } as const;
const PROXY_PORTS = { redis: 16379, catalog: 17017, gcs: 14443 } as const;
export const BUCKET = 'pictor-cluster';
export const USER = 'cluster';
export const KEY = 'clusterkey0001';
const SEED = `${USER}:${KEY}:clustersecret0001:pro`;
/** Both front doors serve one public name (as behind a load balancer): image URLs work through either. */
const PUBLIC_BASE = 'http://pictor.cluster.test';

export interface ClusterSettings {
  jobTimeoutMs: number;
  jobLockMs: number;
  stalledIntervalMs: number;
  workersPerHost: number;
}

function waitForMessage(child: ChildProcess, type: string, what: string, timeoutMs: number, logFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready within ${timeoutMs} ms; log: ${tail(logFile)}`)), timeoutMs);
    child.on('message', (m: { type?: string }) => {
      if (m?.type !== type) return;
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code ?? signal}) while starting; log: ${tail(logFile)}`));
    });
  });
}

export function tail(file: string, lines = 15): string {
  try {
    return '\n' + fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export class Cluster {
  private proxy: ChildProcess | null = null;
  private redis: ChildProcess | null = null;

  constructor(
    private readonly topology: Topology,
    readonly dir: string,
    readonly settings: ClusterSettings,
  ) {}

  log(host: string): string {
    return path.join(this.dir, `${host}.log`);
  }

  /** The service's environment as one host sees it (f2 through its link proxy). */
  env(host: HostName): NodeJS.ProcessEnv {
    const viaProxy = host === 'f2';
    const at = (service: keyof typeof PROXY_PORTS) => (viaProxy ? `127.0.0.1:${PROXY_PORTS[service]}` : `${INTERNAL.data}:${PORTS[service]}`);
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: `redis://${at('redis')}`,
      MONGO_URL: `mongodb://${at('catalog')}/pictor?directConnection=true&serverMonitoringMode=poll`,
      STORAGE_DRIVER: 'gcs',
      GCS_BUCKET: BUCKET,
      GCS_API_ENDPOINT: `http://${at('gcs')}`,
      // No Google credential may be looked up (and no metadata server asked).
      GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/pictor-cluster-credentials.json',
      GCE_METADATA_HOST: '127.0.0.1:9',
      BASE_URL: PUBLIC_BASE,
      CDN_URL: `${PUBLIC_BASE}/files`,
      PORT: String(PORTS.web),
      HOST: '0.0.0.0',
      FRONT_DOOR_PROCESSES: '1',
      API_KEYS_SEED: SEED,
      JOB_TIMEOUT_MS: String(this.settings.jobTimeoutMs),
      JOB_LOCK_MS: String(this.settings.jobLockMs),
      JOB_STALLED_INTERVAL_MS: String(this.settings.stalledIntervalMs),
      WORKER_QUEUES: 'upload-finalize,transform',
      WORKER_CONCURRENCY: '2',
      LOG_LEVEL: 'warn',
    };
  }

  doors(): string[] {
    return [`http://${PUBLIC.f1}:${PORTS.web}`, `http://${PUBLIC.f2}:${PORTS.web}`];
  }

  async start(): Promise<void> {
    await this.startRedis();
    const dataHost = this.topology.spawnIn(
      'data',
      [process.execPath, path.join(here, 'data-host.js'), INTERNAL.data, String(PORTS.catalog), String(PORTS.gcs), path.join(this.dir, 'catalog'), BUCKET],
      this.env('data'),
      this.log('data'),
      true,
    );
    await waitForMessage(dataHost, 'ready', 'the data host (catalog and storage)', 60_000, this.log('data'));
    this.proxy = this.topology.spawnIn(
      'f2',
      [process.execPath, path.join(here, 'link-proxy.js'), ...Object.entries(PROXY_PORTS).map(([service, port]) => `${port}=${INTERNAL.data}:${PORTS[service as keyof typeof PORTS]}`)],
      this.env('f2'),
      this.log('f2-proxy'),
      true,
    );
    await waitForMessage(this.proxy, 'ready', 'the link proxy', 20_000, this.log('f2-proxy'));
    await Promise.all([this.startWorkers('w1'), this.startWorkers('w2'), this.startFrontDoor('f1'), this.startFrontDoor('f2')]);
  }

  async startRedis(): Promise<void> {
    fs.mkdirSync(path.join(this.dir, 'redis'), { recursive: true });
    this.redis = this.topology.spawnIn(
      'data',
      ['redis-server', '--bind', INTERNAL.data, '--port', String(PORTS.redis), ...persistenceArgs({ dataDir: path.join(this.dir, 'redis'), appendFsync: 'everysec' }), '--maxmemory-policy', 'noeviction', '--protected-mode', 'no', '--loglevel', 'warning'],
      {},
      this.log('redis'),
    );
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      const ping = this.topology.run('data', ['redis-cli', '-h', INTERNAL.data, '-p', String(PORTS.redis), 'ping']);
      if (ping.trim() === 'PONG') return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis-server on the data host did not answer within 20 s; log: ${tail(this.log('redis'))}`);
  }

  /** Stops redis-server as a restart does (SIGTERM: it writes its AOF and exits), resolves when it has exited. */
  async stopRedis(): Promise<void> {
    const redis = this.redis!;
    if (redis.exitCode !== null || redis.signalCode !== null) return;
    const exited = new Promise((r) => redis.once('exit', r));
    // `ip netns exec` replaces itself with the command: the child's pid is redis-server's.
    redis.kill('SIGTERM');
    await exited;
  }

  async startWorkers(host: 'w1' | 'w2'): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < this.settings.workersPerHost; i++) {
      const child = this.topology.spawnIn(host, [process.execPath, ...WORKER_NODE_FLAGS, path.join(DIST, 'workers/main.js')], workerEnv(this.env(host)), this.log(host), true);
      ready.push(waitForMessage(child, 'ready', `a worker on ${host}`, 90_000, this.log(host)));
    }
    await Promise.all(ready);
  }

  async startFrontDoor(host: 'f1' | 'f2'): Promise<void> {
    const child = this.topology.spawnIn(host, [process.execPath, path.join(DIST, 'src/web/server.js')], this.env(host), this.log(host), true);
    await waitForMessage(child, 'listening', `the front door on ${host}`, 90_000, this.log(host));
  }

  /** Delay and loss on f2's link to the data host (on) or a clean link (off). */
  impairSlowLink(on: boolean): void {
    this.proxy!.kill(on ? 'SIGUSR1' : 'SIGUSR2');
  }
}

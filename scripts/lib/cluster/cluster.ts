// The service spread over the topology's hosts, every process started inside its host's namespace
// (used by the cluster test, test/cluster/run.ts, and the cluster benchmark, scripts/bench-cluster.ts):
//   data   redis-server (AOF) :6379, embedded catalog :27017, storage (GCS protocol fake) :4443
//   w1, w2 worker processes (upload-finalize and transform queues)
//   f1, f2 one front door each on :8080 (both networks)
//   client the load
// A host named in `proxied` runs the link proxy (link-proxy.ts) on its loopback; its processes
// reach the data host through it unless started with `direct`, and it can add delay and loss.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { persistenceArgs } from '../redis-server.js';
import { WORKER_NODE_FLAGS, workerEnv } from '../worker-env.js';
import { INTERNAL, PUBLIC, type HostName, type Topology } from './topology.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, '../../..');
/** The data host's catalog and storage (the storage is the tests' GCS protocol fake). */
const DATA_HOST_ENTRY = path.join(DIST, 'test/cluster/data-host.js');

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
  /** Jobs each worker process runs at once (WORKER_CONCURRENCY). */
  workerConcurrency: number;
  /** Hosts whose link to the data host passes the link proxy. */
  proxied: HostName[];
  /** What the proxy adds while impaired: delay per round trip, and the share of chunks held back as lost. */
  impairment: { delayMs: number; loss: number };
  /** More settings for every process (e.g. SHARP_THREADS). */
  extraEnv?: Record<string, string>;
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
  private readonly proxies = new Map<HostName, ChildProcess>();
  private readonly workers = new Map<HostName, ChildProcess[]>();
  private redis: ChildProcess | null = null;

  constructor(
    private readonly topology: Topology,
    readonly dir: string,
    readonly settings: ClusterSettings,
  ) {}

  log(host: string): string {
    return path.join(this.dir, `${host}.log`);
  }

  /** The service's environment as one host sees it (through its link proxy, if it has one, unless `direct`). */
  env(host: HostName, direct = false): NodeJS.ProcessEnv {
    const viaProxy = !direct && this.settings.proxied.includes(host);
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
      WORKER_CONCURRENCY: String(this.settings.workerConcurrency),
      LOG_LEVEL: 'warn',
      ...this.settings.extraEnv,
    };
  }

  doors(): string[] {
    return [`http://${PUBLIC.f1}:${PORTS.web}`, `http://${PUBLIC.f2}:${PORTS.web}`];
  }

  async start(): Promise<void> {
    await this.startRedis();
    const dataHost = this.topology.spawnIn(
      'data',
      [process.execPath, DATA_HOST_ENTRY, INTERNAL.data, String(PORTS.catalog), String(PORTS.gcs), path.join(this.dir, 'catalog'), BUCKET],
      this.env('data'),
      this.log('data'),
      true,
    );
    await waitForMessage(dataHost, 'ready', 'the data host (catalog and storage)', 60_000, this.log('data'));
    const { delayMs, loss } = this.settings.impairment;
    for (const host of this.settings.proxied) {
      const proxy = this.topology.spawnIn(
        host,
        [process.execPath, path.join(here, 'link-proxy.js'), `delay=${delayMs}`, `loss=${loss}`, ...Object.entries(PROXY_PORTS).map(([service, port]) => `${port}=${INTERNAL.data}:${PORTS[service as keyof typeof PORTS]}`)],
        this.env(host),
        this.log(`${host}-proxy`),
        true,
      );
      await waitForMessage(proxy, 'ready', `the link proxy on ${host}`, 20_000, this.log(`${host}-proxy`));
      this.proxies.set(host, proxy);
    }
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

  async startWorkers(host: 'w1' | 'w2', count = this.settings.workersPerHost, direct = false): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const child = this.topology.spawnIn(host, [process.execPath, ...WORKER_NODE_FLAGS, path.join(DIST, 'workers/main.js')], workerEnv(this.env(host, direct)), this.log(host), true);
      this.workers.set(host, [...(this.workers.get(host) ?? []), child]);
      ready.push(waitForMessage(child, 'ready', `a worker on ${host}`, 90_000, this.log(host)));
    }
    await Promise.all(ready);
  }

  /** The pids of a host's running worker processes (`ip netns exec` replaces itself: a child's pid is its node process's). */
  workerPids(host: 'w1' | 'w2'): number[] {
    return (this.workers.get(host) ?? []).filter((c) => c.exitCode === null && c.signalCode === null).map((c) => c.pid!);
  }

  /** Stops a host's workers as a deployment does (SIGTERM: each finishes its jobs), resolves once they have exited. */
  async stopWorkers(host: 'w1' | 'w2'): Promise<void> {
    const children = this.workers.get(host) ?? [];
    this.workers.delete(host);
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }),
    );
  }

  async startFrontDoor(host: 'f1' | 'f2'): Promise<void> {
    const child = this.topology.spawnIn(host, [process.execPath, path.join(DIST, 'src/web/server.js')], this.env(host), this.log(host), true);
    await waitForMessage(child, 'listening', `the front door on ${host}`, 90_000, this.log(host));
  }

  /** Delay and loss on a proxied host's link to the data host (on) or a clean link (off). */
  impairLink(host: HostName, on: boolean): void {
    const proxy = this.proxies.get(host);
    if (!proxy) throw new Error(`${host} has no link proxy (ClusterSettings.proxied)`);
    proxy.kill(on ? 'SIGUSR1' : 'SIGUSR2');
  }
}

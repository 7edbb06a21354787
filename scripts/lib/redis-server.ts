// Starts a private redis-server (Debian's package) on a free loopback port. With `dataDir` it keeps
// an append-only file there (`npm start`: queued jobs survive a crash); without, it runs in memory
// only (the test harness). Debian's Redis is 7.0: no WAITAOF, so the fsync policy is the server's.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';

export interface RedisServerHandle {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

export function findRedisServer(): string | null {
  for (const candidate of [process.env.REDIS_SERVER_BIN, '/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    if (candidate && spawnSync(candidate, ['--version']).status === 0) return candidate;
  }
  const which = spawnSync('sh', ['-c', 'command -v redis-server']);
  const found = which.stdout?.toString().trim();
  return found ? found : null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not start listening on ${port} within ${timeoutMs} ms`);
}

export type AppendFsync = 'always' | 'everysec';

export interface RedisServerOptions {
  port?: number;
  /** Folder for the append-only file (made when missing); omitted: memory only. */
  dataDir?: string;
  /** When Redis fsyncs the append-only file: before each reply ('always') or once a second. */
  appendFsync?: AppendFsync;
}

/** redis-server arguments for persistence: an AOF in `dataDir`, no RDB snapshots of their own. */
export function persistenceArgs(options: RedisServerOptions): string[] {
  if (!options.dataDir) return ['--save', '', '--appendonly', 'no'];
  return [
    '--dir', options.dataDir,
    '--save', '',
    '--appendonly', 'yes',
    '--appendfilename', 'pictor.aof',
    '--appendfsync', options.appendFsync ?? 'everysec',
    // A crash mid-append leaves a torn last command: load what precedes it instead of refusing to start.
    '--aof-load-truncated', 'yes',
  ];
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServerHandle> {
  const bin = findRedisServer();
  if (!bin) {
    throw new Error('redis-server is not installed. Run `npm run setup` (installs Debian\'s redis-server) or set REDIS_URL to an existing Redis.');
  }
  const port = options.port || (await freePort());
  if (options.dataDir) fs.mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    bin,
    ['--bind', '127.0.0.1', '--port', String(port), ...persistenceArgs(options), '--maxmemory-policy', 'noeviction', '--protected-mode', 'yes', '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await waitForPort(port, 10_000);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

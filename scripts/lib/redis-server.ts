// Starts a private redis-server (Debian's package) on a free loopback port, without persistence.
// Used by `npm start` on embedded defaults and by the test harness.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
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

export async function startRedisServer(options: { port?: number } = {}): Promise<RedisServerHandle> {
  const bin = findRedisServer();
  if (!bin) {
    throw new Error('redis-server is not installed. Run `npm run setup` (installs Debian\'s redis-server) or set REDIS_URL to an existing Redis.');
  }
  const port = options.port || (await freePort());
  const child = spawn(
    bin,
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction', '--protected-mode', 'yes', '--loglevel', 'warning'],
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

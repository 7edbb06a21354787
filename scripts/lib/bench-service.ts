// For the bench scripts: the whole service on embedded defaults, started the way a user starts it
// (`node dist/scripts/start.js` with WORKERS=n and a fresh DATA_DIR), and the import CLI run against
// it as its own process.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const distScripts = path.resolve(here, '..');

export interface RunningService {
  baseUrl: string;
  key: string;
  dataDir: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

export async function startService(options: { workers: number; dataDir: string; env?: Record<string, string> }): Promise<RunningService> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: baseUrl,
    WORKERS: String(options.workers),
    DATA_DIR: options.dataDir,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  // Embedded defaults: no external Redis, catalog or bucket from the caller's environment (the
  // bench's own options may still set them, e.g. API_KEYS_SEED for several users).
  for (const name of ['REDIS_URL', 'MONGO_URL', 'STORAGE_DRIVER', 'LOCAL_STORAGE_DIR', 'API_KEYS_SEED', 'CDN_URL']) delete env[name];
  Object.assign(env, options.env);
  const child = spawn(process.execPath, [path.join(distScripts, 'start.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  const key = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /^api key\s+(\S+)/m.exec(output);
      if (/Pictor is up/.test(output) && match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with code ${code} before it was up:\n${output}`)));
  });
  child.stdout!.resume();
  return {
    baseUrl,
    key,
    dataDir: options.dataDir,
    process: child,
    async stop() {
      const done = exited(child);
      child.kill('SIGTERM');
      await done;
    },
  };
}

export interface ImportRun {
  seconds: number;
  exitCode: number | null;
  summary: { total: number; done: number; failed: number; skipped: number; seconds: number; files_per_second: number };
}

/** Runs `node dist/scripts/import.js <folder> --key … --quiet` and reads its report. */
export async function runImport(service: RunningService, folder: string, options: { concurrency: number; report: string }): Promise<ImportRun> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [path.join(distScripts, 'import.js'), folder, '--key', service.key, '--concurrency', String(options.concurrency), '--base-url', service.baseUrl, '--report', options.report, '--quiet'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await exited(child);
  const seconds = (performance.now() - started) / 1000;
  const report = JSON.parse(fs.readFileSync(options.report, 'utf8')) as { summary: ImportRun['summary'] };
  return { seconds, exitCode: child.exitCode, summary: report.summary };
}

// `npm start`: brings the whole service up on one machine. With no env it starts a private
// redis-server, the embedded catalog (journaled to disk), local storage under ./data, the front
// door and WORKERS worker processes, and prints the URL and a ready-to-use API key. REDIS_URL,
// MONGO_URL and STORAGE_DRIVER=gcs switch each part to an external service instead.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCredential, parseKeySeed } from '../src/catalog/api-keys.js';
import { Catalog } from '../src/catalog/catalog.js';
import { exitOnConfigError, loadConfigOrExit } from '../src/config.js';
import { mkdirDurably, renameDurably, writeFileSynced } from '../src/durable-files.js';
import { servedQueues } from '../src/jobs/job-contract.js';
import { createLogger } from '../src/logger.js';
import { superviseCatalog } from './lib/catalog-supervisor.js';
import { reconcileAtStart } from './lib/reconcile-at-start.js';
import { startRedisServer } from './lib/redis-server.js';
import { workerEnv, workerExecArgv } from './lib/worker-env.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const distRoot = path.resolve(here, '..');
const env: NodeJS.ProcessEnv = { ...process.env };
const log = createLogger('pictor-start', env.LOG_LEVEL || 'info');
const dataDir = path.resolve(env.DATA_DIR ?? './data');
const cleanups: (() => Promise<void>)[] = [];
const children: ChildProcess[] = [];

function say(line: string) {
  process.stdout.write(line + '\n');
}

async function main() {
  await mkdirDurably(dataDir);
  env.LOCAL_STORAGE_DIR ??= path.join(dataDir, 'storage');
  const early = loadConfigOrExit(env); // fail fast on a bad variable before starting anything
  exitOnConfigError(() => servedQueues(early.workerQueues)); // the workers' WORKER_QUEUES, checked as early

  if (!env.REDIS_URL) {
    // Queued work is kept in an append-only file: a job answered 202 survives a crash.
    const redisDir = path.join(dataDir, 'redis');
    const redis = await startRedisServer({ port: env.EMBEDDED_REDIS_PORT ? Number(env.EMBEDDED_REDIS_PORT) : 0, dataDir: redisDir, appendFsync: early.redisAppendFsync });
    env.REDIS_URL = redis.url;
    cleanups.unshift(redis.stop);
    say(`redis     private redis-server at ${redis.url}; queued jobs kept in ${redisDir} (appendfsync ${early.redisAppendFsync})`);
  }

  let embeddedCatalog = false;
  if (!env.MONGO_URL) {
    const catalogDir = path.join(dataDir, 'catalog');
    const catalogProcess = await superviseCatalog(
      {
        port: env.EMBEDDED_MONGO_PORT ? Number(env.EMBEDDED_MONGO_PORT) : 0,
        dataDir: catalogDir,
        // written by versions before the journal; imported once, then renamed *.migrated
        legacySnapshotFile: path.join(dataDir, 'catalog-snapshot.json'),
        compactMinBytes: early.catalogCompactMinBytes,
      },
      say,
    );
    cleanups.unshift(() => catalogProcess.stop());
    env.MONGO_URL = catalogProcess.first.url;
    embeddedCatalog = true;
    const { loadReport: loaded, migrated } = catalogProcess.first;
    say(
      `catalog   embedded MongoDB-compatible server (CongoDB) at ${catalogProcess.first.url.split('?')[0]}; ` +
        `every write journaled to ${catalogDir} before it is acknowledged` +
        ` (loaded ${loaded.snapshot?.documents ?? 0} documents from the snapshot and ${loaded.records} journal records in ${Math.round(loaded.ms)} ms` +
        (loaded.droppedTail ? `; dropped a torn last record of ${loaded.droppedTail.bytes} bytes` : '') +
        (migrated ? `; migrated ${migrated.documents} documents from ${migrated.file}` : '') +
        ')',
    );
  }

  const config = loadConfigOrExit(env);
  const catalog = await Catalog.connect(config.mongoUrl);
  let keyLine: string;
  try {
    if (embeddedCatalog) await reconcileAtStart(catalog, config, say);
    if (config.apiKeysSeed) {
      const first = parseKeySeed(config.apiKeysSeed)[0];
      keyLine = `api key   ${first.key} (user ${first.userId}, from API_KEYS_SEED)`;
    } else {
      keyLine = await devCredential(catalog);
    }
  } finally {
    await catalog.close();
  }

  const webEnv = { ...env, API_KEYS_SEED: config.apiKeysSeed };
  const web = fork(path.join(distRoot, 'src/web/server.js'), [], { env: webEnv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(web);
  await new Promise<void>((resolve, reject) => {
    web.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
    web.once('exit', (code) => reject(new Error(`front door exited with code ${code}`)));
  });
  const workerCount = Number(env.WORKERS ?? 1);
  const workersReady: Promise<void>[] = [];
  for (let i = 0; i < workerCount; i++) {
    const worker = fork(path.join(distRoot, 'workers/main.js'), [], { env: workerEnv(env), execArgv: workerExecArgv(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    workersReady.push(
      new Promise<void>((resolve, reject) => {
        worker.on('message', (m: { type?: string }) => m?.type === 'ready' && resolve());
        worker.once('exit', (code) => reject(new Error(`a worker process exited with code ${code} while starting`)));
      }),
    );
    worker.on('exit', (code, signal) => {
      if (!shuttingDown) log.warn({ code, signal }, 'a worker process exited; /health reports it — restart with `npm run start:worker`');
    });
    children.push(worker);
  }
  // "Up" means able to do work: /health is green once every worker has sent its first heartbeat.
  await Promise.all(workersReady);
  const runtimeFile = path.join(dataDir, 'runtime.json');
  fs.writeFileSync(runtimeFile, JSON.stringify({ baseUrl: config.baseUrl, redisUrl: config.redisUrl, mongoUrl: config.mongoUrl, pid: process.pid }, null, 2));
  cleanups.push(async () => fs.rmSync(runtimeFile, { force: true }));
  // One write, so a reader that waits for "Pictor is up" also has the key line.
  say(
    [
      '',
      `Pictor is up: ${config.baseUrl}   (health: ${config.baseUrl}/health)`,
      keyLine,
      `try:      curl -H "X-API-Key: <key>" -F file=@photo.jpg ${config.baseUrl}/upload`,
    ].join('\n'),
  );
}

const CREDENTIAL_FILE = () => path.join(dataDir, 'dev-credential.json');

/** A development credential that survives restarts (kept in ./data, also in the catalog snapshot). */
async function devCredential(catalog: Catalog): Promise<string> {
  const file = CREDENTIAL_FILE();
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { userId: string; key: string; secret: string };
    const { seedCredential } = await import('../src/catalog/api-keys.js');
    await seedCredential(catalog, saved.userId, saved.key, saved.secret);
    return `api key   ${saved.key} (user ${saved.userId}; secret in ${file})`;
  }
  const cred = await createCredential(catalog, 'demo', 'pro');
  // Printed to the user as their key: kept like any acknowledged write.
  await writeFileSynced(`${file}.tmp`, Buffer.from(JSON.stringify({ userId: cred.userId, key: cred.key, secret: cred.secret }, null, 2)), 0o600);
  await renameDurably(`${file}.tmp`, file);
  return `api key   ${cred.key} (user ${cred.userId}, new; saved with its secret in ${file})`;
}

let shuttingDown = false;
async function shutdown(signal: string) {
  if (shuttingDown) return;
  shuttingDown = true;
  say(`\n${signal}: stopping front door, then workers, then catalog and Redis`);
  const stopChild = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  if (children[0]) await stopChild(children[0]);
  await Promise.all(children.slice(1).map(stopChild));
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

main().catch(async (err: unknown) => {
  process.stderr.write(`Pictor failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  for (const child of children) child.kill('SIGTERM');
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  process.exit(1);
});

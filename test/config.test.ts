import { expect } from 'chai';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../src/config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WEB_ENTRY = path.resolve(here, '../src/web/server.js');

/** The variables loadConfig reads, removed from the inherited environment. */
const CONFIG_VARS = [
  'PORT', 'HOST', 'BASE_URL', 'CDN_URL', 'REDIS_URL', 'MONGO_URL', 'STORAGE_DRIVER', 'LOCAL_STORAGE_DIR', 'GCS_BUCKET',
  'GCS_API_ENDPOINT', 'GCS_PROJECT_ID', 'MAX_UPLOAD_BYTES', 'MAX_INPUT_PIXELS', 'WORKER_CONCURRENCY', 'JOB_TIMEOUT_MS',
  'QUEUE_MAX_WAITING', 'API_KEYS_SEED', 'LOG_LEVEL', 'API_KEY_CACHE_MS',
];

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARS) delete env[name];
  return { ...env, ...extra };
}

describe('config', () => {
  it('has working defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config.port).to.equal(8080);
    expect(config.baseUrl).to.equal('http://localhost:8080');
    expect(config.cdnUrl).to.equal('http://localhost:8080/files');
    expect(config.redisUrl).to.equal('redis://127.0.0.1:6379');
    expect(config.mongoUrl).to.equal('mongodb://127.0.0.1:27017/pictor');
    expect(config.storageDriver).to.equal('local');
    expect(config.localStorageDir).to.equal(path.resolve('./data/storage'));
    expect(config.gcsApiEndpoint).to.equal(undefined);
    expect(config.maxUploadBytes).to.equal(20 * 1024 * 1024);
    // One job more than cores (see src/config.ts).
    expect(config.workerConcurrency).to.equal(os.availableParallelism() + 1);
    expect(config.jobTimeoutMs).to.equal(30_000);
    // Old generation may reach 2× the live heap before a full GC (src/heap-growth.ts).
    expect(config.heapGrowingPercent).to.equal(100);
    expect(config.decodedSourceCacheMb).to.equal(128);
    expect(loadConfig({ DECODED_SOURCE_CACHE_MB: '0' }).decodedSourceCacheMb).to.equal(0);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).to.equal(0);
    expect(config.trustProxy).to.equal(false);
    expect(config.workerQueues).to.deep.equal([]);
  });

  it('reads TRUST_PROXY and WORKER_QUEUES (read by the front door and workers through the config only)', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).to.equal(true);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).to.equal(false);
    expect(loadConfig({ WORKER_QUEUES: ' passport , transform' }).workerQueues).to.deep.equal(['passport', 'transform']);
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '9000',
      BASE_URL: 'https://img.example.com/',
      CDN_URL: 'https://cdn.example.com',
      REDIS_URL: 'redis://redis:6379',
      MONGO_URL: 'mongodb://mongo:27017/pictor',
      STORAGE_DRIVER: 'gcs',
      GCS_BUCKET: 'bucket',
      GCS_API_ENDPOINT: 'http://127.0.0.1:4443',
      MAX_UPLOAD_BYTES: '1048576',
      WORKER_CONCURRENCY: '3',
      JOB_TIMEOUT_MS: '5000',
    });
    expect(config.port).to.equal(9000);
    expect(config.baseUrl).to.equal('https://img.example.com');
    expect(config.cdnUrl).to.equal('https://cdn.example.com');
    expect(config.redisUrl).to.equal('redis://redis:6379');
    expect(config.mongoUrl).to.equal('mongodb://mongo:27017/pictor');
    expect(config.storageDriver).to.equal('gcs');
    expect(config.gcsBucket).to.equal('bucket');
    expect(config.gcsApiEndpoint).to.equal('http://127.0.0.1:4443');
    expect(config.maxUploadBytes).to.equal(1048576);
    expect(config.workerConcurrency).to.equal(3);
    expect(config.jobTimeoutMs).to.equal(5000);
  });

  const bad: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ STORAGE_DRIVER: 's3' }, 'STORAGE_DRIVER'],
    [{ STORAGE_DRIVER: 'gcs' }, 'GCS_BUCKET'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ BASE_URL: 'notaurl' }, 'BASE_URL'],
    [{ MAX_UPLOAD_BYTES: '-1' }, 'MAX_UPLOAD_BYTES'],
    [{ WORKER_CONCURRENCY: '0' }, 'WORKER_CONCURRENCY'],
    [{ TRUST_PROXY: 'yes please' }, 'TRUST_PROXY'],
  ];
  for (const [env, variable] of bad) {
    it(`refuses ${JSON.stringify(env)} with a ConfigError naming ${variable}`, () => {
      let caught: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(ConfigError);
      const err = caught as ConfigError;
      expect(err.variable).to.equal(variable);
      expect(err.message).to.include(variable);
      expect(err.message).not.to.include('\n');
    });
  }

  it('stops the front door with one stderr line naming the variable', async function () {
    this.timeout(20_000);
    const child = spawn(process.execPath, [WEB_ENTRY], { env: cleanEnv({ PORT: 'abc' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).to.be.a('number').and.not.equal(0);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, stderr).to.have.length(1);
    expect(lines[0]).to.include('PORT');
    expect(lines[0]).to.include('abc');
    expect(stdout).to.equal('');
  });
});

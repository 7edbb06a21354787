// The job contract's queue names as a worker process takes them from WORKER_QUEUES: the names
// listed (all when none), and an unknown name stops a worker with one line naming the variable.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../src/config.js';
import { ALL_QUEUES, servedQueues } from '../../src/jobs/job-contract.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKER_ENTRY = path.resolve(here, '../../workers/main.js');

describe('job contract: the queues a worker serves', () => {
  it('serves the queues WORKER_QUEUES lists, all of them when it lists none', () => {
    expect(servedQueues([])).to.deep.equal(['upload-finalize', 'transform', 'passport', 'analyze']);
    expect(servedQueues([])).to.equal(ALL_QUEUES);
    expect(servedQueues(['passport', 'transform'])).to.deep.equal(['passport', 'transform']);
  });

  it('refuses an unknown queue name with a ConfigError naming WORKER_QUEUES', () => {
    let caught: unknown;
    try {
      servedQueues(['transform', 'thumbnails']);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ConfigError);
    expect((caught as ConfigError).variable).to.equal('WORKER_QUEUES');
    expect((caught as ConfigError).message).to.include('thumbnails').and.not.include('\n');
  });

  it('stops a worker process with one stderr line naming WORKER_QUEUES (exit 78) before it connects to anything', async function () {
    this.timeout(20_000);
    // Unreachable Redis and catalog: a worker that got past the check would hang or fail differently.
    const env = { ...process.env, WORKER_QUEUES: 'transform,thumbnails', REDIS_URL: 'redis://127.0.0.1:1', MONGO_URL: 'mongodb://127.0.0.1:1/none' };
    const child = spawn(process.execPath, [WORKER_ENTRY], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code, stderr).to.equal(78);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, stderr).to.have.length(1);
    expect(lines[0]).to.include('WORKER_QUEUES').and.include('thumbnails');
  });
});

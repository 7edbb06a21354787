// The front door as a cluster (`node dist/src/web/server.js` with FRONT_DOOR_PROCESSES=2), sharing
// Redis, catalog, storage and workers with a test service: both processes answer on one port,
// /metrics reports the requests of both whichever answers the scrape, a killed process is
// replaced, and SIGTERM stops the whole group with exit code 0.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../../scripts/lib/redis-server.js';
import { exited, waitFor } from '../faults/fault-helpers.js';
import { TestService } from '../harness/test-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const SERVER_ENTRY = path.resolve(here, '../../src/web/server.js');

/** Sum of pictor_http_requests_total samples for one route, from Prometheus text. */
function requestsFor(text: string, route: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith('pictor_http_requests_total{') && line.includes(`route="${route}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** Process ids of the cluster's children (the primary's children in /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const fs = await import('node:fs');
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/))
    .filter(Boolean)
    .map(Number);
}

describe('front-door cluster (FRONT_DOOR_PROCESSES=2)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let child: ChildProcess;
  let baseUrl: string;

  before(async () => {
    svc = await TestService.start();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    child = fork(SERVER_ENTRY, [], {
      env: { ...process.env, ...svc.env, PORT: String(port), BASE_URL: baseUrl, FRONT_DOOR_PROCESSES: '2' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: { type?: string }) => m?.type === 'listening' && resolve());
      child.once('exit', (code) => reject(new Error(`front-door cluster exited with code ${code}`)));
    });
  });

  after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited(child);
    }
    await svc.stop();
  });

  it('answers from both processes on one port; /metrics counts the requests of both', async () => {
    expect(await childrenOf(child.pid!)).to.have.length(2);
    const prefixes = new Set<string>();
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${baseUrl}/plans`);
      expect(res.status).to.equal(200);
      await res.arrayBuffer();
      // Request ids are `<random prefix per process>-<counter>`.
      prefixes.add(res.headers.get('x-request-id')!.split('-')[0]);
    }
    expect(prefixes.size, 'distinct front-door processes that answered').to.equal(2);
    // Every scrape, whichever process answers it, reports all 40 requests.
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${baseUrl}/metrics`);
      expect(res.status).to.equal(200);
      const text = await res.text();
      expect(requestsFor(text, '/plans')).to.equal(40);
      expect(text).to.include('pictor_queue_jobs{');
    }
  });

  it('replaces a process that dies, and SIGTERM stops the group with exit code 0', async () => {
    const [victim] = await childrenOf(child.pid!);
    process.kill(victim, 'SIGKILL');
    const replaced = await waitFor(
      'a replacement front-door process',
      async () => {
        const now = await childrenOf(child.pid!);
        return now.length === 2 && !now.includes(victim) ? now : null;
      },
      10_000,
    );
    expect(replaced).to.have.length(2);
    await waitFor('the replacement answering', async () => (await fetch(`${baseUrl}/plans`)).status === 200, 10_000);
    const children = await childrenOf(child.pid!);
    child.kill('SIGTERM');
    await exited(child);
    expect(child.exitCode).to.equal(0);
    for (const pid of children) expect(() => process.kill(pid, 0), `child ${pid} gone`).to.throw();
  });
});

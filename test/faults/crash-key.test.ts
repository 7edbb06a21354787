// Crash during a key creation with the keys CLI (`npm run keys -- create`): SIGKILL of the whole
// `npm start` tree just after the CLI printed the key, or while it runs. A key the CLI printed must
// authenticate after the restart; a CLI that failed promised nothing.
//
// Relies on the embedded catalog's journal (docs/durability.md): without it the catalog would lose
// its last seconds of writes on SIGKILL and this test would fail.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from '../harness/http.js';
import { sleep, useCrashSite } from './crash-helpers.js';

const KEYS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/keys.js');

describe('crash: SIGKILL of the whole npm start during a key creation', function () {
  this.timeout(300_000);
  const site = useCrashSite();
  const printed: string[] = [];

  /** Runs `keys create`; resolves with its key (null when it failed) and how long it ran. */
  function createKey(userId: string) {
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: site().dataDir };
    delete env.MONGO_URL;
    const started = performance.now();
    const cli = spawn(process.execPath, [KEYS, 'create', '--user', userId, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise<{ key: string | null; ms: number }>((resolve) =>
      cli.once('exit', (code) => resolve({ key: code === 0 ? (JSON.parse(out.trim()) as { key: string }).key : null, ms: performance.now() - started })),
    );
  }

  async function restartAndCheck() {
    const tree = await site().start();
    for (const k of printed) {
      const res = await request(tree.url('/cdn/usage'), { key: k });
      expect(res.status, `key ${k.slice(0, 8)}… printed by the CLI authenticates`).to.equal(200);
    }
  }

  it('killed right after `keys create` printed its key: the key authenticates after the restart', async () => {
    const { key } = await createKey('k-after');
    expect(key).to.be.a('string');
    printed.push(key!);
    await site().kill();
    await restartAndCheck();
  });

  // The machine is shared and process start-up varies: kill at fractions of a measured CLI run.
  for (const fraction of [0.5, 0.8, 0.95]) {
    it(`killed at ${fraction * 100} % of a \`keys create\` run: a printed key authenticates after the restart`, async () => {
      const { ms, key: measured } = await createKey(`k-measure-${fraction}`);
      if (measured) printed.push(measured);
      const run = createKey(`k-${fraction}`);
      await sleep(ms * fraction);
      await site().kill();
      const { key } = await run;
      if (key) printed.push(key);
      console.log(`      CLI ${key ? 'printed its key' : 'failed'} before the kill (${Math.round(ms * fraction)} ms into a ~${Math.round(ms)} ms run)`);
      await restartAndCheck();
    });
  }
});

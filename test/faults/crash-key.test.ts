// Crash during a key creation with the keys CLI (`npm run keys -- create`): SIGKILL of the whole
// `npm start` tree while the CLI runs, or just after it printed the key. A key the CLI printed must
// authenticate after the restart; a CLI that failed promised nothing.
//
// Needs the durable embedded catalog journal (branch h-journal, issue 15 item 1): without it the
// catalog loses its last seconds of writes on SIGKILL and this test fails.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { request } from '../harness/http.js';
import { crashSite, PictorTree, sleep } from './crash-helpers.js';

const KEYS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/keys.js');

describe('crash: SIGKILL of the whole npm start during a key creation', function () {
  this.timeout(300_000);
  let site: Awaited<ReturnType<typeof crashSite>>;
  let tree: PictorTree | null = null;
  const printed: string[] = [];

  before(async () => {
    site = await crashSite();
    tree = await PictorTree.start(site.dataDir, site.port);
  });
  after(async () => {
    await tree?.kill();
    site?.remove();
  });

  for (const killAfterMs of [0, 60, 150, 400]) {
    it(`killed ${killAfterMs} ms into \`keys create\`: a printed key authenticates after the restart`, async () => {
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: site.dataDir };
      delete env.MONGO_URL;
      const cli = spawn(process.execPath, [KEYS, 'create', '--user', `k${killAfterMs}`, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      cli.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve));
      await sleep(killAfterMs);
      await tree!.kill();
      const code = await exited;
      const key = code === 0 ? (JSON.parse(out.trim()) as { key: string }).key : null;
      if (key) printed.push(key);
      console.log(`      CLI ${key ? 'printed a key' : `failed (exit ${code})`} before the kill`);

      tree = await PictorTree.start(site.dataDir, site.port);
      for (const k of printed) {
        const res = await request(tree.url('/cdn/usage'), { key: k });
        expect(res.status, `key ${k.slice(0, 8)}… printed by the CLI authenticates`).to.equal(200);
      }
    });
  }
});

// Crash right after the answer: 30 uploads answered 200, a project and a
// key made with the keys CLI, then SIGKILL of the whole `npm start` tree 0, 0.3, 2 and 12 s later,
// and a restart on the same DATA_DIR. Nothing acknowledged may be missing afterwards. The 12 s
// case spans the embedded catalog's periodic snapshot/compaction.
//
// The keys CLI and project checks rely on the embedded catalog's journal (docs/durability.md):
// without it the catalog would lose its last seconds of writes on SIGKILL. Images survive either
// way (the reconcile re-adopts them from their metadata).
import { expect } from 'chai';
import { request } from '../harness/http.js';
import { assertNothingLost, createKeyWithCli, distinctJpeg, nothingYet, sleep, uploadAcknowledged, useCrashSite } from './crash-helpers.js';

describe('crash: SIGKILL of the whole npm start right after 30 acknowledged uploads', function () {
  this.timeout(600_000);
  const site = useCrashSite();
  const ack = nothingYet();
  let n = 0;

  for (const delayMs of (process.env.CRASH_DELAYS ?? "0,300,2000,12000").split(",").map(Number)) {
    it(`killed ${delayMs / 1000} s after the last answer: every acknowledged image, the project and the key are there`, async () => {
      const running = site().tree!;
      const slug = `crash-${delayMs}`;
      const project = await request(running.url('/cdn/projects'), { method: 'POST', key: running.key, json: { name: slug } });
      expect(project.status, JSON.stringify(project.body)).to.equal(200);
      ack.projects.push(project.body.slug as string);
      for (let i = 0; i < 30; i++) {
        n++;
        const res = await uploadAcknowledged(running, ack, await distinctJpeg(n), `crash/${delayMs}/${i}`, { project: project.body.slug as string });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
      }
      ack.keys.push(await createKeyWithCli(site().dataDir, `cli-${delayMs}`));
      await sleep(delayMs);
      await site().kill();

      const tree = await site().start();
      const { listed } = await assertNothingLost(tree, ack);
      expect(listed).to.equal(ack.images.size);
      // Nothing was adopted or quarantined that the catalog should have kept by itself.
      const line = /reconcile .*/.exec(tree.output())?.[0] ?? '';
      console.log(`      ${line}`);
    });
  }
});

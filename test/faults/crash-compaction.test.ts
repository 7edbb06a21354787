// Crash during the embedded catalog's snapshot/compaction: `npm start` with a tiny compaction
// threshold (EMBEDDED_CATALOG_COMPACT_BYTES) compacts again and again while uploads stream in;
// SIGKILL of the whole tree lands in the middle of that, several times, on the same DATA_DIR.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { assertNothingLost, distinctJpeg, nothingYet, sleep, uploadAcknowledged, useCrashSite } from './crash-helpers.js';

const COMPACTING = { EMBEDDED_CATALOG_COMPACT_BYTES: '4096' };

describe('crash: SIGKILL of the whole npm start during catalog compactions', function () {
  this.timeout(600_000);
  const site = useCrashSite({ startTree: false });
  const ack = nothingYet();
  let n = 0;

  for (const round of [1, 2, 3]) {
    it(`round ${round}: uploads streaming, compactions running, SIGKILL: nothing acknowledged is lost`, async () => {
      const tree = await site().start(COMPACTING);
      const catalogDir = path.join(site().dataDir, 'catalog');
      const snapshotsBefore = new Set(fs.readdirSync(catalogDir).filter((f) => f.startsWith('snapshot-')));
      let stop = false;
      const streams = [0, 1].map(async () => {
        while (!stop) {
          // Taken before the await: the other stream moves n meanwhile, and two streams uploading
          // different bytes under one public_id would race (the later finalize wins, not the later answer).
          const id = ++n;
          await uploadAcknowledged(tree, ack, await distinctJpeg(id), `compact/${id}`).catch(() => undefined);
        }
      });
      // Until at least one new snapshot appeared (a compaction ran), then a little more: the kill
      // falls among further compactions.
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && !fs.readdirSync(catalogDir).some((f) => f.startsWith('snapshot-') && !snapshotsBefore.has(f))) await sleep(50);
      await sleep(300 * round);
      await site().kill();
      stop = true;
      await Promise.all(streams);
      const compacted = fs.readdirSync(catalogDir).filter((f) => f.startsWith('snapshot-') && !snapshotsBefore.has(f));
      console.log(`      ${ack.images.size} uploads acknowledged so far; new snapshot files at the kill: ${compacted.join(', ') || 'none'}`);
      expect(compacted.length + (snapshotsBefore.size > 0 ? 1 : 0), 'compaction ran during the uploads').to.be.greaterThan(0);

      const restarted = await site().start(COMPACTING);
      console.log(`      ${/catalog .*/.exec(restarted.output())?.[0]?.slice(0, 200)}`);
      await assertNothingLost(restarted, ack);
      await site().kill();
    });
  }
});

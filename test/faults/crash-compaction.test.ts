// Crash during the embedded catalog's snapshot/compaction: `npm start` with a tiny compaction
// threshold (EMBEDDED_CATALOG_COMPACT_BYTES) compacts again and again while uploads stream in;
// SIGKILL of the whole tree lands in the middle of that, several times, on the same DATA_DIR.
import { expect } from 'chai';
import { assertNothingLost, nothingYet, sleep, uploadWhileCompacting, useCrashSite } from './crash-helpers.js';

const COMPACTING = { EMBEDDED_CATALOG_COMPACT_BYTES: '4096' };

describe('crash: SIGKILL of the whole npm start during catalog compactions', function () {
  this.timeout(600_000);
  const site = useCrashSite({ startTree: false });
  const ack = nothingYet();
  let n = 0;

  for (const round of [1, 2, 3]) {
    it(`round ${round}: uploads streaming, compactions running, SIGKILL: nothing acknowledged is lost`, async () => {
      const tree = await site().start(COMPACTING);
      const uploads = uploadWhileCompacting(tree, ack, site().dataDir, () => ++n);
      // Until at least one new snapshot appeared (a compaction ran), then a little more: the kill
      // falls among further compactions.
      await uploads.compacted;
      await sleep(300 * round);
      await site().kill();
      const compacted = await uploads.stop();
      console.log(`      ${ack.images.size} uploads acknowledged so far; new snapshot files at the kill: ${compacted.join(', ') || 'none'}`);
      expect(compacted.length + (uploads.hadSnapshot ? 1 : 0), 'compaction ran during the uploads').to.be.greaterThan(0);

      const restarted = await site().start(COMPACTING);
      console.log(`      ${/catalog .*/.exec(restarted.output())?.[0]?.slice(0, 200)}`);
      await assertNothingLost(restarted, ack);
      await site().kill();
    });
  }
});

// Crashes during replacements of existing public_ids (PNG replaced by JPEG: a new key, the old
// object deleted after the entry moved) and during deletes. SIGKILL reaches the whole `npm start`
// tree (see crash-helpers.ts); the same DATA_DIR starts again.
import { expect } from 'chai';
import sharp from 'sharp';
import { gradientJpeg } from '../../scripts/lib/generated-images.js';
import { request } from '../harness/http.js';
import { assertNothingLost, nothingYet, sha256, sleep, stagedUploadsFinished, uploadAcknowledged, useCrashSite, type PictorTree } from './crash-helpers.js';

const COUNT = 12;

async function listedByPublicId(tree: PictorTree): Promise<Map<string, { imageId: string; public_url: string }[]>> {
  const byId = new Map<string, { imageId: string; public_url: string }[]>();
  let cursor = '';
  for (;;) {
    const page = await request(tree.url(`/cdn/images?limit=100${cursor ? `&cursor=${cursor}` : ''}`), { key: tree.key });
    for (const image of page.body.images as { imageId: string; public_url: string; public_id: string }[]) {
      byId.set(image.public_id, [...(byId.get(image.public_id) ?? []), image]);
    }
    if (!page.body.has_more) return byId;
    cursor = page.body.next_cursor as string;
  }
}

describe('crash: SIGKILL of the whole npm start during replacements and deletes', function () {
  this.timeout(300_000);
  const site = useCrashSite();
  const ack = nothingYet();

  it('during a replacement of existing public_ids: each is listed once, with the old or the new bytes (the new once answered)', async () => {
    const running = site().tree!;
    const old = new Map<string, string>();
    for (let i = 0; i < COUNT; i++) {
      const png = await sharp({ create: { width: 900, height: 700, channels: 3, background: { r: i * 20, g: 90, b: 200 } } }).png({ compressionLevel: 1 }).toBuffer();
      const res = await uploadAcknowledged(running, ack, png, `rep/${i}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      old.set(`rep/${i}`, sha256(png));
    }
    await sleep(11_000); // the originals are in the catalog's snapshot before the replacements start
    const replacements = await Promise.all(Array.from({ length: COUNT }, (_, i) => gradientJpeg(1800 + i * 4, 1300, 92)));
    let answered = 0;
    const pending = replacements.map((bytes, i) =>
      uploadAcknowledged(running, ack, bytes, `rep/${i}`)
        .then((res) => (res.status === 200 ? ++answered && 200 : res.status))
        .catch(() => 'no answer'),
    );
    while (answered < 2) await sleep(5);
    await site().kill();
    const outcomes = await Promise.all(pending);
    console.log(`      at the kill: ${answered} of ${COUNT} replacements answered; outcomes ${outcomes.join(' ')}`);

    const tree = await site().start();
    console.log(`      ${/reconcile .*/.exec(tree.output())?.[0]}`);
    const waited = performance.now();
    await stagedUploadsFinished(site().dataDir); // replacements whose jobs survived finish
    console.log(`      the surviving replacement jobs finished ${Math.round(performance.now() - waited)} ms after the start`);
    const listed = await listedByPublicId(tree);
    for (let i = 0; i < COUNT; i++) {
      const publicId = `rep/${i}`;
      const entries = listed.get(publicId) ?? [];
      expect(entries, `${publicId} listed exactly once`).to.have.length(1);
      const bytes = (await request(entries[0].public_url)).bytes;
      const answeredNew = outcomes[i] === 200;
      if (answeredNew) expect(sha256(bytes), `${publicId}: the acknowledged replacement`).to.equal(sha256(replacements[i]));
      else expect([old.get(publicId), sha256(replacements[i])], `${publicId}: old or new bytes`).to.include(sha256(bytes));
      // Unanswered: whichever version is there is what counts from now on.
      if (!answeredNew) {
        for (const [id, image] of ack.images) if (image.publicId === publicId) ack.images.delete(id);
        ack.images.set(entries[0].imageId, { url: entries[0].public_url, sha256: sha256(bytes), publicId });
      }
    }
    await assertNothingLost(tree, ack);
  });

  it('during deletes: acknowledged deletes stay gone after kill, replay and reconcile; counts agree', async () => {
    const running = site().tree!;
    const targets: string[] = [];
    for (let i = 0; i < COUNT; i++) {
      const res = await uploadAcknowledged(running, ack, await gradientJpeg(200 + i, 150, 80), `del/${i}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      targets.push(res.body.imageId as string);
    }
    let answered = 0;
    const pending = targets.map((imageId) =>
      request(running.url(`/cdn/${imageId}`), { method: 'DELETE', key: running.key })
        .then((res) => {
          if (res.status === 200) {
            answered++;
            ack.deleted.set(imageId, ack.images.get(imageId)!.url);
          }
          return res.status;
        })
        .catch(() => 'no answer'),
    );
    while (answered < 3) await sleep(1);
    await site().kill();
    const outcomes = await Promise.all(pending);
    console.log(`      at the kill: ${answered} of ${COUNT} deletes answered; outcomes ${outcomes.join(' ')}`);
    // An unanswered delete may or may not have happened: no promise either way.
    for (const imageId of targets) ack.images.delete(imageId);

    let tree = await site().start();
    console.log(`      ${/reconcile .*/.exec(tree.output())?.[0]}`);
    await assertNothingLost(tree, ack);
    // And once more: a second crash and start (replay, reconcile again) brings nothing back.
    tree = await site().start();
    await assertNothingLost(tree, ack);
  });
});

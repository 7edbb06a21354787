// Damage is not a torn tail: a bad record with valid records after it — in an old record of the
// last segment, in an earlier segment, or a snapshot cut short — stops the start with the file,
// the offset and the number of records after it named, and changes nothing on disk. Salvage then
// keeps every readable record before and after the damage and sets the damaged bytes aside.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scanAllFrames } from '../../../src/catalog/journal/frames.js';
import { JournalDamageError } from '../../../src/catalog/journal/journal-damage.js';
import { salvageJournal } from '../../../src/catalog/journal/salvage.js';
import { boundaries, ids, insertRange, journalFiles, range, startCatalog } from './journal-helpers.js';

/** Every file of the directory with its bytes: a refused start must leave all of them as they were. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).sort().map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('base64')]));
}

async function expectRefusal(dir: string, file: string, offset: number, recordsAfter: number): Promise<void> {
  const before = contents(dir);
  let error: unknown;
  await startCatalog(dir).then(
    (s) => s.stop(),
    (err: unknown) => (error = err),
  );
  expect(error, 'the start must be refused').to.be.instanceOf(JournalDamageError);
  const damage = error as JournalDamageError;
  expect([damage.file, damage.offset, damage.recordsAfter]).to.deep.equal([file, offset, recordsAfter]);
  expect(damage.message).to.include(file).and.include(`at byte ${offset}`).and.include('npm run catalog -- salvage');
  expect(contents(dir)).to.deep.equal(before);
}

function flip(file: string, offset: number): void {
  const bytes = fs.readFileSync(file);
  bytes[offset] ^= 0x5a;
  fs.writeFileSync(file, bytes);
}

describe('catalog journal damage', function () {
  this.timeout(60_000);
  let dir: string;

  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-damage-')), 'catalog');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it('a flipped bit in an old record of the last segment refuses the start; salvage keeps every record before and after it', async () => {
    const server = await startCatalog(dir);
    await insertRange(server.url, 0, 40);
    await server.stop();
    const [segment] = journalFiles(dir, 'journal');
    const edges = boundaries(fs.readFileSync(segment));
    const records = edges.length - 1; // database and collection creation, then 40 inserts
    // Record 12 is the insert of _id 10.
    flip(segment, edges[12] + 20);
    await expectRefusal(dir, segment, edges[12], records - 13);

    const report = await salvageJournal(dir);
    const salvaged = report.files.find((f) => f.file === segment)!;
    expect(salvaged.kept).to.equal(records - 1);
    expect(salvaged.damage.map((d) => [d.offset, d.bytes])).to.deep.equal([[edges[12], edges[13] - edges[12]]]);
    expect(fs.readFileSync(salvaged.damage[0].setAsideAs).length).to.equal(edges[13] - edges[12]);
    const again = await startCatalog(dir);
    expect(await ids(again.url)).to.deep.equal(range(0, 40).filter((i) => i !== 10));
    await again.stop();
  });

  it('a flipped bit in an earlier segment refuses the start; salvage keeps the later segments', async () => {
    for (const [from, to] of [
      [0, 20],
      [20, 40],
    ]) {
      const server = await startCatalog(dir); // each run journals to a segment of its own
      await insertRange(server.url, from, to);
      await server.stop();
    }
    const [first, second] = journalFiles(dir, 'journal');
    expect(second).to.be.a('string');
    const edges = boundaries(fs.readFileSync(first));
    flip(first, edges.at(-2)! - 3); // the second-to-last record of the first segment: one valid record after it
    await expectRefusal(dir, first, edges.at(-3)!, 1);

    await salvageJournal(dir);
    const again = await startCatalog(dir);
    expect(await ids(again.url)).to.deep.equal(range(0, 40).filter((i) => i !== 18));
    await again.stop();
  });

  it('a snapshot cut short refuses the start naming the snapshot; salvage keeps its whole records and the segments after it', async () => {
    const server = await startCatalog(dir, 2 ** 40); // compaction only when asked
    await insertRange(server.url, 0, 30);
    await server.journal!.compact();
    await insertRange(server.url, 30, 40);
    await server.stop();
    const [snapshot] = journalFiles(dir, 'snapshot');
    const full = fs.readFileSync(snapshot);
    const cut = full.length - 60; // the end record and part of the last document
    fs.truncateSync(snapshot, cut);
    const whole = scanAllFrames(full.subarray(0, cut));
    expect(whole.damage).to.have.length(1);
    await expectRefusal(dir, snapshot, whole.damage[0].offset, 0);

    const report = await salvageJournal(dir);
    expect(report.files.find((f) => f.file === snapshot)!.documentsLost).to.equal(null);
    const again = await startCatalog(dir);
    const kept = await ids(again.url);
    // Every document whose record survived whole (all but the one cut), then everything journaled after the snapshot.
    expect(kept.filter((i) => i < 30)).to.have.length(29);
    expect(kept.filter((i) => i >= 30)).to.deep.equal(range(30, 40));
    await again.stop();
  });

  it('a bad record at the very end of the last segment, nothing valid after it, is a torn tail: cut off, the start goes on', async () => {
    const server = await startCatalog(dir);
    await insertRange(server.url, 0, 10);
    await server.stop();
    const [segment] = journalFiles(dir, 'journal');
    const length = fs.statSync(segment).size;
    fs.truncateSync(segment, length - 5);
    const again = await startCatalog(dir);
    expect(again.journal!.loadReport.droppedTail).to.include({ file: segment });
    expect(await ids(again.url)).to.deep.equal(range(0, 9));
    await again.stop();
  });
});

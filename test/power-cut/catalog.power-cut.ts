// Power cuts of the embedded catalog alone: a journaled catalog process (test/harness/
// journaled-catalog-process.ts) on the power-cut file system, eight writers inserting and
// deleting while a tiny compaction threshold rotates segments and writes snapshots all the time,
// then a cut; after each, the catalog starts on what is left with every acknowledged insert there
// and every acknowledged delete gone. Three rounds on one directory.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import mongoose from 'mongoose';
import { scanFrames } from '../../src/catalog/journal/frames.js';
import { rebuildFromImage, resetImage } from '../harness/power-cut-fs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CATALOG_PROCESS = path.resolve(here, '../harness/journaled-catalog-process.js');
const POWER_CUT_FS = pathToFileURL(path.resolve(here, '../harness/power-cut-fs.js')).href;

/** Every catalog process started, killed after the suite whatever happened (a failed test leaves one running). */
const running = new Set<ChildProcess>();

function startCatalog(dataDir: string, image: string): Promise<{ child: ChildProcess; url: string }> {
  const env = { ...process.env, LOG_LEVEL: 'warn', NODE_OPTIONS: `--import=${POWER_CUT_FS}`, PICTOR_POWER_CUT_IMAGE: image };
  const child = spawn(process.execPath, [CATALOG_PROCESS, dataDir, String(8 * 1024)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`catalog process exited (${code}) before it started:\n${out}`)));
  });
}

async function cut(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('power cut: the embedded catalog while it journals and compacts', function () {
  this.timeout(120_000);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-catalog-cut-')));
  const dataDir = path.join(root, 'catalog');
  const image = path.join(root, 'durable-image');
  const acked = new Set<string>();
  const deleted = new Set<string>();
  const attemptedDeletes = new Set<string>();
  before(() => {
    fs.mkdirSync(dataDir);
    resetImage(dataDir, image);
  });
  after(async () => {
    for (const child of running) await cut(child);
    fs.rmSync(root, { recursive: true, force: true });
  });

  for (const round of [1, 2, 3]) {
    it(`round ${round}: every acknowledged insert is there and every acknowledged delete gone`, async () => {
      const { child, url } = await startCatalog(dataDir, image);
      const client = new mongoose.mongo.MongoClient(url, { maxPoolSize: 16, serverSelectionTimeoutMS: 2000 });
      await client.connect();
      const coll = client.db().collection<{ _id: string; pad?: string }>('items');
      // Everything acknowledged before this round's cut is still there now.
      const rows = new Set((await coll.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
      expect([...acked].filter((id) => !attemptedDeletes.has(id) && !rows.has(id)), 'acknowledged inserts lost').to.deep.equal([]);
      expect([...deleted].filter((id) => rows.has(id)), 'acknowledged deletes back').to.deep.equal([]);
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const id = `r${round}-w${w}-${i}`;
          try {
            await coll.insertOne({ _id: id, pad: 'p'.repeat(300) });
            acked.add(id);
            if (i % 4 === 3) {
              const victim = `r${round}-w${w}-${i - 2}`;
              attemptedDeletes.add(victim);
              await coll.deleteOne({ _id: victim });
              deleted.add(victim);
            }
          } catch {
            return; // the power is off
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      await new Promise((resolve) => setTimeout(resolve, 1200 + round * 300));
      await cut(child);
      stop = true;
      await Promise.all(writers);
      await client.close(true);
      const report = rebuildFromImage(dataDir, image);
      expect(report.files).to.be.greaterThan(0);
    });
  }

  it('a torn tail cut off at a start stays cut off through the next power cut', async () => {
    const segments = fs.readdirSync(dataDir).filter((f) => /^journal-\d+\.log$/.test(f)).sort();
    const last = path.join(dataDir, segments.at(-1)!);
    // A crash mid-append left half a record (made durable here, as the crash left it).
    fs.appendFileSync(last, Buffer.from([0x40, 0, 0, 0, 1, 2, 3]));
    resetImage(dataDir, image);
    const { child, url } = await startCatalog(dataDir, image); // cuts the torn bytes off
    const client = new mongoose.mongo.MongoClient(url);
    await client.connect();
    await client.db().collection<{ _id: string }>('items').insertOne({ _id: 'after-torn-tail' });
    acked.add('after-torn-tail');
    await client.close();
    await cut(child);
    rebuildFromImage(dataDir, image);
  });

  it('records appended before a segment rotation and acknowledged after it are durable in the old segment', async () => {
    // One flush writes the end of one segment and the start of the next: both must be synced.
    const dir = path.join(root, 'rotation');
    fs.mkdirSync(dir);
    resetImage(dir, image);
    const writer = pathToFileURL(path.resolve(here, '../../src/catalog/journal/journal-writer.js')).href;
    const frames = pathToFileURL(path.resolve(here, '../../src/catalog/journal/frames.js')).href;
    const script = `
      import { JournalWriter } from ${JSON.stringify(writer)};
      import { encodeFrame } from ${JSON.stringify(frames)};
      const w = new JournalWriter(process.argv[1], 1);
      w.append(encodeFrame(Buffer.from('a')));
      await w.whenDurable();
      w.append(encodeFrame(Buffer.from('b')));
      w.rotate();
      w.append(encodeFrame(Buffer.from('c')));
      await w.whenDurable();
      process.stdout.write('acknowledged\\n');
      setInterval(() => undefined, 1000);`;
    const env = { ...process.env, NODE_OPTIONS: `--import=${POWER_CUT_FS}`, PICTOR_POWER_CUT_IMAGE: image };
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, dir], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    running.add(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('acknowledged') && resolve());
      child.once('exit', (code) => reject(new Error(`writer exited (${code})`)));
    });
    await cut(child);
    rebuildFromImage(dir, image);
    const payloads = (name: string) => scanFrames(fs.readFileSync(path.join(dir, name))).payloads.map(String);
    expect(payloads('journal-000000000001.log')).to.deep.equal(['a', 'b']);
    expect(payloads('journal-000000000002.log')).to.deep.equal(['c']);
  });

  it('after the last cut the catalog starts with everything acknowledged', async () => {
    const { child, url } = await startCatalog(dataDir, image);
    const client = new mongoose.mongo.MongoClient(url);
    await client.connect();
    const rows = new Set((await client.db().collection<{ _id: string }>('items').find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id));
    await client.close();
    await cut(child);
    expect([...acked].filter((id) => !attemptedDeletes.has(id) && !rows.has(id)), 'acknowledged inserts lost').to.deep.equal([]);
    expect([...deleted].filter((id) => rows.has(id)), 'acknowledged deletes back').to.deep.equal([]);
    console.log(`      ${acked.size} inserts and ${deleted.size} deletes acknowledged over three cuts`);
  });
});

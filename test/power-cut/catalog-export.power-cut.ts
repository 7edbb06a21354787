// exportCatalogSnapshot's promise: once it resolves, the snapshot file survives a power cut whole.
// A process on the power-cut file system exports a catalog of 2,000 documents and says so; the
// cut follows at once; the file left must import completely.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { importCatalogSnapshot, startEmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';
import { rebuildFromImage, resetImage } from '../harness/power-cut-fs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const POWER_CUT_FS = pathToFileURL(path.resolve(here, '../harness/power-cut-fs.js')).href;
const SERVER = pathToFileURL(path.resolve(here, '../../src/catalog/embedded-catalog-server.js')).href;

const EXPORTER = `
import { exportCatalogSnapshot, startEmbeddedCatalogServer } from ${JSON.stringify(SERVER)};
import mongoose from 'mongoose';
const server = await startEmbeddedCatalogServer();
const client = new mongoose.mongo.MongoClient(server.url);
await client.connect();
await client.db().collection('items').insertMany(Array.from({ length: 2000 }, (_, i) => ({ _id: i, pad: 'p'.repeat(100) })));
const summary = await exportCatalogSnapshot(server.url, process.argv[1]);
process.stdout.write(JSON.stringify(summary) + '\\n');
setInterval(() => undefined, 1000); // waits for the cut
`;

describe('power cut: right after a catalog export', function () {
  this.timeout(60_000);
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-export-cut-')));
  const dataDir = path.join(root, 'exports');
  const image = path.join(root, 'durable-image');
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('the exported file is whole and imports every document', async () => {
    fs.mkdirSync(dataDir);
    resetImage(dataDir, image);
    const file = path.join(dataDir, 'catalog.jsonl');
    const env = { ...process.env, NODE_OPTIONS: `--import=${POWER_CUT_FS}`, PICTOR_POWER_CUT_IMAGE: image };
    const child = spawn(process.execPath, ['--input-type=module', '-e', EXPORTER, file], { env, cwd: path.resolve(here, '../../..'), stdio: ['ignore', 'pipe', 'inherit'] });
    const summary = await new Promise<{ documents: number }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]) as { documents: number });
      });
      child.once('exit', (code) => reject(new Error(`exporter exited (${code})`)));
    });
    expect(summary.documents).to.equal(2000);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    rebuildFromImage(dataDir, image);

    const server = await startEmbeddedCatalogServer();
    try {
      const imported = await importCatalogSnapshot(server.url, file);
      expect(imported?.documents).to.equal(2000);
    } finally {
      await server.stop();
    }
  });
});

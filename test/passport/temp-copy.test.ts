import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { STALE_TEMP_COPY_MS, sweepStaleTempCopies, unwritableTempDir, withTempCopy } from '../../src/passport/temp-copy.js';

describe('passport temporary input copies', () => {
  let dir: string;
  let savedTmpdir: string | undefined;
  beforeEach(() => {
    // A directory of its own: other tests' and processes' copies are not touched.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-temp-copy-test-'));
    savedTmpdir = process.env.TMPDIR;
    process.env.TMPDIR = dir;
  });
  afterEach(() => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the copy holds the bytes while in use and is gone after, also when the use fails', async () => {
    const bytes = Buffer.from('not really a jpeg');
    const seen = await withTempCopy(bytes, 'jpg', async (file) => {
      expect(path.dirname(file)).to.equal(dir);
      expect(fs.readFileSync(file).equals(bytes)).to.equal(true);
      return file;
    });
    expect(fs.existsSync(seen as string)).to.equal(false);
    let failedFile = '';
    const failing = withTempCopy(bytes, 'jpg', async (file) => {
      failedFile = file;
      throw new Error('decode failed');
    });
    const error = await failing.then(() => null, (e: Error) => e);
    expect(error?.message).to.equal('decode failed');
    expect(fs.existsSync(failedFile)).to.equal(false);
    expect(fs.readdirSync(dir)).to.deep.equal([]);
  });

  it('null without running the use when no copy can be written', async () => {
    process.env.TMPDIR = path.join(dir, 'missing', 'deeper');
    let ran = false;
    const result = await withTempCopy(Buffer.from('x'), 'jpg', async () => {
      ran = true;
      return 1;
    });
    expect(result).to.equal(null);
    expect(ran).to.equal(false);
  });

  it('names the temporary directory when it cannot be written to, so the worker can warn', async () => {
    expect(await unwritableTempDir()).to.equal(null);
    const missing = path.join(dir, 'missing');
    process.env.TMPDIR = missing;
    expect(await unwritableTempDir()).to.equal(missing);
  });

  it('the sweep removes copies older than a decode can take and keeps fresh ones and other files', async () => {
    const stale = path.join(dir, 'pictor-region-stale.jpg');
    const fresh = path.join(dir, 'pictor-region-fresh.jpg');
    const other = path.join(dir, 'someone-else.jpg');
    for (const f of [stale, fresh, other]) fs.writeFileSync(f, 'x');
    const old = new Date(Date.now() - STALE_TEMP_COPY_MS - 60_000);
    fs.utimesSync(stale, old, old);
    fs.utimesSync(other, old, old);
    expect(await sweepStaleTempCopies()).to.equal(1);
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['pictor-region-fresh.jpg', 'someone-else.jpg']);
  });
});

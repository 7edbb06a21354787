// One contract, two drivers: every Storage implementation must pass `storageContract`. It runs
// against LocalStorage on a temp dir and against GcsStorage using the real @google-cloud/storage
// client talking to the in-memory fake GCS server (test/fixtures/fake-gcs-server.ts).
// Driver-specific guarantees (symlinks, temp files, fault mapping) follow in their own blocks.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Storage as GcsClient } from '@google-cloud/storage';
import { expect } from 'chai';
import { GcsStorage } from '../../src/storage/gcs-storage.js';
import { LocalStorage } from '../../src/storage/local-storage.js';
import {
  InvalidStorageKeyError,
  StorageNotFoundError,
  StorageRangeError,
  StorageUnavailableError,
  type Storage,
} from '../../src/storage/storage.js';
import { crc32c, crc32cBase64, startFakeGcs, type FakeGcs } from '../fixtures/fake-gcs-server.js';

const PUBLIC_BASE_URL = 'https://cdn.example.test/files';
const UNSAFE_KEYS = ['../x', 'a/../../x', '/abs', 'a//b', 'a\\b', ''];

interface StorageUnderTest {
  storage: Storage;
  dispose(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Deterministic pseudo-random bytes, so failures are reproducible. */
function patternBytes(length: number, seed = 1): Buffer {
  const bytes = Buffer.alloc(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function md5Hex(data: Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject');
}

async function listAllKeys(storage: Storage, prefix: string, limit: number): Promise<{ keys: string[]; pageSizes: number[] }> {
  const keys: string[] = [];
  const pageSizes: number[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result = await storage.list(prefix, { limit, cursor });
    keys.push(...result.items.map((item) => item.key));
    pageSizes.push(result.items.length);
    if (result.nextCursor === null) return { keys, pageSizes };
    cursor = result.nextCursor;
  }
  throw new Error('pagination did not terminate');
}

// ---------------------------------------------------------------------------------------------
// The shared contract

function storageContract(driverName: string, createStorageUnderTest: () => Promise<StorageUnderTest>): void {
  describe(`Storage contract — ${driverName}`, () => {
    let storage: Storage;
    let dispose: () => Promise<void>;

    beforeEach(async () => {
      ({ storage, dispose } = await createStorageUnderTest());
    });
    afterEach(async () => {
      await dispose();
    });

    it('names its driver', () => {
      expect(storage.driver).to.equal(driverName);
    });

    it('puts a buffer and reads the same bytes back (read and get)', async () => {
      const body = patternBytes(10_000, 7);
      const stored = await storage.put('images/one.bin', body, { contentType: 'image/png' });
      expect(stored).to.include({ key: 'images/one.bin', size: body.length, contentType: 'image/png' });
      expect(stored.etag).to.be.a('string').and.not.equal('');
      expect(stored.updatedAt).to.be.instanceOf(Date);
      expect((await storage.read('images/one.bin')).equals(body)).to.equal(true);
      expect((await readAll(await storage.get('images/one.bin'))).equals(body)).to.equal(true);
    });

    it('puts a stream and reads the same bytes back', async () => {
      const parts = [patternBytes(1000, 1), Buffer.from('middle'), patternBytes(70_000, 2)];
      const stored = await storage.put('streamed/file.bin', Readable.from(parts), { contentType: 'application/x-test' });
      const expected = Buffer.concat(parts);
      expect(stored.size).to.equal(expected.length);
      expect((await storage.read('streamed/file.bin')).equals(expected)).to.equal(true);
    });

    it('stores and reads back an empty object (buffer and stream)', async () => {
      await storage.put('empty.txt', Buffer.alloc(0), { contentType: 'text/plain' });
      expect((await storage.read('empty.txt')).length).to.equal(0);
      expect((await readAll(await storage.get('empty.txt'))).length).to.equal(0);
      expect((await storage.stat('empty.txt'))?.size).to.equal(0);
      await storage.put('empty-stream.txt', Readable.from([]));
      expect((await storage.read('empty-stream.txt')).length).to.equal(0);
    });

    it('stat reports size, content type, metadata and cache control', async () => {
      await storage.put('meta/x.jpg', Buffer.from('0123456789'), {
        contentType: 'image/jpeg',
        metadata: { owner: 'p1', width: '640' },
        cacheControl: 'public, max-age=31536000, immutable',
      });
      const info = await storage.stat('meta/x.jpg');
      expect(info).to.not.equal(null);
      expect(info).to.include({ key: 'meta/x.jpg', size: 10, contentType: 'image/jpeg', cacheControl: 'public, max-age=31536000, immutable' });
      expect(info!.metadata).to.deep.equal({ owner: 'p1', width: '640' });
      expect(info!.updatedAt).to.be.instanceOf(Date);
      expect(Math.abs(info!.updatedAt.getTime() - Date.now())).to.be.below(60_000);
    });

    it('defaults the content type to application/octet-stream', async () => {
      await storage.put('untyped', Buffer.from('x'));
      expect((await storage.stat('untyped'))?.contentType).to.equal('application/octet-stream');
    });

    it('stat of a missing key is null; get and read of a missing key reject with StorageNotFoundError', async () => {
      expect(await storage.stat('missing/nothing.png')).to.equal(null);
      const getError = await rejectionOf(storage.get('missing/nothing.png'));
      expect(getError).to.be.instanceOf(StorageNotFoundError);
      expect((getError as StorageNotFoundError).key).to.equal('missing/nothing.png');
      expect(await rejectionOf(storage.read('missing/nothing.png'))).to.be.instanceOf(StorageNotFoundError);
      expect(await rejectionOf(storage.get('missing/nothing.png', { start: 0, end: 1 }))).to.be.instanceOf(StorageNotFoundError);
    });

    it('serves inclusive byte ranges', async () => {
      const body = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
      await storage.put('range.bin', body);
      expect([...(await readAll(await storage.get('range.bin', { start: 90 })))]).to.deep.equal([...body.subarray(90)]);
      expect([...(await readAll(await storage.get('range.bin', { start: 10, end: 19 })))]).to.deep.equal([...body.subarray(10, 20)]);
      expect([...(await readAll(await storage.get('range.bin', { start: 99, end: 99 })))]).to.deep.equal([99]);
      expect([...(await readAll(await storage.get('range.bin', { start: 0, end: 0 })))]).to.deep.equal([0]);
      // An end past the object is clamped, as HTTP does.
      expect([...(await readAll(await storage.get('range.bin', { start: 95, end: 10_000 })))]).to.deep.equal([95, 96, 97, 98, 99]);
    });

    it('rejects unsatisfiable or malformed ranges with StorageRangeError', async () => {
      await storage.put('range.bin', patternBytes(100));
      expect(await rejectionOf(storage.get('range.bin', { start: 100 }))).to.be.instanceOf(StorageRangeError);
      expect(await rejectionOf(storage.get('range.bin', { start: 5, end: 4 }))).to.be.instanceOf(StorageRangeError);
      expect(await rejectionOf(storage.get('range.bin', { start: -1 }))).to.be.instanceOf(StorageRangeError);
    });

    it('overwriting replaces bytes, content type and metadata, and changes the etag', async () => {
      const first = await storage.put('over/write.txt', Buffer.from('version one'), { contentType: 'text/plain', metadata: { v: '1' } });
      const second = await storage.put('over/write.txt', Buffer.from('second version, longer'), {
        contentType: 'text/markdown',
        metadata: { w: '2' },
      });
      expect(second.etag).to.not.equal(first.etag);
      expect((await storage.read('over/write.txt')).toString()).to.equal('second version, longer');
      const info = await storage.stat('over/write.txt');
      expect(info).to.include({ size: 22, contentType: 'text/markdown', etag: second.etag });
      expect(info!.metadata).to.deep.equal({ w: '2' });
      expect(info!.cacheControl).to.equal(undefined);
    });

    it('gives the same bytes the same etag and different bytes a different one', async () => {
      const a = await storage.put('e/a', Buffer.from('same'));
      const b = await storage.put('e/b', Buffer.from('same'));
      const c = await storage.put('e/c', Buffer.from('different'));
      expect(a.etag).to.equal(b.etag);
      expect(c.etag).to.not.equal(a.etag);
    });

    it('lists by prefix in lexicographic order and excludes keys outside the prefix', async () => {
      const keys = ['photos/b.jpg', 'photos/a.jpg', 'photos/sub/c.jpg', 'photos-x/d.jpg', 'photosx/e.jpg', 'other/f.jpg', 'photos.jpg'];
      for (const key of keys) await storage.put(key, Buffer.from(key), { contentType: 'image/jpeg' });

      const folder = await storage.list('photos/');
      expect(folder.items.map((item) => item.key)).to.deep.equal(['photos/a.jpg', 'photos/b.jpg', 'photos/sub/c.jpg']);
      expect(folder.nextCursor).to.equal(null);
      expect(folder.items[0]).to.include({ size: 'photos/a.jpg'.length, contentType: 'image/jpeg' });

      // A prefix is not a folder: 'photos' also matches siblings, ordered by bytes ('-' < '.' < '/' < 'x').
      const loose = await storage.list('photos');
      expect(loose.items.map((item) => item.key)).to.deep.equal([
        'photos-x/d.jpg',
        'photos.jpg',
        'photos/a.jpg',
        'photos/b.jpg',
        'photos/sub/c.jpg',
        'photosx/e.jpg',
      ]);
      expect((await storage.list('photos/s')).items.map((item) => item.key)).to.deep.equal(['photos/sub/c.jpg']);
      expect((await storage.list('')).items.map((item) => item.key)).to.deep.equal([...keys].sort());
      expect(await storage.list('nothing/here/')).to.deep.equal({ items: [], nextCursor: null });
    });

    it('paginates with limit 2 across 5 objects, yielding each exactly once, in order', async () => {
      const keys = ['p/1', 'p/2/a', 'p/2/b', 'p/3', 'p/4'];
      for (const key of [...keys].reverse()) await storage.put(key, Buffer.from(key));
      await storage.put('q/outside', Buffer.from('x'));
      const { keys: listed, pageSizes } = await listAllKeys(storage, 'p/', 2);
      expect(listed).to.deep.equal(keys);
      expect(pageSizes.every((size) => size <= 2)).to.equal(true);
      expect(pageSizes.slice(0, -1).every((size) => size === 2)).to.equal(true);
      expect(pageSizes.filter((size) => size > 0)).to.deep.equal([2, 2, 1]);
    });

    it('rejects an invalid list limit or prefix', async () => {
      expect(await rejectionOf(storage.list('', { limit: 0 }))).to.be.instanceOf(RangeError);
      expect(await rejectionOf(storage.list('../'))).to.be.instanceOf(InvalidStorageKeyError);
      expect(await rejectionOf(storage.list('a/../../'))).to.be.instanceOf(InvalidStorageKeyError);
      expect(await rejectionOf(storage.list('/abs'))).to.be.instanceOf(InvalidStorageKeyError);
    });

    it('deletes: true once, then false; the object is gone everywhere', async () => {
      await storage.put('del/me.txt', Buffer.from('bye'));
      await storage.put('del/keep.txt', Buffer.from('stay'));
      expect(await storage.delete('del/me.txt')).to.equal(true);
      expect(await storage.delete('del/me.txt')).to.equal(false);
      expect(await storage.delete('never/existed')).to.equal(false);
      expect(await storage.stat('del/me.txt')).to.equal(null);
      expect(await rejectionOf(storage.get('del/me.txt'))).to.be.instanceOf(StorageNotFoundError);
      expect((await storage.list('del/')).items.map((item) => item.key)).to.deep.equal(['del/keep.txt']);
    });

    it('refuses unsafe keys with InvalidStorageKeyError on every operation', async () => {
      for (const key of UNSAFE_KEYS) {
        const label = JSON.stringify(key);
        expect(await rejectionOf(storage.put(key, Buffer.from('x'))), `put ${label}`).to.be.instanceOf(InvalidStorageKeyError);
        expect(await rejectionOf(storage.put(key, Readable.from([Buffer.from('x')]))), `put stream ${label}`).to.be.instanceOf(
          InvalidStorageKeyError,
        );
        expect(await rejectionOf(storage.get(key)), `get ${label}`).to.be.instanceOf(InvalidStorageKeyError);
        expect(await rejectionOf(storage.read(key)), `read ${label}`).to.be.instanceOf(InvalidStorageKeyError);
        expect(await rejectionOf(storage.stat(key)), `stat ${label}`).to.be.instanceOf(InvalidStorageKeyError);
        expect(await rejectionOf(storage.delete(key)), `delete ${label}`).to.be.instanceOf(InvalidStorageKeyError);
        expect(() => storage.publicUrl(key), `publicUrl ${label}`).to.throw(InvalidStorageKeyError);
      }
      expect((await storage.list('')).items).to.deep.equal([]);
    });

    it('round-trips keys with spaces, unicode, & and =', async () => {
      const key = 'photos/été 2024/ü+x&w=100.jpg';
      await storage.put(key, Buffer.from('unicode'));
      expect((await storage.read(key)).toString()).to.equal('unicode');
      expect((await storage.list('photos/été')).items.map((item) => item.key)).to.deep.equal([key]);
    });

    it('builds public URLs under the CDN base, escaping segments but keeping / & =', () => {
      expect(storage.publicUrl('a/b.jpg')).to.equal(`${PUBLIC_BASE_URL}/a/b.jpg`);
      expect(storage.publicUrl('d/w=100&h=50/pic 1.webp')).to.equal(`${PUBLIC_BASE_URL}/d/w=100&h=50/pic%201.webp`);
      expect(storage.publicUrl('ü/#?.png')).to.equal(`${PUBLIC_BASE_URL}/%C3%BC/%23%3F.png`);
    });

    it('streams a 5 MB put without changing a byte', async () => {
      const chunkSize = 64 * 1024;
      const total = 5 * 1024 * 1024;
      const sent = createHash('md5');
      async function* produce(): AsyncGenerator<Buffer> {
        for (let offset = 0, seed = 1; offset < total; offset += chunkSize, seed++) {
          const chunk = patternBytes(Math.min(chunkSize, total - offset), seed);
          sent.update(chunk);
          yield chunk;
        }
      }
      const stored = await storage.put('big/five-mb.bin', Readable.from(produce()), { contentType: 'application/octet-stream' });
      const expectedMd5 = sent.digest('hex');
      expect(stored.size).to.equal(total);
      const back = await readAll(await storage.get('big/five-mb.bin'));
      expect(back.length).to.equal(total);
      expect(md5Hex(back)).to.equal(expectedMd5);
      const tail = await readAll(await storage.get('big/five-mb.bin', { start: total - 10 }));
      expect(tail.equals(back.subarray(total - 10))).to.equal(true);
    });

    it('rejects a put whose stream fails and stores nothing', async () => {
      const failing = new Readable({
        read() {
          this.push(Buffer.from('partial data'));
          this.destroy(new Error('client went away'));
        },
      });
      const err = await rejectionOf(storage.put('broken/upload.bin', failing));
      expect(err).to.be.instanceOf(Error);
      expect(await storage.stat('broken/upload.bin')).to.equal(null);
    });

    it('check() passes on a healthy backend', async () => {
      await storage.check();
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Local driver

describe('LocalStorage', () => {
  let workDir: string;
  let rootDir: string;

  async function freshLocal(): Promise<StorageUnderTest> {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'pictor-local-storage-'));
    rootDir = path.join(workDir, 'root');
    return {
      storage: new LocalStorage({ rootDir, publicBaseUrl: `${PUBLIC_BASE_URL}/` }),
      dispose: () => rm(workDir, { recursive: true, force: true }),
    };
  }

  storageContract('local', freshLocal);

  describe('local-only guarantees', () => {
    let storage: LocalStorage;
    let dispose: () => Promise<void>;

    beforeEach(async () => {
      const created = await freshLocal();
      storage = created.storage as LocalStorage;
      dispose = created.dispose;
    });
    afterEach(async () => {
      await dispose();
    });

    it("etag: the bytes' SHA-256 (first 128 bits), streamed or not; a caller's own SHA-256 is taken as is", async () => {
      const bytes = patternBytes(300_000, 7);
      const expected = sha256Hex(bytes).slice(0, 32);
      expect((await storage.put('e/buffer.bin', bytes)).etag).to.equal(expected);
      expect((await storage.put('e/stream.bin', Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]))).etag).to.equal(expected);
      expect((await storage.stat('e/stream.bin'))!.etag).to.equal(expected);
      // Given a digest, the driver does not hash again: a (deliberately different) digest shows through.
      const given = sha256Hex(Buffer.from('something else'));
      expect((await storage.put('e/given.bin', bytes, { sha256: given })).etag).to.equal(given.slice(0, 32));
      expect((await storage.stat('e/given.bin'))!.etag).to.equal(given.slice(0, 32));
      expect(await rejectionOf(storage.put('e/bad.bin', bytes, { sha256: 'not-a-digest' }))).to.be.instanceOf(TypeError);
      expect(await rejectionOf(storage.put('e/stream2.bin', Readable.from([bytes]), { sha256: given }))).to.be.instanceOf(TypeError);
    });

    it('stores object a/b.jpg as the plain file <root>/a/b.jpg', async () => {
      await storage.put('a/b.jpg', Buffer.from('jpeg bytes'));
      expect((await readFile(path.join(rootDir, 'a', 'b.jpg'))).toString()).to.equal('jpeg bytes');
    });

    it('never lists temp files or sidecars, and refuses keys inside its own folders', async () => {
      await storage.put('a/one.txt', Buffer.from('1'), { metadata: { m: '1' } });
      await storage.put('z.txt', Buffer.from('2'));
      // Leftovers a crashed writer could leave behind.
      await writeFile(path.join(rootDir, '.tmp', 'crashed.data'), 'partial');
      await mkdir(path.join(rootDir, '.meta', 'ghost'), { recursive: true });
      await writeFile(path.join(rootDir, '.meta', 'ghost', 'x@1.json'), '{}');
      expect((await storage.list('')).items.map((item) => item.key)).to.deep.equal(['a/one.txt', 'z.txt']);
      expect((await storage.list('.')).items).to.deep.equal([]);
      expect((await storage.list('.tmp/')).items).to.deep.equal([]);
      expect((await storage.list('.meta/')).items).to.deep.equal([]);
      for (const key of ['.tmp/x', '.meta/a/one.txt@1.json', '.tmp']) {
        expect(await rejectionOf(storage.put(key, Buffer.from('x'))), key).to.be.instanceOf(InvalidStorageKeyError);
        expect(await rejectionOf(storage.stat(key)), key).to.be.instanceOf(InvalidStorageKeyError);
      }
    });

    it('leaves no temp file behind after successful and failed puts', async () => {
      await storage.put('ok.bin', patternBytes(1000));
      await storage.put('ok-stream.bin', Readable.from([patternBytes(1000)]));
      const failing = Readable.from(
        (async function* () {
          yield Buffer.from('abc');
          throw new Error('boom');
        })(),
      );
      expect(await rejectionOf(storage.put('failed.bin', failing))).to.have.property('message', 'boom');
      expect(await readdir(path.join(rootDir, '.tmp'))).to.deep.equal([]);
    });

    it('keeps every key inside the root, even through pre-existing symbolic links', async () => {
      const outside = path.join(workDir, 'outside');
      await mkdir(outside, { recursive: true });
      await writeFile(path.join(outside, 'secret.txt'), 'top secret');
      await storage.put('a/real.txt', Buffer.from('real'));
      await symlink(outside, path.join(rootDir, 'evil'));
      await symlink(outside, path.join(rootDir, 'a', 'link'));
      await symlink(path.join(outside, 'secret.txt'), path.join(rootDir, 'leak.txt'));

      for (const key of ['evil/secret.txt', 'evil/new.txt', 'a/link/secret.txt', 'a/link/deeper/new.txt', 'leak.txt']) {
        const expectRefused = async (operation: string, promise: Promise<unknown>) =>
          expect(await rejectionOf(promise), `${operation} ${key}`).to.be.instanceOf(InvalidStorageKeyError);
        if (key !== 'leak.txt') await expectRefused('put', storage.put(key, Buffer.from('pwned')));
        await expectRefused('get', storage.get(key));
        await expectRefused('read', storage.read(key));
        await expectRefused('stat', storage.stat(key));
        await expectRefused('delete', storage.delete(key));
      }
      expect((await readdir(outside)).sort()).to.deep.equal(['secret.txt']);
      expect((await readFile(path.join(outside, 'secret.txt'))).toString()).to.equal('top secret');
      // Listing does not follow links either.
      expect((await storage.list('')).items.map((item) => item.key)).to.deep.equal(['a/real.txt']);
      expect((await storage.list('evil/')).items).to.deep.equal([]);

      // Putting over a link replaces the link itself; the target outside is untouched.
      await storage.put('leak.txt', Buffer.from('now a real file'));
      expect((await readFile(path.join(outside, 'secret.txt'))).toString()).to.equal('top secret');
      expect((await storage.read('leak.txt')).toString()).to.equal('now a real file');
    });

    it('concurrent puts of one key leave exactly one complete version with its own metadata', async () => {
      const writers = 12;
      const size = 256 * 1024;
      const bodies = Array.from({ length: writers }, (_, i) => Buffer.alloc(size, i + 1));
      await storage.put('race/target.bin', Buffer.alloc(size, 0xee));
      const observed: Buffer[] = [];
      let writing = true;
      const reader = (async () => {
        while (writing) {
          observed.push(await storage.read('race/target.bin'));
          // A direct-I/O read completes without yielding to the event loop (local-file-io.ts).
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await Promise.all(
        bodies.map((body, i) =>
          storage.put('race/target.bin', i % 2 ? Readable.from([body.subarray(0, 1000), body.subarray(1000)]) : body, {
            contentType: `image/x-writer-${i + 1}`,
            metadata: { writer: String(i + 1) },
          }),
        ),
      );
      writing = false;
      await reader;

      const final = await storage.read('race/target.bin');
      expect(final.length).to.equal(size);
      const winner = final[0];
      expect(final.every((byte) => byte === winner), 'no torn write').to.equal(true);
      expect(winner).to.be.within(1, writers);
      const info = await storage.stat('race/target.bin');
      expect(info).to.include({ size, contentType: `image/x-writer-${winner}`, etag: sha256Hex(final).slice(0, 32) });
      expect(info!.metadata).to.deep.equal({ writer: String(winner) });
      // Readers saw whole versions only.
      expect(observed.length).to.be.greaterThan(0);
      for (const seen of observed) {
        expect(seen.length).to.equal(size);
        expect(seen.every((byte) => byte === seen[0])).to.equal(true);
      }
      expect(await readdir(path.join(rootDir, '.tmp'))).to.deep.equal([]);
    });

    it('keeps a single sidecar per object across overwrites', async () => {
      for (let i = 0; i < 4; i++) await storage.put('side/car.txt', Buffer.from(`v${i}`), { metadata: { i: String(i) } });
      expect(await readdir(path.join(rootDir, '.meta', 'side'))).to.have.length(1);
      expect((await storage.stat('side/car.txt'))!.metadata).to.deep.equal({ i: '3' });
    });

    it('delete removes the sidecar and prunes folders left empty', async () => {
      await storage.put('a/b/c/d.txt', Buffer.from('deep'));
      await storage.put('a/keep.txt', Buffer.from('keep'));
      expect(await storage.delete('a/b/c/d.txt')).to.equal(true);
      expect(await stat(path.join(rootDir, 'a', 'b')).catch(() => null)).to.equal(null);
      expect(await stat(path.join(rootDir, '.meta', 'a', 'b')).catch(() => null)).to.equal(null);
      expect((await stat(path.join(rootDir, 'a'))).isDirectory()).to.equal(true);
      expect(await storage.delete('a/keep.txt')).to.equal(true);
      expect(await readdir(rootDir)).to.have.members(['.tmp', '.meta']);
    });

    it('refuses a key that collides with an existing folder or object (a vs a/b)', async () => {
      await storage.put('a', Buffer.from('file a'));
      expect(await rejectionOf(storage.put('a/b', Buffer.from('x')))).to.be.instanceOf(InvalidStorageKeyError);
      await storage.put('x/y', Buffer.from('file x/y'));
      expect(await rejectionOf(storage.put('x', Buffer.from('x')))).to.be.instanceOf(InvalidStorageKeyError);
      expect(await storage.stat('x')).to.equal(null);
      expect(await rejectionOf(storage.get('x'))).to.be.instanceOf(StorageNotFoundError);
      expect((await storage.list('')).items.map((item) => item.key)).to.deep.equal(['a', 'x/y']);
      expect(await readdir(path.join(rootDir, '.tmp'))).to.deep.equal([]);
    });

    it('describes files placed by hand (no sidecar) with defaults', async () => {
      await mkdir(path.join(rootDir, 'manual'), { recursive: true });
      await writeFile(path.join(rootDir, 'manual', 'file.bin'), 'by hand');
      const info = await storage.stat('manual/file.bin');
      expect(info).to.include({ size: 7, contentType: 'application/octet-stream' });
      expect(info!.etag).to.match(/^[0-9a-f]{40}$/);
      expect((await storage.list('manual/')).items.map((item) => item.key)).to.deep.equal(['manual/file.bin']);
    });

    it('check() fails with StorageUnavailableError when the root cannot be created', async () => {
      const blocker = path.join(workDir, 'not-a-dir');
      await writeFile(blocker, 'x');
      const broken = new LocalStorage({ rootDir: path.join(blocker, 'root'), publicBaseUrl: PUBLIC_BASE_URL });
      expect(await rejectionOf(broken.check())).to.be.instanceOf(StorageUnavailableError);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// GCS driver through the real client and the fake server

describe('GcsStorage (real @google-cloud/storage client → fake GCS, no credentials)', () => {
  let fake: FakeGcs;
  let admin: GcsClient;
  let bucketCounter = 0;
  const savedEnv: Record<string, string | undefined> = {};

  before(async () => {
    // Any attempt to find Google credentials would fail loudly instead of being silently satisfied.
    for (const [name, value] of Object.entries({
      GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/pictor-test-credentials.json',
      GCE_METADATA_HOST: '127.0.0.1:9',
      STORAGE_EMULATOR_HOST: undefined,
    })) {
      savedEnv[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    fake = await startFakeGcs();
    admin = new GcsClient({ apiEndpoint: fake.endpoint, projectId: 'test', useAuthWithCustomEndpoint: false });
  });
  after(async () => {
    await fake.stop();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function freshBucket(): Promise<string> {
    const name = `pictor-test-${++bucketCounter}`;
    await admin.createBucket(name);
    return name;
  }

  /** Retries are off unless a test turns them on: the fault tests want the first failure to surface. */
  function gcsStorage(bucket: string, extra: { maxRetries?: number; apiEndpoint?: string; uploadChunkBytes?: number } = {}): GcsStorage {
    return new GcsStorage({
      bucket,
      apiEndpoint: extra.apiEndpoint ?? fake.endpoint,
      publicBaseUrl: PUBLIC_BASE_URL,
      maxRetries: extra.maxRetries ?? 0,
      uploadChunkBytes: extra.uploadChunkBytes,
    });
  }

  storageContract('gcs', async () => {
    fake.faults.clear();
    const storage = gcsStorage(await freshBucket());
    return { storage, dispose: async () => undefined };
  });

  describe('gcs-only guarantees', () => {
    let bucket: string;

    beforeEach(async () => {
      fake.faults.clear();
      bucket = await freshBucket();
    });
    afterEach(() => {
      fake.faults.clear();
    });

    it('uploads buffers in one multipart request and streams through a resumable session', async () => {
      const storage = gcsStorage(bucket);
      const before = fake.requests.length;
      await storage.put('buffer.bin', Buffer.from('buffer'));
      await storage.put('stream.bin', Readable.from([Buffer.from('stream')]));
      const uploads = fake.requests.slice(before).filter((r) => r.path.startsWith('/upload/'));
      expect(uploads.map((r) => `${r.method} ${r.query.uploadType}`)).to.deep.equal([
        'POST multipart',
        'POST resumable',
        'PUT resumable',
      ]);
    });

    it('a 503 on upload makes put reject with StorageUnavailableError (buffer and stream)', async () => {
      const storage = gcsStorage(bucket);
      fake.faults.failNext(1, 503, 'write');
      expect(await rejectionOf(storage.put('a.bin', Buffer.from('x')))).to.be.instanceOf(StorageUnavailableError);
      fake.faults.failNext(1, 503, 'write');
      expect(await rejectionOf(storage.put('b.bin', Readable.from([Buffer.from('x')])))).to.be.instanceOf(StorageUnavailableError);
      // Failing the session PUT rather than its creation (every 2nd write: creation passes, PUT fails).
      fake.faults.failEvery(2, 503, 'write');
      expect(await rejectionOf(storage.put('c.bin', Readable.from([Buffer.from('x')])))).to.be.instanceOf(StorageUnavailableError);
      fake.faults.clear();
      expect(fake.faults.injected).to.be.greaterThanOrEqual(3);
      await storage.put('a.bin', Buffer.from('recovered'));
      expect((await storage.read('a.bin')).toString()).to.equal('recovered');
    });

    it('with retries on, a put survives a 503 (buffer) and a failed chunk is resent, not the object', async () => {
      const storage = gcsStorage(bucket, { maxRetries: 2, uploadChunkBytes: 256 * 1024 });
      fake.faults.failNext(1, 503, 'write');
      await storage.put('retried.bin', Buffer.from('after one 503'));
      expect((await storage.read('retried.bin')).toString()).to.equal('after one 503');

      const body = patternBytes(600 * 1024, 9); // three chunks: 256 KiB, 256 KiB, 88 KiB
      const before = fake.requests.length;
      fake.faults.failNext(1, 503, 'write', 2); // session creation and chunk 1 pass, chunk 2 fails once
      await storage.put('chunked.bin', Readable.from([body]));
      expect((await storage.read('chunked.bin')).equals(body)).to.equal(true);
      const puts = fake.requests.slice(before).filter((r) => r.method === 'PUT');
      expect(puts.length).to.equal(5); // chunk 1, chunk 2 (503), status query, chunk 2 again, chunk 3
    });

    it('a dropped connection makes put reject with StorageUnavailableError', async () => {
      const storage = gcsStorage(bucket);
      fake.faults.resetNext(1, 'write');
      expect(await rejectionOf(storage.put('reset.bin', Buffer.from('x')))).to.be.instanceOf(StorageUnavailableError);
    });

    it('read failures map to StorageUnavailableError when retries are off', async () => {
      const storage = gcsStorage(bucket, { maxRetries: 0 });
      await storage.put('r.bin', Buffer.from('readable'));
      fake.faults.failNext(1, 503, 'read');
      expect(await rejectionOf(storage.get('r.bin'))).to.be.instanceOf(StorageUnavailableError);
      fake.faults.failNext(1, 500, 'read');
      expect(await rejectionOf(storage.stat('r.bin'))).to.be.instanceOf(StorageUnavailableError);
      fake.faults.failNext(1, 429, 'read');
      expect(await rejectionOf(storage.read('r.bin'))).to.be.instanceOf(StorageUnavailableError);
    });

    it('the client retries a transient read failure when retries are on', async () => {
      const storage = gcsStorage(bucket, { maxRetries: 2 });
      await storage.put('retry.bin', Buffer.from('eventually'));
      fake.faults.failNext(1, 503, 'read');
      expect((await storage.stat('retry.bin'))?.size).to.equal(10);
      expect(fake.faults.injected).to.be.greaterThan(0);
    });

    it('an unreachable endpoint maps to StorageUnavailableError', async () => {
      const closed = await startFakeGcs();
      const endpoint = closed.endpoint;
      await closed.stop();
      const storage = gcsStorage(bucket, { apiEndpoint: endpoint });
      expect(await rejectionOf(storage.check())).to.be.instanceOf(StorageUnavailableError);
      expect(await rejectionOf(storage.stat('x'))).to.be.instanceOf(StorageUnavailableError);
      expect(await rejectionOf(storage.put('x', Buffer.from('x')))).to.be.instanceOf(StorageUnavailableError);
    });

    it('check() fails for a missing bucket', async () => {
      expect(await rejectionOf(gcsStorage('no-such-bucket').check())).to.be.instanceOf(StorageUnavailableError);
    });

    it('never sends a request for an unsafe key', async () => {
      const storage = gcsStorage(bucket);
      const before = fake.requests.length;
      for (const key of UNSAFE_KEYS) await rejectionOf(storage.put(key, Buffer.from('x')));
      expect(fake.requests.length).to.equal(before);
    });
  });

  describe('fake GCS fixture', () => {
    let bucket: string;
    beforeEach(async () => {
      fake.faults.clear();
      bucket = await freshBucket();
    });

    it('computes CRC32C (Castagnoli) like GCS', () => {
      expect(crc32c(Buffer.from('123456789'))).to.equal(0xe3069283);
      expect(crc32c(Buffer.alloc(0))).to.equal(0);
      expect(crc32cBase64(Buffer.from('hello world'))).to.equal('yZRlqg==');
    });

    it('accepts chunked resumable uploads (308 + Range) from the client', async () => {
      const body = patternBytes(600 * 1024, 3);
      const file = admin.bucket(bucket).file('fixture-chunked.bin');
      await file.save(body, { resumable: true, chunkSize: 256 * 1024, contentType: 'application/x-chunked' });
      const [downloaded] = await file.download(); // validated by the client against x-goog-hash
      expect(downloaded.equals(body)).to.equal(true);
      const [metadata] = await file.getMetadata();
      expect(metadata.contentType).to.equal('application/x-chunked');
      const puts = fake.requests.filter((r) => r.method === 'PUT' && r.path.includes(`/b/${bucket}/`));
      expect(puts.length).to.equal(3);
    });

    it('answers both path forms, ranges with 206 and x-goog-hash', async () => {
      const body = Buffer.from('0123456789');
      await admin.bucket(bucket).file('dir/n.txt').save(body, { resumable: false, contentType: 'text/plain' });
      for (const base of [`${fake.endpoint}/storage/v1`, fake.endpoint]) {
        const meta = await fetch(`${base}/b/${bucket}/o/${encodeURIComponent('dir/n.txt')}`);
        expect(meta.status).to.equal(200);
        expect(await meta.json()).to.include({ name: 'dir/n.txt', size: '10', crc32c: crc32cBase64(body) });
        const media = await fetch(`${base}/b/${bucket}/o/${encodeURIComponent('dir/n.txt')}?alt=media`, { headers: { Range: 'bytes=2-4' } });
        expect(media.status).to.equal(206);
        expect(media.headers.get('content-range')).to.equal('bytes 2-4/10');
        expect(media.headers.get('x-goog-hash')).to.equal(`crc32c=${crc32cBase64(body)},md5=${createHash('md5').update(body).digest('base64')}`);
        expect(await media.text()).to.equal('234');
      }
      const unsatisfiable = await fetch(`${fake.endpoint}/storage/v1/b/${bucket}/o/dir%2Fn.txt?alt=media`, { headers: { Range: 'bytes=10-' } });
      expect(unsatisfiable.status).to.equal(416);
    });

    it('lists with delimiter into prefixes, patches metadata and rewrites objects', async () => {
      const b = admin.bucket(bucket);
      for (const name of ['x/1', 'x/2', 'x/sub/3', 'y']) await b.file(name).save(Buffer.from(name), { resumable: false });
      const [files, , response] = await b.getFiles({ prefix: 'x/', delimiter: '/', autoPaginate: false });
      expect(files.map((f) => f.name)).to.deep.equal(['x/1', 'x/2']);
      expect((response as { prefixes?: string[] }).prefixes).to.deep.equal(['x/sub/']);

      await b.file('x/1').setMetadata({ contentType: 'text/x-patched', metadata: { a: '1' } });
      const [patched] = await b.file('x/1').getMetadata();
      expect(patched).to.include({ contentType: 'text/x-patched', metageneration: '2' });

      await b.file('x/1').copy(b.file('copied/1'));
      expect((await b.file('copied/1').download())[0].toString()).to.equal('x/1');
      const [copiedMeta] = await b.file('copied/1').getMetadata();
      expect(copiedMeta.metadata).to.deep.equal({ a: '1' });
      expect(fake.peek(bucket, 'copied/1')?.toString()).to.equal('x/1');
    });
  });
});

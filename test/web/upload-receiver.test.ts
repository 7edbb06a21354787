// receiveUpload stages the file as sent, and asks storage to flush it to disk only when told to
// (an async upload is acknowledged before the worker's durable write; a synchronous one after),
// hashing it on the way in (the worker's checksum).
// Real HTTP into a bare Express route; the storage is the real LocalStorage, wrapped to record
// the options each put was given.
import { expect } from 'chai';
import express from 'express';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import { LocalStorage } from '../../src/storage/local-storage.js';
import type { PutOptions, Storage } from '../../src/storage/storage.js';
import { BUFFERED_UPLOAD_BYTES, receiveUpload } from '../../src/web/services/upload-receiver.js';
import { jpeg } from '../fixtures/images.js';
import { upload } from '../harness/http.js';

describe('receiveUpload (staging)', () => {
  let dir: string;
  let storage: Storage;
  let server: Server;
  let baseUrl: string;
  const puts: { key: string; options: PutOptions | undefined }[] = [];

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pictor-receiver-'));
    const local = new LocalStorage({ rootDir: dir, publicBaseUrl: 'http://cdn.test' });
    storage = Object.assign(Object.create(local) as Storage, {
      put: (key: string, body: Parameters<Storage['put']>[1], options?: PutOptions) => {
        puts.push({ key, options });
        return local.put(key, body, options);
      },
    });
    const app = express();
    app.post('/stage', (req, res) => {
      receiveUpload(req, res, storage, { maxBytes: 10 * 1024 * 1024, durable: req.query.durable === '1' }).then(
        (received) => res.json(received),
        (err: Error) => res.status(400).json({ error: err.message }),
      );
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  for (const durable of [false, true]) {
    for (const [size, how] of [
      ['small', 'from memory'],
      ['large', 'streamed'],
    ] as const) {
      it(`${size} file (${how}), durable ${durable}: staged byte for byte, put with durable: ${durable}`, async () => {
        let bytes = await jpeg(320, 240);
        if (size === 'large') bytes = Buffer.concat([bytes, Buffer.alloc(BUFFERED_UPLOAD_BYTES + 1000, 7)]);
        puts.length = 0;
        const res = await upload(baseUrl, { bytes, path: `/stage?durable=${durable ? 1 : 0}`, mime: 'image/jpeg' });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.size).to.equal(bytes.length);
        expect(res.body.sha256).to.equal(createHash('sha256').update(bytes).digest('hex'));
        expect((await storage.read(res.body.stagingKey)).equals(bytes)).to.equal(true);
        expect(puts).to.have.length(1);
        expect(puts[0].key).to.equal(res.body.stagingKey);
        expect(puts[0].options).to.include({ durable });
      });
    }
  }
});

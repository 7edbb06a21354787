// Shared helpers of the set B tests: uploads through /cdn/upload, exact error-body
// checks (422 detail[] and {detail}), small distinct images, and per-user snapshots of catalog,
// storage and usage for "nothing changed" assertions.
import { expect } from 'chai';
import sharp from 'sharp';
import { request, upload } from '../harness/http.js';
import type { TestService } from '../harness/test-service.js';
import type { UploadResult } from '../../src/client/types.js';

export const MB = 1024 * 1024;
export const GB = 1024 * MB;

export type HttpResult = { status: number; headers: Headers; body: any };

/** A small JPEG whose pixels (and so bytes) differ with `seed`. */
export async function tinyJpeg(seed: number, width = 24, height = 16): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7 + seed * 31 + ((i * seed) % 13)) & 0xff;
  return sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
}

/** The SDK's type of the upload answer: tests read the same shape the SDK promises. */
export type CdnUploadBody = UploadResult;

/** POST /cdn/upload that must succeed; returns the body. */
export async function cdnUpload(svc: TestService, key: string, bytes: Buffer, options: { project?: string; filename?: string; mime?: string } = {}): Promise<CdnUploadBody> {
  const res = await upload(svc.baseUrl, {
    path: '/cdn/upload',
    key,
    bytes,
    filename: options.filename ?? 'photo.jpg',
    mime: options.mime ?? 'image/jpeg',
    fields: options.project !== undefined ? { project: options.project } : {},
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as CdnUploadBody;
}

/** Asserts a set B non-422 error: the status and exactly `{detail: "<non-empty message>"}`. */
export function expectDetail(res: HttpResult, status: number, message?: RegExp): string {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers.get('content-type') ?? '').to.match(/^application\/json/);
  expect(res.body).to.be.an('object');
  expect(Object.keys(res.body)).to.deep.equal(['detail']);
  expect(res.body.detail).to.be.a('string').and.not.equal('');
  if (message) expect(res.body.detail).to.match(message);
  return res.body.detail as string;
}

/**
 * Asserts a spec 2.9 validation error: 422, body exactly `{detail: [{loc, msg, type}, …]}`, and the
 * set of `loc`s (joined with '.') equal to `locs` — every problem listed, nothing else.
 */
export function expectValidation(res: HttpResult, locs: string[]): { loc: (string | number)[]; msg: string; type: string }[] {
  expect(res.status, JSON.stringify(res.body)).to.equal(422);
  expect(res.headers.get('content-type') ?? '').to.match(/^application\/json/);
  expect(Object.keys(res.body)).to.deep.equal(['detail']);
  const detail = res.body.detail as { loc: (string | number)[]; msg: string; type: string }[];
  expect(detail).to.be.an('array');
  expect(detail.length).to.be.greaterThan(0);
  for (const d of detail) {
    expect(Object.keys(d).sort(), JSON.stringify(d)).to.deep.equal(['loc', 'msg', 'type']);
    expect(d.loc).to.be.an('array');
    expect(d.loc.length).to.be.greaterThan(0);
    for (const part of d.loc) expect(['string', 'number']).to.include(typeof part);
    expect(['query', 'header', 'body', 'path']).to.include(d.loc[0]);
    expect(d.msg).to.be.a('string').and.not.equal('');
    expect(d.type).to.be.a('string').and.not.equal('');
  }
  expect(detail.map((d) => d.loc.join('.')).sort(), JSON.stringify(detail)).to.deep.equal([...locs].sort());
  return detail;
}

/** Every stored object of a user (key, size, etag, content type), in key order. */
export async function storedObjects(svc: TestService, userId: string): Promise<{ key: string; size: number; etag: string; contentType: string }[]> {
  const out: { key: string; size: number; etag: string; contentType: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await svc.deps.storage.list(`${userId}/`, { limit: 1000, cursor });
    for (const o of page.items) out.push({ key: o.key, size: o.size, etag: o.etag, contentType: o.contentType });
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/** Everything the service keeps about one user: catalog documents, stored objects and usage. */
export async function snapshotUser(svc: TestService, userId: string) {
  const { catalog } = svc.deps;
  await svc.derivativesSettled(userId);
  // Bandwidth is written in batches: what has been served so far is in the catalog after this.
  await svc.deps.bandwidth.flush();
  const plain = (docs: unknown[]) => JSON.parse(JSON.stringify(docs)) as unknown[];
  return {
    images: plain(await catalog.images.find({ userId }).sort({ _id: 1 }).lean()),
    derivatives: plain(await catalog.derivatives.find({ userId }).sort({ _id: 1 }).lean()),
    projects: plain(await catalog.projects.find({ userId }).sort({ _id: 1 }).lean()),
    usage: plain(await catalog.usage.find({ userId }).sort({ _id: 1 }).lean()),
    users: plain(await catalog.users.find({ _id: userId }).lean()),
    storage: await storedObjects(svc, userId),
  };
}

/** GET /cdn/usage for a key (must succeed). */
export async function usageOf(svc: TestService, key: string) {
  const res = await request(svc.url('/cdn/usage'), { key });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as {
    storage_bytes: number;
    image_count: number;
    derivative_count: number;
    derivative_bytes: number;
    bandwidth_bytes: number;
    transformations: number;
    period_start: string;
    plan: string;
    limits: Record<string, number>;
  };
}

/** Every image of a listing, following next_cursor to the end. */
export async function listAll(svc: TestService, key: string, query: Record<string, string> = {}, limit = 100) {
  const images: { imageId: string; project: string; public_url: string; size: number }[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const qs = new URLSearchParams({ ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
    const res = await request(svc.url(`/cdn/images?${qs}`), { key });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    images.push(...res.body.images);
    if (!res.body.has_more) return images;
    cursor = res.body.next_cursor;
  }
  throw new Error('listing did not end');
}

/** Runs `fn` over `items` with at most `concurrency` in flight; results in input order. */
export async function pool<T, R>(items: T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  });
  await Promise.all(runners);
  return results;
}

export function imageSrc(publicUrl: string): string {
  return encodeURIComponent(publicUrl);
}

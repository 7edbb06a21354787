// Paging GET /cdn/images: 250 images, pages of 37 while more uploads keep arriving —
// no image twice, none missed of those present at the start, newest first.
import { expect } from 'chai';
import { performance } from 'node:perf_hooks';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import { pool, tinyJpeg } from './set-b-helpers.js';

const INITIAL = 250;
const PAGE = 37;

describe('paging GET /cdn/images under concurrent uploads', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    // Two worker processes: imageIds are made in both, and must still come out newest first.
    svc = await TestService.start({ workers: 2, env: { WORKER_CONCURRENCY: '6' } });
  });
  after(async () => svc?.stop());

  it(`pages through ${INITIAL} images with limit ${PAGE}: no duplicates, none missed, newest first`, async () => {
    const user = await svc.createUser();
    const images = await Promise.all(Array.from({ length: 8 }, (_, i) => tinyJpeg(i, 16, 12)));
    /** When each upload was sent and answered: an upload answered before another was sent is older. */
    const timing = new Map<string, { sent: number; done: number }>();
    const send = async (name: string, i: number) => {
      const sent = performance.now();
      const res = await upload(svc.baseUrl, { path: '/cdn/upload', key: user.key, bytes: images[i % images.length], filename: `${name}.jpg` });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      timing.set(res.body.imageId, { sent, done: performance.now() });
      return res.body.imageId as string;
    };

    const t0 = performance.now();
    const initial = await pool(Array.from({ length: INITIAL }, (_, i) => i), 16, (i) => send(`start-${i}`, i));
    const uploadMs = performance.now() - t0;
    expect(new Set(initial).size).to.equal(INITIAL);

    // Uploads continue in the background while we page.
    let paging = true;
    const during: string[] = [];
    let n = 0;
    const background = pool([0, 1, 2, 3], 4, async () => {
      while (paging) during.push(await send(`during-${n}`, n++));
    });

    const pages: { imageId: string }[][] = [];
    let cursor: string | null = null;
    try {
      for (let guard = 0; guard < 100; guard++) {
        const qs = `limit=${PAGE}${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await request(svc.url(`/cdn/images?${qs}`), { key: user.key });
        expect(res.status).to.equal(200);
        const page = res.body.images as { imageId: string }[];
        pages.push(page);
        if (!res.body.has_more) {
          expect(res.body.next_cursor).to.equal(null);
          break;
        }
        expect(page).to.have.length(PAGE);
        expect(res.body.next_cursor).to.equal(page[page.length - 1].imageId);
        cursor = res.body.next_cursor;
        // Let a few uploads land between pages.
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      paging = false;
      await background;
    }

    const listed = pages.flat().map((i) => i.imageId);
    expect(during.length, 'uploads really happened during paging').to.be.greaterThan(0);
    expect(new Set(listed).size, 'no image twice').to.equal(listed.length);
    const listedSet = new Set(listed);
    const missed = initial.filter((id) => !listedSet.has(id));
    expect(missed, 'none of the initial images missed').to.deep.equal([]);
    const known = new Set([...initial, ...during]);
    expect(listed.filter((id) => !known.has(id)), 'nothing foreign').to.deep.equal([]);
    expect(pages.length).to.be.at.least(Math.ceil(INITIAL / PAGE));

    // Newest first: ids strictly descend, and no image is listed before one that was uploaded
    // entirely after it.
    for (let i = 1; i < listed.length; i++) expect(listed[i - 1] > listed[i], `order at ${i}`).to.equal(true);
    const inversions: string[] = [];
    for (let i = 0; i < listed.length; i++) {
      const newer = timing.get(listed[i])!;
      for (let j = i + 1; j < listed.length; j++) {
        const older = timing.get(listed[j])!;
        if (newer.done < older.sent) inversions.push(`${listed[i]} listed before ${listed[j]}`);
      }
    }
    expect(inversions.slice(0, 5)).to.deep.equal([]);

    console.log(`      ${INITIAL} uploads in ${Math.round(uploadMs)} ms (16 concurrent); ${pages.length} pages; ${during.length} uploads during paging, ${listed.length - INITIAL} of them listed`);
  });
});

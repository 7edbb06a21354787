// Bounded renders: the output's pixel count (after dpr, crop, rot and pad) is known from the
// original's size and the plan, so a render past MAX_OUTPUT_PIXELS is refused with 422 before
// any job runs, in the route's error shape. The source mirrors the 13×169 WebP of sharp's test
// images: a tall sliver for which w=4000 means a 4000×52000 render.
import { expect } from 'chai';
import sharp from 'sharp';
import { QUEUE_NAMES } from '../../../src/jobs/job-contract.js';
import { request } from '../../harness/http.js';
import { TestService } from '../../harness/test-service.js';
import { cdnUpload, expectDetail, imageSrc } from '../set-b-helpers.js';

async function sliverWebp(): Promise<Buffer> {
  const raw = Buffer.alloc(13 * 169 * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 37) & 0xff;
  return sharp(raw, { raw: { width: 13, height: 169, channels: 3 } }).webp({ quality: 80 }).toBuffer();
}

describe('bounded renders (MAX_OUTPUT_PIXELS)', function () {
  this.timeout(60_000);
  let svc: TestService;
  let key: string;
  let src: string;

  before(async () => {
    svc = await TestService.start();
    key = (await svc.createUser()).key;
    src = imageSrc((await cdnUpload(svc, key, await sliverWebp(), { filename: 'sliver.webp', mime: 'image/webp' })).public_url);
  });
  after(async () => svc?.stop());

  async function timed(path: string) {
    const started = performance.now();
    const res = await request(svc.url(path), { key });
    return { res, ms: performance.now() - started };
  }

  it('refuses w=4000 on a 13×169 source at once, naming the limit (set B {detail})', async () => {
    const { res, ms } = await timed(`/image/x.webp?src=${src}&w=4000`);
    expectDetail(res, 422, /4000×52000 = 208000000 pixels; the maximum is 40000000 \(MAX_OUTPUT_PIXELS\)/);
    console.log(`      w=4000 refused in ${Math.round(ms)} ms`);
    expect(ms).to.be.below(1000);
    // Refused before any job: nothing queued, nothing failed.
    const counts = await svc.deps.jobs.queues[QUEUE_NAMES.transform].getJobCounts('failed', 'completed', 'waiting', 'active');
    expect(counts).to.deep.equal({ failed: 0, completed: 0, waiting: 0, active: 0 });
  });

  it('counts dpr, rot and pad in the output size', async () => {
    // 1000 × dpr 4 = 4000 wide: the same 4000×52000.
    expectDetail((await timed(`/image/x.webp?src=${src}&w=1000&dpr=4`)).res, 422, /4000×52000/);
    // rot=90 turns the sliver 169×13: h=4000 makes it 52000 wide.
    expectDetail((await timed(`/image/x.webp?src=${src}&h=4000&rot=90`)).res, 422, /52000×4000/);
    // 1000×13000 (13 MP) is allowed; 1000 px of padding on each side makes it 3000×15000.
    expectDetail((await timed(`/image/x.webp?src=${src}&w=1000&pad=1000`)).res, 422, /3000×15000 = 45000000/);
  });

  it('answers set A /transform in its own shape {type,msg,status_code}', async () => {
    const { res } = await timed(`/transform?src=${src}&w=4000`);
    expect(res.status).to.equal(422);
    expect(res.body).to.include({ status_code: 422 });
    expect(res.body.msg).to.match(/MAX_OUTPUT_PIXELS/);
    expect(res.body.type).to.be.a('string');
  });

  it('renders w=300 (300×3900) in under 2 s', async () => {
    const { res, ms } = await timed(`/image/x.webp?src=${src}&w=300`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    console.log(`      w=300 rendered in ${Math.round(ms)} ms`);
    expect(ms).to.be.below(2000);
    const meta = await sharp(res.bytes).metadata();
    expect([meta.width, meta.height]).to.deep.equal([300, 3900]);
  });
});

// An image version's analysis (src/jobs/image-analysis.ts) through real workers: computed by one
// analyze job on first request, then read from the catalog (no job at all); concurrent first
// requests share one job; a replacement starts afresh, and a late write for the old version is
// refused. What the info and byte-curve values are is checked through the routes
// (test/web/image-info.test.ts, test/web/srcset-auto.test.ts).
import { expect } from 'chai';
import fs from 'node:fs';
import { Types } from 'mongoose';
import { readAnalysis, storeAnalysis } from '../../src/catalog/image-analysis.js';
import { findImageById } from '../../src/catalog/images.js';
import { sampleWidths } from '../../src/imaging/srcset-widths.js';
import { byteCurveOf, imageInfoOf } from '../../src/jobs/image-analysis.js';
import { QUEUE_NAMES } from '../../src/jobs/job-contract.js';
import { CORPUS, pngWithAlpha } from '../fixtures/images.js';
import { TestService } from '../harness/test-service.js';
import { cdnUpload } from '../web/set-b-helpers.js';

describe('image analysis jobs', function () {
  this.timeout(120_000);
  let svc: TestService;
  let key: string;
  before(async () => {
    svc = await TestService.start();
    key = (await svc.createUser()).key;
  });
  after(async () => svc?.stop());

  const analyzeJobs = async () => (await svc.deps.jobs.jobCounts(QUEUE_NAMES.analyze, 'completed', 'failed', 'active', 'waiting')) as Record<string, number>;
  const settledJobs = async (completed: number) => {
    for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 50))) {
      const counts = await analyzeJobs();
      if (counts.completed >= completed || Date.now() > deadline) return counts;
    }
  };
  const imageOf = async (imageId: string) => (await findImageById(svc.deps.catalog, new Types.ObjectId(imageId)))!;

  it('computes once per version: one job for concurrent first calls, none afterwards', async () => {
    const uploaded = await cdnUpload(svc, key, fs.readFileSync(`${CORPUS}exif/grace_hopper_gps_orientation6.jpg`), { filename: 'once.jpg' });
    const image = await imageOf(uploaded.imageId);
    const before = await analyzeJobs();
    const [a, b] = await Promise.all([imageInfoOf(svc.deps, image), imageInfoOf(svc.deps, image)]);
    expect(a).to.deep.equal(b);
    expect(a.orientation).to.equal(6);
    const [curve, curveAgain] = await Promise.all([byteCurveOf(svc.deps, image, 'webp', 80), byteCurveOf(svc.deps, image, 'webp', 80)]);
    expect(curve).to.deep.equal(curveAgain);
    expect(curve.widths).to.deep.equal(sampleWidths(512));
    // A job is marked completed a moment after its result is announced.
    const after = await settledJobs(before.completed + 2);
    expect(after.completed - before.completed, 'two jobs: one info, one curve').to.equal(2);
    // Kept: the second round runs no job.
    expect(await imageInfoOf(svc.deps, image)).to.deep.equal(a);
    expect(await byteCurveOf(svc.deps, image, 'webp', 80)).to.deep.equal(curve);
    expect(await analyzeJobs()).to.deep.equal(after);
    // Another quality is another curve (another job).
    const q50 = await byteCurveOf(svc.deps, image, 'webp', 50);
    expect(q50.bytes.at(-1)).to.be.below(curve.bytes.at(-1)!);
  });

  it('a replacement starts afresh, and a late write for the replaced version is refused', async () => {
    const first = await cdnUpload(svc, key, fs.readFileSync(`${CORPUS}exif/grace_hopper_gps_orientation6.jpg`), { filename: 'swap.jpg' });
    const old = await imageOf(first.imageId);
    expect((await imageInfoOf(svc.deps, old)).format).to.equal('jpeg');
    await cdnUpload(svc, key, await pngWithAlpha(120, 80), { filename: 'swap.jpg', mime: 'image/png' });
    const current = await imageOf(first.imageId);
    expect(current.version).to.not.equal(old.version);
    expect(await readAnalysis(svc.deps.catalog, first.imageId, current.version, 'info')).to.equal(null);
    const info = await imageInfoOf(svc.deps, current);
    expect(info).to.include({ format: 'png', has_alpha: true, width: 120, height: 80, has_location: false });
    // A job of the old version finishing now must not overwrite the new version's analysis.
    expect(await storeAnalysis(svc.deps.catalog, first.imageId, old.version, 'info', { ...info, format: 'jpeg' })).to.equal(false);
    expect((await readAnalysis(svc.deps.catalog, first.imageId, current.version, 'info'))?.format).to.equal('png');
    // A version the entry does not name fails as not found (the job checks the version).
    const err = await imageInfoOf(svc.deps, { ...current, version: 'notthisone' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as { kind?: string })?.kind).to.equal('not_found');
  });
});

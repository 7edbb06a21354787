// Render and edge refinement on two bands at once (src/passport/edge-bands.ts): the top band on the
// calling thread, the bottom one on the edge thread (from only the source rows it reads), each with
// bandMargin rows beyond its half. The joined pixels, alpha and colours must equal those of the
// whole photo bit for bit, at every document's output size, on a real portrait (rotated, partly
// outside the source) and on noise; and when the thread is gone, the same from this thread.
import { expect } from 'chai';
import path from 'node:path';
import sharp from 'sharp';
import { bandMargin, closeEdgeThread, refineEdgesWhole, renderAndRefineEdges, renderRows, type PhotoRender, type RefinedEdges } from '../../src/passport/edge-bands.js';
import { refinementRadii } from '../../src/passport/background.js';
import { segmentPerson } from '../../src/vision/segmenter.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS } from '../../src/passport/specs.js';
import { CORPUS } from '../fixtures/images.js';
import { type AffineMap, type RawImage } from '../../src/vision/raw-image.js';

/**
 * The output (`width` x `height`) rendered from a source 1.2 times its size, turned by 3 degrees and
 * shifted so that a strip on the right lies outside the source; the mask from the segmenter on a
 * 256 px copy of the source.
 */
async function portraitJob(width: number, height: number): Promise<PhotoRender> {
  const sw = Math.round(width * 1.2);
  const sh = Math.round(height * 1.2);
  const { data } = await sharp(path.join(CORPUS, 'faces/02_grace_hopper.jpg')).resize(sw, sh, { fit: 'cover' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const mw = 256;
  const mh = Math.round((256 * sh) / sw);
  const small = await sharp(data, { raw: { width: sw, height: sh, channels: 3 } }).resize(mw, mh, { fit: 'fill' }).ensureAlpha().raw().toBuffer();
  const prob = await segmentPerson({ data: new Uint8Array(small), width: mw, height: mh, channels: 4 });
  const a = (3 * Math.PI) / 180;
  const k = 1.15;
  const map: AffineMap = { ox: 0.25 * sw, oy: 0.02 * sh, dux: k * Math.cos(a), duy: k * Math.sin(a), dvx: -k * Math.sin(a), dvy: k * Math.cos(a) };
  const toMask = (m: AffineMap): AffineMap => ({ ox: (m.ox * mw) / sw, oy: (m.oy * mh) / sh, dux: (m.dux * mw) / sw, duy: (m.duy * mh) / sh, dvx: (m.dvx * mw) / sw, dvy: (m.dvy * mh) / sh });
  const faceTopRow = Math.round(0.3 * height);
  return { source: { data: new Uint8Array(data), width: sw, height: sh, channels: 3 }, map, width, height, fill: [255, 255, 255], mask: { data: prob, width: mw, height: mh, map: toMask(map) }, faceTopRow };
}

/** Noise rendered 1:1, with blocks of certain person, certain background and noisy probability in its mask; the face's top in the bottom band. */
function noiseJob(width: number, height: number): PhotoRender {
  const input = noise(width, height);
  const identity: AffineMap = { ox: 0, oy: 0, dux: 1, duy: 0, dvx: 0, dvy: 1 };
  return { source: input.rgb, map: identity, width, height, fill: [255, 255, 255], mask: { data: input.prob, width, height, map: identity }, faceTopRow: Math.round(0.7 * height) };
}

interface EdgeInput {
  rgb: RawImage;
  prob: Float32Array;
  inside: Uint8Array;
}

/** Noise with blocks of certain person, certain background and noisy probability. */
function noise(width: number, height: number): EdgeInput {
  let seed = 987654;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const rgb: RawImage = { data: new Uint8Array(width * height * 3).map(() => Math.floor(rnd() * 256)), width, height, channels: 3 };
  const prob = new Float32Array(width * height).map((_, i) => {
    const block = ((i % width >> 4) + (Math.floor(i / width) >> 4)) % 3;
    return block === 0 ? 0 : block === 1 ? 1 : rnd();
  });
  return { rgb, prob, inside: new Uint8Array(width * height).fill(1) };
}

type Rendered = { image: RawImage; inside: Uint8Array } & RefinedEdges;

/** renderAndRefineEdges' result computed on the whole photo on this thread. */
function whole(job: PhotoRender): Rendered {
  const r = renderRows(job, 0, job.height);
  return { image: r.image, inside: r.inside, ...refineEdgesWhole(r.image, r.prob, r.inside, job.height, job.faceTopRow) };
}

/**
 * How far two refinements are apart: alpha, and the colours weighted by alpha (what the composite
 * shows: where alpha is ~0 the estimated foreground colour is not seen, and is not compared).
 */
function edgeDifference(a: RefinedEdges, b: RefinedEdges): { alpha: number; colour: number } {
  let alpha = 0;
  let colour = 0;
  for (let i = 0; i < a.alpha.length; i++) {
    alpha = Math.max(alpha, Math.abs(a.alpha[i] - b.alpha[i]));
    for (let c = 0; c < 3; c++) colour = Math.max(colour, Math.abs(a.alpha[i] * a.fg.data[3 * i + c] - b.alpha[i] * b.fg.data[3 * i + c]));
  }
  return { alpha, colour };
}

/**
 * The same edges: alpha within 1e-6 (the box filters' running sums start at another row in a band,
 * so float rounding may differ in the last bits) and what the composite shows within 0.01 level.
 */
function sameEdges(a: RefinedEdges, b: RefinedEdges): void {
  expect(a.fg.width).to.equal(b.fg.width);
  expect(a.fg.height).to.equal(b.fg.height);
  const d = edgeDifference(a, b);
  expect(d.alpha, 'alpha').to.be.below(1e-6);
  expect(d.colour, 'colours x alpha').to.be.below(0.01);
}

function sameRender(a: Rendered, b: Rendered): void {
  expect(Buffer.from(a.image.data).equals(Buffer.from(b.image.data)), 'rendered pixels byte for byte').to.equal(true);
  expect(Buffer.from(a.inside).equals(Buffer.from(b.inside)), 'inside mask').to.equal(true);
  sameEdges(a, b);
}

describe('edge refinement on two bands (edge-bands.ts)', function () {
  this.timeout(120_000);
  after(() => closeEdgeThread());

  it('equals the whole photo at every document size: pixels bit for bit, edges to float rounding (real portrait, turned, a strip outside the source)', async () => {
    const sizes = new Map(PASSPORT_COUNTRIES.map((c) => [`${PASSPORT_SPECS[c].digital.width}x${PASSPORT_SPECS[c].digital.height}`, PASSPORT_SPECS[c].digital]));
    expect(sizes.size).to.be.at.least(4);
    for (const { width, height } of sizes.values()) {
      const job = await portraitJob(width, height);
      const one = whole(job);
      sameRender(await renderAndRefineEdges(job), one);
      // Not trivial: the split row crosses the person's soft edge, and some pixels came from outside the source.
      const split = 2 * Math.floor(height / 4);
      const row = one.alpha.subarray(split * width, (split + 1) * width);
      expect(row.some((a) => a > 0 && a < 1), `${width}x${height}: soft edge on the split row`).to.equal(true);
      expect(one.inside.includes(0), `${width}x${height}: a strip outside the source`).to.equal(true);
    }
  });

  it('equals the whole photo on noise (soft edges everywhere); a margin 16 rows smaller (beyond the colour line\'s window) would not', async () => {
    const job = noiseJob(600, 600);
    sameRender(await renderAndRefineEdges(job), whole(job));
    const input = noise(600, 600);
    const wholeEdges = refineEdgesWhole(input.rgb, input.prob, input.inside);
    // The margin is what keeps the bands exact: cut with less, the rows next to the split differ.
    // The colour line's window acts only where the certain person and background colours differ
    // (the portraits above), not on noise (both its means are the same grey).
    const margin = bandMargin(600) - 16 - refinementRadii(600).colourLine;
    const split = 300;
    const w = 600;
    const band = (top: number, bottom: number) =>
      refineEdgesWhole({ data: input.rgb.data.subarray(top * w * 3, bottom * w * 3), width: w, height: bottom - top, channels: 3 }, input.prob.subarray(top * w, bottom * w), input.inside.subarray(top * w, bottom * w), 600);
    const upper = band(0, split + margin);
    const lower = band(split - margin, 600);
    const joined = new Float32Array(w * 600);
    joined.set(upper.alpha.subarray(0, split * w), 0);
    joined.set(lower.alpha.subarray(margin * w), split * w);
    const joinedFg = new Uint8Array(w * 600 * 3);
    joinedFg.set(upper.fg.data.subarray(0, split * w * 3), 0);
    joinedFg.set(lower.fg.data.subarray(margin * w * 3), split * w * 3);
    const d = edgeDifference({ alpha: joined, fg: { data: joinedFg, width: w, height: 600, channels: 3 } }, wholeEdges);
    expect(d.alpha > 1e-3 || d.colour > 0.1, `a smaller margin changes the result (alpha ${d.alpha}, colours ${d.colour})`).to.equal(true);
  });

  it('bandMargin grows with the photo height (the filters radii do)', () => {
    expect(bandMargin(600)).to.equal(74);
    expect(bandMargin(413)).to.be.below(bandMargin(600));
    expect(bandMargin(1200)).to.be.above(bandMargin(600));
    for (const h of [300, 531, 827]) expect(bandMargin(h) % 2, `${h}: even`).to.equal(0);
  });

  it('computes the bottom band on this thread when the edge thread ends mid-call, and a photo too small to split whole', async () => {
    const job = await portraitJob(400, 400);
    const one = whole(job);
    const pending = renderAndRefineEdges(job);
    await closeEdgeThread();
    sameRender(await pending, one);
    // The next call starts a thread again.
    sameRender(await renderAndRefineEdges(job), one);
    const tiny = noiseJob(64, 64);
    sameRender(await renderAndRefineEdges(tiny), whole(tiny));
  });
});

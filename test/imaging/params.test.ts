// The registry's contract for its handlers (src/imaging/operations/): each names only itself in
// the derivative key, reads its own value, and a request without it keys as before. Keys and
// signatures of real URLs are pinned in derivative-keys.test.ts.
import { expect } from 'chai';
import { canonicalPairs, PRESETS_ONLY_PARAMS, PRESETTABLE_PARAMS, resolvePlan, TRANSFORM_PARAMS, type TransformRequest } from '../../src/imaging/params.js';

/** A set B request that gives every parameter with a plan step a value that changes the plan. */
const EVERYTHING: TransformRequest = {
  w: 300, h: 200, fit: 'cover', q: 70, f: 'webp', blur: 2, sharp: 3, bri: 10, con: 20, sat: 30, hue: 40, gamma: 1.8, opt: false,
  dpr: 2, gravity: 'focal', fx: 0.25, fy: 0.75, crop: '1,2,30,40', rot: 90, flip: 'hv', trim: 5, bg: 'AABBCC', pad: 3, grayscale: true,
  wm: '0123456789abcdef01234567', wm_gravity: 'north', wm_opacity: 30, wm_scale: 0.5, blur_faces: 8, pixelate_faces: 6,
  remove_bg: true,
};
const NEGOTIATION = { accept: '', sourceFormat: 'jpeg' as const, preferWebpWhenUnsure: false };
const MARK = { imageId: '0123456789abcdef01234567', sourceKey: 'u/images/logo.png', version: 'v2' };

describe('transform parameter registry', () => {
  it('lists each parameter once', () => {
    const names = TRANSFORM_PARAMS.map((p) => p.name);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('each handler keys only its own name, and every applied parameter has a pair', () => {
    const { plan } = resolvePlan('B', EVERYTHING, NEGOTIATION, { watermark: MARK });
    for (const p of TRANSFORM_PARAMS) {
      const pairs = 'key' in p && p.key ? p.key(plan) : [];
      for (const [name] of pairs) expect(name, `${p.name}'s key`).to.equal(p.name);
    }
    const keyed = canonicalPairs(plan).map(([name]) => name);
    // dpr is folded into w and h, opt=false is the default; preset and v add nothing to a key.
    expect(keyed).to.deep.equal(TRANSFORM_PARAMS.map((p) => p.name).filter((n) => !['dpr', 'opt', 'preset', 'v'].includes(n)));
    expect(plan.width).to.equal(600);
    expect(plan.focus).to.deep.equal({ x: 0.25, y: 0.75 });
    expect(plan.watermark).to.deep.include({ gravity: 'north', opacity: 30, scale: 0.5 });
  });

  it('each parameter left out leaves every other pair as it was', () => {
    const full = canonicalPairs(resolvePlan('B', EVERYTHING, NEGOTIATION, { watermark: MARK }).plan);
    for (const name of ['blur', 'sharp', 'bri', 'con', 'sat', 'hue', 'gamma', 'crop', 'rot', 'flip', 'trim', 'bg', 'pad', 'grayscale', 'blur_faces', 'pixelate_faces', 'remove_bg'] as const) {
      const without: TransformRequest = { ...EVERYTHING };
      delete without[name];
      const pairs = canonicalPairs(resolvePlan('B', without, NEGOTIATION, { watermark: MARK }).plan);
      expect(pairs, `without ${name}`).to.deep.equal(full.filter(([n]) => n !== name));
    }
  });

  it('a watermark is planned only for the image the front door found', () => {
    expect(resolvePlan('B', EVERYTHING, NEGOTIATION).plan.watermark).to.equal(undefined);
  });

  describe('decisions that need the original (the source facts the front door passes in)', () => {
    const SOURCE = { width: 400, height: 200 };
    const FACE = { x: 0.1, y: 0.2, w: 0.2, h: 0.4 };
    const COVER: TransformRequest = { w: 100, h: 100, fit: 'cover' };

    it('gravity=face centres on the faces found at upload; without faces it is attention; unknown source leaves it to the worker', () => {
      expect(resolvePlan('B', { ...COVER, gravity: 'face' }, NEGOTIATION, { source: { ...SOURCE, faces: [FACE] } }).plan).to.deep.include({ gravity: 'face', focus: { x: 0.2, y: 0.4 } });
      const none = resolvePlan('B', { ...COVER, gravity: 'face' }, NEGOTIATION, { source: { ...SOURCE, faces: [] } }).plan;
      expect([none.gravity, none.focus]).to.deep.equal(['attention', undefined]);
      expect(resolvePlan('B', { ...COVER, gravity: 'face' }, NEGOTIATION).plan.gravity).to.equal('face');
    });

    it('the focus is moved through crop, rot and flip (resolved after gravity)', () => {
      const plain = resolvePlan('B', { ...COVER, gravity: 'focal', fx: 0.25, fy: 0.5 }, NEGOTIATION, { source: SOURCE }).plan;
      const flipped = resolvePlan('B', { ...COVER, gravity: 'focal', fx: 0.25, fy: 0.5, flip: 'h' }, NEGOTIATION, { source: SOURCE }).plan;
      expect(plain.focus).to.deep.equal({ x: 0.25, y: 0.5 });
      expect(flipped.focus).to.deep.equal({ x: 0.75, y: 0.5 });
    });

    it('face privacy takes the upload\'s boxes when the catalog has them, else leaves detection to the render', () => {
      expect(resolvePlan('B', { blur_faces: 8 }, NEGOTIATION, { source: { ...SOURCE, faces: [FACE] } }).plan.faces).to.deep.equal([FACE]);
      expect(resolvePlan('B', { pixelate_faces: 6 }, NEGOTIATION, { source: SOURCE }).plan.faces).to.equal(undefined);
      expect(resolvePlan('B', { w: 100 }, NEGOTIATION, { source: { ...SOURCE, faces: [FACE] } }).plan.faces).to.equal(undefined);
    });

    it('an animated original stays animated in WebP unless a step needs one frame', () => {
      const animated = { source: { ...SOURCE, frames: 3 } };
      expect(resolvePlan('B', { w: 100, f: 'webp' }, NEGOTIATION, animated).plan.animated).to.equal(true);
      expect(resolvePlan('B', { w: 100, f: 'png' }, NEGOTIATION, animated).plan.animated).to.equal(undefined);
      expect(resolvePlan('B', { w: 100, f: 'webp', rot: 90 }, NEGOTIATION, animated).plan.animated).to.equal(undefined);
      expect(resolvePlan('B', { w: 100, f: 'webp' }, NEGOTIATION, { source: SOURCE }).plan.animated).to.equal(undefined);
    });
  });

  it('presets: a preset may set every parameter but itself and v; the presets-only public route takes preset, f and v', () => {
    expect(TRANSFORM_PARAMS.map((p) => p.name).filter((n) => !PRESETTABLE_PARAMS.includes(n))).to.deep.equal(['preset', 'v']);
    expect(PRESETS_ONLY_PARAMS).to.deep.equal(['f', 'preset', 'v']);
  });
});

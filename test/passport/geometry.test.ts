import { expect } from 'chai';
import { CROWN_FALLBACK_RATIO, crownFromMask, faceInFrame, headRollDegrees, keypointsFromBox, makeFaceFrame, outputToSource, planCrop, sourceToOutput, type FaceLike, type FrameMask } from '../../src/passport/geometry.js';
import { PASSPORT_COUNTRIES, PASSPORT_SPECS } from '../../src/passport/specs.js';
import { fromFrame, rollDegrees, toFrame } from '../../src/vision/face-frame.js';

function syntheticFace(rollDeg = 0): FaceLike {
  const box = { x: 200, y: 100, width: 100, height: 100 };
  const k = keypointsFromBox(box);
  if (rollDeg === 0) return { box, keypoints: k };
  const c = { x: 250, y: 150 };
  const t = (rollDeg * Math.PI) / 180;
  const rot = (p: { x: number; y: number }) => ({
    x: c.x + (p.x - c.x) * Math.cos(t) - (p.y - c.y) * Math.sin(t),
    y: c.y + (p.x - c.x) * Math.sin(t) + (p.y - c.y) * Math.cos(t),
  });
  return {
    box,
    keypoints: {
      rightEye: rot(k.rightEye), leftEye: rot(k.leftEye), noseTip: rot(k.noseTip),
      mouth: rot(k.mouth), rightEar: rot(k.rightEar), leftEar: rot(k.leftEar),
    },
  };
}

describe('passport geometry (pure)', () => {
  it('roll from the eyes; levels every roll, a fraction of a degree too', () => {
    expect(rollDegrees(syntheticFace(8).keypoints)).to.be.closeTo(8, 1e-9);
    expect(makeFaceFrame(syntheticFace(8).keypoints).angleDeg).to.be.closeTo(8, 1e-9);
    expect(makeFaceFrame(syntheticFace(0.8).keypoints).angleDeg).to.be.closeTo(0.8, 1e-9);
    expect(makeFaceFrame(syntheticFace(8).keypoints, false).angleDeg).to.equal(0);
  });

  it('head roll: the eye line\'s tilt on a frontal face; on a turned face (eye line foreshortened) its height difference over a frontal eye distance', () => {
    expect(headRollDegrees(syntheticFace(8))).to.be.closeTo(8, 1e-9);
    expect(headRollDegrees(syntheticFace(-0.5))).to.be.closeTo(-0.5, 1e-9);
    // Turned about 55 degrees (eyes 0.25 box widths apart instead of 0.42): 3.5 px lower reads 8 degrees as a line, 4.8 as a head.
    const box = { x: 200, y: 100, width: 100, height: 100 };
    const turned = (dy: number): FaceLike => ({ box, keypoints: { ...keypointsFromBox(box), rightEye: { x: 240, y: 130 }, leftEye: { x: 265, y: 130 + dy } } });
    expect(rollDegrees(turned(3.5).keypoints)).to.be.closeTo(7.97, 0.01);
    expect(headRollDegrees(turned(3.5))).to.be.closeTo(4.78, 0.01);
    // A turned head rolled by 8 degrees still reads 8.
    expect(headRollDegrees(turned(42 * Math.sin((8 * Math.PI) / 180)))).to.be.closeTo(8, 1e-9);
  });

  it('face frame round-trips and puts both eyes on b = 0', () => {
    const f = syntheticFace(-6);
    const frame = makeFaceFrame(f.keypoints);
    for (const p of [{ x: 3, y: 4 }, { x: 400, y: -20 }]) {
      const { a, b } = toFrame(frame, p);
      const q = fromFrame(frame, a, b);
      expect(q.x).to.be.closeTo(p.x, 1e-9);
      expect(q.y).to.be.closeTo(p.y, 1e-9);
    }
    expect(toFrame(frame, f.keypoints.rightEye).b).to.be.closeTo(0, 1e-9);
    expect(toFrame(frame, f.keypoints.leftEye).b).to.be.closeTo(0, 1e-9);
  });

  it('crown: top of the mask inside the face band, detached blobs ignored, fallback otherwise', () => {
    const face = syntheticFace();
    const frame = makeFaceFrame(face.keypoints);
    const fif = faceInFrame(frame, face);
    // Mask grid in the face frame, 1 source px per cell, covering a0..a0+300, b0..b0+300.
    const width = 300;
    const height = 300;
    const a0 = -150;
    const b0 = -200;
    const data = new Float32Array(width * height);
    const headTopB = fif.boxTopB - 0.6 * fif.boxHeight; // hair 0.6 box heights above the box
    for (let r = 0; r < height; r++) {
      for (let c = 0; c < width; c++) {
        const a = a0 + c;
        const b = b0 + r;
        if (b >= headTopB && Math.abs(a - fif.centerA) < 60) data[r * width + c] = 0.95;
      }
    }
    // a detached blob above the head (e.g. another object) must not move the crown
    for (let r = 0; r < 10; r++) for (let c = 140; c < 160; c++) data[r * width + c] = 0.9;
    const mask: FrameMask = { data, width, height, a0, b0, step: 1 };
    const est = crownFromMask(fif, mask);
    expect(est.source).to.equal('mask');
    expect(est.crownB).to.be.closeTo(headTopB, 1.01);

    const empty: FrameMask = { ...mask, data: new Float32Array(width * height) };
    const fb = crownFromMask(fif, empty);
    expect(fb.source).to.equal('fallback');
    expect(fb.crownB).to.be.closeTo(fif.boxTopB - CROWN_FALLBACK_RATIO * fif.boxHeight, 1e-9);
    expect(crownFromMask(fif, null).source).to.equal('fallback');
  });

  for (const country of PASSPORT_COUNTRIES) {
    const spec = PASSPORT_SPECS[country];
    const rule = spec.eyeLineRatio ? 'eye line in range' : spec.topMarginMm ? 'crown at the middle of the top margin' : 'head centred vertically';
    it(`crop plan for ${country}: head mid-range, ${rule}, face centred`, () => {
      for (const roll of [0, 8, -12]) {
        const face = syntheticFace(roll);
        const frame = makeFaceFrame(face.keypoints);
        const fif = faceInFrame(frame, face);
        const crownB = fif.boxTopB - 0.6 * fif.boxHeight;
        const plan = planCrop(spec, frame, fif, crownB);
        const H = spec.digital.height;
        const mid = (spec.headHeightRatio[0] + spec.headHeightRatio[1]) / 2;
        expect(plan.headHeightRatio).to.be.closeTo(mid, 1e-9);
        if (spec.eyeLineRatio) {
          expect(plan.eyeLineRatio).to.be.within(spec.eyeLineRatio[0], spec.eyeLineRatio[1]);
        } else if (spec.topMarginMm) {
          const topMm = (plan.crownY / H) * spec.print.heightMm;
          expect(topMm).to.be.closeTo((spec.topMarginMm[0] + spec.topMarginMm[1]) / 2, 1e-9);
        } else {
          expect(plan.crownY).to.be.closeTo(H - plan.chinY, 1e-9);
        }
        expect(plan.faceCenterX).to.be.closeTo(spec.digital.width / 2, 1e-9);
        expect(plan.crownY).to.be.above(0);
        expect(plan.chinY).to.be.below(H);
        // the eyes land on the same output row
        const r = sourceToOutput(plan, face.keypoints.rightEye);
        const l = sourceToOutput(plan, face.keypoints.leftEye);
        expect(r.y).to.be.closeTo(l.y, 1e-6);
        expect(r.y).to.be.closeTo(plan.eyeY, 1e-6);
        const back = outputToSource(plan, r.x, r.y);
        expect(back.x).to.be.closeTo(face.keypoints.rightEye.x, 1e-6);
      }
    });
  }

  it('keeps the eye line legal when the margins conflict (very tall hair)', () => {
    const spec = PASSPORT_SPECS.usa;
    const face = syntheticFace();
    const frame = makeFaceFrame(face.keypoints);
    const fif = faceInFrame(frame, face);
    const plan = planCrop(spec, frame, fif, fif.boxTopB - 1.3 * fif.boxHeight);
    const range = spec.eyeLineRatio!;
    expect(plan.eyeLineRatio).to.be.within(range[0] - 1e-9, range[1] + 1e-9);
  });
});

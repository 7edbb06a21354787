// The measuring stage judges the photo it is given, alone: a real composite of the astronaut
// portrait is moved before it is measured (framed too tight, too loose, off centre, tilted, pushed
// against the top edge, two faces, the wrong pixel size, no face at all), and each geometry check
// fails on the photo made to fail it, with a message; the composite as made passes them; a head
// just over its limit is borderline.
import { expect } from 'chai';
import type { ComplianceCheck } from '../../../src/passport/compliance-check.js';
import type { PassportResult } from '../../../src/passport/passport-result.js';
import { checkRequest, decode, detect, refine } from '../../../src/passport/pipeline/find-face.js';
import { plan, segment } from '../../../src/passport/pipeline/frame-photo.js';
import { composite, enhance, render } from '../../../src/passport/pipeline/make-photo.js';
import { check, measure } from '../../../src/passport/pipeline/report.js';
import { PhotoSchedule } from '../../../src/passport/pipeline/scheduler.js';
import type { Composited } from '../../../src/passport/pipeline/context.js';
import type { PassportCountry } from '../../../src/passport/specs.js';
import { PORTRAITS, readCorpus } from '../helpers.js';

async function composited(country: PassportCountry): Promise<Composited> {
  const request = checkRequest(readCorpus(PORTRAITS[0].file), { country }, new PhotoSchedule(() => true));
  return composite(enhance(await render(await plan(await segment(await refine(await detect(await decode(request))))))));
}

/** Output pixel (x, y) -> the pixel of the made photo it shows (nearest); beyond it white, no person. */
type Mapping = (x: number, y: number) => [number, number];

/** The composite as a photo of width x height showing the made photo through `from`; measured and checked. */
async function remeasured(c: Composited, from: Mapping, width = c.photo.width, height = c.photo.height): Promise<PassportResult> {
  const src = c.photo;
  const data = new Uint8Array(width * height * 3).fill(255);
  const prob = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [sx, sy] = from(x + 0.5, y + 0.5).map(Math.floor);
      if (sx < 0 || sy < 0 || sx >= src.width || sy >= src.height) continue;
      const i = y * width + x;
      const j = sy * src.width + sx;
      data.set(src.data.subarray(j * 3, j * 3 + 3), i * 3);
      prob[i] = c.personProb[j];
    }
  }
  // alpha null: the halo compares the photo with the render it came from, which no longer lines up.
  return check(await measure({ ...c, photo: { data, width, height, channels: 3 }, personProb: prob, alpha: null }));
}

const byName = (r: PassportResult, name: string): ComplianceCheck => {
  const found = r.checks.find((c) => c.name === name);
  if (!found) throw new Error(`no ${name} check`);
  return found;
};
const GEOMETRY = ['single_face', 'head_height', 'eye_line', 'horizontal_centering', 'head_roll', 'dimensions'];

describe('passport measure stage: the photo measured on its own', function () {
  this.timeout(120_000);
  let usa: Composited;
  let china: Composited;
  before(async () => {
    usa = await composited('usa');
    china = await composited('china');
  });
  const scaled = (k: number, cx = 300, cy = 300): Mapping => (x, y) => [cx + (x - cx) / k, cy + (y - cy) / k];

  it('the photo as made passes every geometry check; its crown is found on the photo', async () => {
    const r = await remeasured(usa, (x, y) => [x, y]);
    for (const name of GEOMETRY) expect(byName(r, name).status, name).to.equal('pass');
    expect(r.measurements.crown_y).to.be.a('number');
    expect(r.measurements.output_faces).to.equal(1);
  });

  it('framed too tight (x1.25 about the crown) or too loose (x0.7): head_height fails, measured on the photo', async () => {
    const tight = await remeasured(usa, scaled(1.25, 300, 40));
    expect(byName(tight, 'head_height').status).to.equal('fail');
    expect(tight.measurements.head_height_ratio).to.be.above(0.69);
    expect(byName(tight, 'head_height').message).to.match(/it must be 50\.0-68\.8 %/);
    const loose = await remeasured(usa, scaled(0.7));
    expect(byName(loose, 'head_height').status).to.equal('fail');
    expect(loose.measurements.head_height_ratio).to.be.below(0.5);
  });

  it('a head height just over the limit (within its margin) is borderline: a warning to look at, not a fail', async () => {
    const made = await remeasured(usa, (x, y) => [x, y]);
    const crown = made.measurements.crown_y!;
    const k = (usa.spec.headHeightRatio[1] + 0.004) / made.measurements.head_height_ratio!;
    const r = await remeasured(usa, scaled(k, 300, crown));
    const h = byName(r, 'head_height');
    expect(h.measure).to.be.closeTo(usa.spec.headHeightRatio[1], 0.01);
    expect([h.status, h.passed, h.severity, h.limit, h.margin]).to.deep.equal(['borderline', false, 'warning', usa.spec.headHeightRatio[1], 0.01]);
    expect(h.message).to.match(/^Borderline, look at it/);
    expect(r.warnings).to.include(h.message);
  });

  it('the eyes moved down by 15 % of the height: eye_line fails', async () => {
    const r = await remeasured(usa, (x, y) => [x, y - 90]);
    expect(byName(r, 'eye_line').status).to.equal('fail');
    expect(byName(r, 'eye_line').message).to.match(/they must be/);
  });

  it('off centre by 10 % of the width: horizontal_centering fails', async () => {
    const r = await remeasured(usa, (x, y) => [x - 60, y]);
    expect(byName(r, 'horizontal_centering').status).to.equal('fail');
    expect(r.measurements.horizontal_offset_ratio).to.be.closeTo(0.1, 0.02);
  });

  it('tilted by 8 degrees: head_roll fails with the tilt measured', async () => {
    const t = (8 * Math.PI) / 180;
    const r = await remeasured(usa, (x, y) => [300 + (x - 300) * Math.cos(t) + (y - 300) * Math.sin(t), 300 - (x - 300) * Math.sin(t) + (y - 300) * Math.cos(t)]);
    expect(byName(r, 'head_roll').status).to.equal('fail');
    expect(Math.abs(r.measurements.output_roll_degrees!)).to.be.within(5, 11);
  });

  it('too little space above the head: the hair against the top edge fails head_height (crown not measurable); china\'s top margin fails at 1.5 mm', async () => {
    const crown = (await remeasured(usa, (x, y) => [x, y])).measurements.crown_y!;
    const r = await remeasured(usa, (x, y) => [x, y + crown + 4]);
    expect(byName(r, 'head_height').status).to.equal('fail');
    expect(byName(r, 'head_height').message).to.match(/top of the head was not found on the photo/);
    expect(r.measurements.crown_y).to.equal(null);
    const made = await remeasured(china, (x, y) => [x, y]);
    expect(byName(made, 'head_top_margin').status).to.equal('pass');
    const pxPerMm = china.photo.height / china.spec.print.heightMm;
    const up = made.measurements.crown_y! - 1.5 * pxPerMm;
    const r2 = await remeasured(china, (x, y) => [x, y + up]);
    expect(byName(r2, 'head_top_margin').status).to.equal('fail');
    expect(byName(r2, 'head_top_margin').value).to.be.closeTo(1.5, 0.5);
  });

  it('two faces on the photo fail single_face; no face fails every geometry check with a message', async () => {
    const two = await remeasured(usa, (x, y) => [(x % 300) * 2, y * 2 - 150]);
    expect(two.measurements.output_faces).to.equal(2);
    expect(byName(two, 'single_face').status).to.equal('fail');
    const none = await remeasured(usa, () => [-1, -1]);
    for (const name of ['single_face', 'head_height', 'eye_line', 'horizontal_centering', 'head_roll', 'exposure']) {
      expect(byName(none, name).status, name).to.equal('fail');
      expect(byName(none, name).message, name).to.match(/No face was found on the produced photo/);
    }
    expect(none.compliant).to.equal(false);
  });

  it('dimensions reads the encoded file: a photo 10 px short fails it', async () => {
    const r = await remeasured(usa, (x, y) => [x, y], 600, 590);
    expect(byName(r, 'dimensions').status).to.equal('fail');
    expect(byName(r, 'dimensions').message).to.match(/600x590 px at 300 dpi/);
  });
});

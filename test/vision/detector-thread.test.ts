// The detector thread (src/vision/mediapipe/detector-thread.ts): the same faces as the detector
// on the calling thread, the caller's pixels left intact, the calling thread free while it runs, a
// process that used it still exits by itself, a closed or unanswering thread replaced by a new one;
// a refinement grid's crops shared between it and the calling thread give the same face.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { closeDetectorThread, detectFacesInPhotoOffThread, detectFullRangeOffThread, gridCropsOffThread, measureOutputFaceOffThread } from '../../src/vision/mediapipe/detector-thread.js';
import { detectFacesInImage, detectFacesInPhoto, measureOutputFace, REFINE_GRID, refineFace, type CropHelper } from '../../src/vision/face-detector.js';
import { CORPUS } from '../fixtures/images.js';
import { type RawImage } from '../../src/vision/raw-image.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function portraitInScene(): Promise<RawImage> {
  const face = await sharp(path.join(CORPUS, 'faces/02_grace_hopper.jpg')).resize({ height: 120 }).toBuffer();
  const { data, info } = await sharp(path.join(CORPUS, 'photos/Coffee.jpg'))
    .resize(256, 170, { fit: 'cover' })
    .composite([{ input: face, left: 150, top: 30 }])
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height, channels: 4 };
}

describe('face detection thread', function () {
  this.timeout(60_000);
  after(() => closeDetectorThread());

  it('finds the faces the calling thread finds, and leaves the caller’s pixels intact', async () => {
    const img = await portraitInScene();
    const before = Buffer.from(img.data);
    const onThread = await detectFacesInPhotoOffThread(img);
    const here = await detectFacesInPhoto(img);
    expect(onThread).to.have.length(1);
    expect(onThread).to.deep.equal(here);
    expect(Buffer.from(img.data).equals(before), 'pixels unchanged').to.equal(true);
  });

  it('runs a passport input\'s full-range pass and the output measure (from scratch) with the calling thread\'s results', async () => {
    const { data, info } = await sharp(path.join(CORPUS, 'faces/01_astronaut_collins.png')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const rgb: RawImage = { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 };
    const here = await detectFacesInImage(rgb);
    expect(here.faces).to.have.length(1);
    expect(await detectFacesInImage(rgb, { fullRange: (img) => detectFullRangeOffThread(img) })).to.deep.equal(here);
    // A failing thread: the pass runs on this thread instead.
    expect(await detectFacesInImage(rgb, { fullRange: () => Promise.reject(new Error('thread gone')) })).to.deep.equal(here);
    const rgba = await sharp(path.join(CORPUS, 'faces/01_astronaut_collins.png')).ensureAlpha().raw().toBuffer();
    const img: RawImage = { data: new Uint8Array(rgba), width: info.width, height: info.height, channels: 4 };
    const measured = await measureOutputFace(img);
    expect(measured.count).to.equal(1);
    expect(measured.face, 'found').to.not.equal(null);
    expect(await measureOutputFaceOffThread(img)).to.deep.equal(measured);
  });

  it('shares a refinement grid\'s crops with the calling thread: the same face, whatever the share, and when the thread fails', async () => {
    const { data, info } = await sharp(path.join(CORPUS, 'faces/02_grace_hopper.jpg')).removeAlpha().rotate(5, { background: '#fff' }).raw().toBuffer({ resolveWithObject: true });
    const rgb: RawImage = { data: new Uint8Array(data), width: info.width, height: info.height, channels: 3 };
    const [found] = (await detectFacesInImage(rgb)).faces;
    const failing: CropHelper = { share: 0.5, run: () => Promise.reject(new Error('thread gone')) };
    // The input refinement (first crop here, then the grid of 6 crops).
    const alone = await refineFace(rgb, found);
    expect(alone.refined).to.equal(true);
    for (const helper of [gridCropsOffThread(1 / 3), gridCropsOffThread(0.5), gridCropsOffThread(1), failing]) {
      expect(await refineFace(rgb, found, REFINE_GRID, helper), `share ${helper.share}`).to.deep.equal(alone);
    }
  });

  it('leaves the calling thread free while it detects (timers fire during the call)', async () => {
    const img = await portraitInScene();
    await detectFacesInPhotoOffThread(img); // models loaded
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const calls = [];
    for (let i = 0; i < 5; i++) calls.push(detectFacesInPhotoOffThread(img));
    await Promise.all(calls);
    clearInterval(timer);
    // Five full-range passes take ~80 ms; on the calling thread no timer could fire during them.
    expect(ticks).to.be.above(10);
  });

  it('fails the calls in flight when the thread ends, and starts again on the next call', async () => {
    const img = await portraitInScene();
    const inFlight = detectFacesInPhotoOffThread(img).then(() => null, (err: unknown) => String(err));
    await closeDetectorThread();
    expect(await inFlight).to.match(/closed/);
    expect(await detectFacesInPhotoOffThread(img)).to.have.length(1);
  });

  it('ends a thread that does not answer in time, failing the calls queued behind it, and starts a new one', async () => {
    const img = await portraitInScene();
    await detectFacesInPhotoOffThread(img); // models loaded: a pass takes ~20 ms, far above 1 ms
    const late = detectFacesInPhotoOffThread(img, { timeoutMs: 1 });
    const queued = detectFacesInPhotoOffThread(img);
    const failures = await Promise.all([late, queued].map((p) => p.then(() => null, (err: unknown) => String(err))));
    expect(failures[0]).to.match(/did not answer within 1 ms/);
    expect(failures[1], 'the call queued behind it fails too').to.match(/did not answer/);
    expect(await detectFacesInPhotoOffThread(img), 'a new thread answers').to.have.length(1);
  });

  it('does not keep a process alive once its calls are answered, and starts under flags a thread cannot take', async () => {
    const module = pathToFileURL(path.resolve(here, '../../src/vision/mediapipe/detector-thread.js')).href;
    const script = `const { detectFacesInPhotoOffThread } = await import(${JSON.stringify(module)});
const img = { data: new Uint8Array(64 * 64 * 4).fill(128), width: 64, height: 64, channels: 4 };
const faces = await detectFacesInPhotoOffThread(img);
console.log('faces', faces.length);`;
    // --input-type and --expose-gc: flags a thread must not be given (the first fails it, the second is refused).
    const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    // A thread that kept the process alive would hold it until this kill, 20 s after the answer at most.
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let stdout = '';
    let stderr = '';
    let answeredAt = 0;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!answeredAt && stdout.includes('\n')) answeredAt = performance.now();
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    const exitedAt = performance.now();
    clearTimeout(kill);
    expect(stdout.trim(), stderr).to.equal('faces 0');
    expect({ code, signal }, stderr).to.deep.equal({ code: 0, signal: null });
    // The answer is the last thing the script does: the process ends as soon as Node tears down.
    expect(exitedAt - answeredAt, 'ms from the answer to the exit').to.be.below(3000);
  });
});

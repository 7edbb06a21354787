import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { modelPath, loadModel } from '../../src/vision/mediapipe/runtime.js';
import { addMetadataToTflite, buildImageModelMetadata, FACE_MODEL_METADATA } from '../../src/vision/mediapipe/tflite-metadata.js';
import { isTelemetryUrl } from '../../src/vision/mediapipe/telemetry.js';
import { readFileSync } from 'node:fs';

const run = promisify(execFile);

describe('passport mediapipe runtime', () => {
  it('models come from the legacy npm packages in node_modules', () => {
    for (const m of ['faceShort', 'faceFull', 'selfie'] as const) {
      expect(modelPath(m)).to.match(/node_modules\/@mediapipe\/(face_detection|selfie_segmentation)\/[a-z_]+\.tflite$/);
    }
  });

  it('adds TFLite metadata in memory (TFL3 identifier kept, payload present, refuses twice)', () => {
    const raw = new Uint8Array(readFileSync(modelPath('faceShort')));
    const withMeta = loadModel('faceShort');
    expect(withMeta.length).to.be.greaterThan(raw.length);
    expect(String.fromCharCode(...withMeta.subarray(4, 8))).to.equal('TFL3');
    expect(Buffer.from(withMeta).includes(Buffer.from('TFLITE_METADATA'))).to.equal(true);
    expect(Buffer.from(withMeta).includes(Buffer.from('M001'))).to.equal(true);
    expect(() => addMetadataToTflite(withMeta, buildImageModelMetadata(FACE_MODEL_METADATA))).to.throw(/already has/);
    expect(() => addMetadataToTflite(new Uint8Array(64), buildImageModelMetadata(FACE_MODEL_METADATA))).to.throw(/TFL3/);
  });

  it('recognises the telemetry endpoint only', () => {
    expect(isTelemetryUrl('https://odml.pa.googleapis.com/v1/log')).to.equal(true);
    expect(isTelemetryUrl('https://example.com/odml.pa.googleapis.com')).to.equal(false);
    expect(isTelemetryUrl('not a url')).to.equal(false);
  });

  it('no network: the telemetry POST is answered in-process; no GL draw calls; WASM logs swallowed', async function () {
    this.timeout(60_000);
    // Runs from the TypeScript sources (tsx) or from the compiled dist/ tree (plain node).
    const ts = import.meta.url.endsWith('.ts');
    const probe = fileURLToPath(new URL(`./probes/telemetry-probe.${ts ? 'ts' : 'js'}`, import.meta.url));
    const args = ts ? ['--import', 'tsx', probe] : [probe];
    const { stdout, stderr } = await run(process.execPath, args, { cwd: process.cwd(), timeout: 50_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
      tripwire: string[];
      intercepted: number;
      gl: Array<{ draws: number; uploads: number; readPixels: number }>;
      droppedLogLines: number;
    };
    expect(out.tripwire, 'requests that reached the network layer').to.deep.equal([]);
    expect(out.intercepted, 'telemetry requests answered locally').to.be.greaterThan(0);
    expect(out.gl).to.have.length(2);
    for (const g of out.gl) {
      expect(g.draws).to.equal(0);
      expect(g.uploads).to.equal(1);
      expect(g.readPixels).to.equal(1);
    }
    expect(out.droppedLogLines).to.be.greaterThan(0);
    expect(stderr).to.not.match(/gl_context|I\d{4} |W\d{4} /);
  });
});

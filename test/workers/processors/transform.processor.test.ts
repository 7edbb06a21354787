// Render failures in the transform processor, run by a real BullMQ Worker (in this process, with
// DEFAULT_JOB_OPTIONS) on a real Redis and local storage: a corrupt original fails once, final, as
// 422; an internal failure is retried and the job then succeeds, or ends as 503 after the last
// attempt. Out of memory and transient libvips errors cannot be produced on demand here, so the
// render runner throws them (say so: the only stand-in in this file); the probe, the guard and
// BullMQ's retries are the real ones. The derivative ledger (catalog batching) is not under test
// and only collects what it is given.
import { expect } from 'chai';
import type { Job, Queue, QueueEvents } from 'bullmq';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { loadConfig } from '../../../src/config.js';
import { ServiceError } from '../../../src/errors.js';
import { classifyRenderFailure } from '../../../src/imaging/render-failure.js';
import { decodeFailure, type TransformJobData, type TransformResult } from '../../../src/jobs/job-contract.js';
import { DEFAULT_JOB_OPTIONS } from '../../../src/jobs/queues.js';
import { createStorage } from '../../../src/storage/create-storage.js';
import type { Storage } from '../../../src/storage/storage.js';
import { LibvipsThreads } from '../../../workers/libvips-threads.js';
import type { ProcessorContext } from '../../../workers/processors/processor-context.js';
import { guarded } from '../../../workers/processors/run-processor.js';
import { transformProcessor } from '../../../workers/processors/transform.processor.js';
import { jpeg } from '../../fixtures/images.js';
import { BullmqFixture } from '../../harness/bullmq-fixture.js';

const PREFIX = 'transform-failures';

describe('transform processor: render failures', function () {
  this.timeout(60_000);
  let bull: BullmqFixture;
  let dir: string;
  let storage: Storage;
  let queue: Queue;
  let events: QueueEvents;
  /** Failures the render runner throws before rendering, per job id, in order. */
  const injected = new Map<string, Error[]>();
  const corrupt = 'u/images/corrupt.jpg';
  const good = 'u/images/good.jpg';

  before(async () => {
    bull = await BullmqFixture.start(PREFIX);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-transform-failures-'));
    const config = loadConfig({ LOCAL_STORAGE_DIR: dir });
    storage = createStorage(config);
    await storage.put(good, await jpeg(300, 200), { contentType: 'image/jpeg' });
    const bytes = await jpeg(300, 200);
    await storage.put(corrupt, Buffer.concat([bytes.subarray(0, 200), Buffer.alloc(bytes.length - 200, 0x5a)]), { contentType: 'image/jpeg' });
    const libvips = new LibvipsThreads(config);
    let currentJob = '';
    const ctx = {
      config,
      storage,
      log: pino({ level: 'silent' }),
      derivatives: { add: () => undefined },
      libvips: {
        run: <T>(render: () => Promise<T>) => {
          const failure = injected.get(currentJob)?.shift();
          return failure ? Promise.reject(failure) : libvips.run(render);
        },
      },
    } as unknown as ProcessorContext;
    const process = guarded(transformProcessor(ctx));
    queue = bull.queue('transform', { defaultJobOptions: DEFAULT_JOB_OPTIONS });
    events = await bull.events('transform');
    bull.worker(
      'transform',
      async (job: Job<TransformJobData, TransformResult>) => {
        currentJob = job.id!;
        return process(job);
      },
      { concurrency: 1 },
    );
  });
  after(async () => {
    await bull?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function data(sourceKey: string, width: number): TransformJobData {
    return {
      userId: 'u',
      imageId: '000000000000000000000000',
      sourceKey,
      version: 'v1',
      derivativeKey: `${sourceKey}&v=v1&w=${width}.png`,
      plan: { width, fit: 'inside', quality: 80, format: 'png', blur: 0, sharp: 0, bri: 0, con: 0, sat: 0, hue: 0, opt: false } as TransformJobData['plan'],
      origin: 'api',
    };
  }

  /** Runs a job to its end: its result, or the error the front door would answer with. */
  async function run(jobId: string, jobData: TransformJobData): Promise<{ job: Job; result?: TransformResult; error?: ServiceError }> {
    const job = await queue.add('transform', jobData, { jobId });
    try {
      const result = (await job.waitUntilFinished(events)) as TransformResult;
      return { job: (await queue.getJob(jobId))!, result };
    } catch {
      const finished = (await queue.getJob(jobId))!;
      return { job: finished, error: decodeFailure(finished.failedReason, jobId) };
    }
  }

  it('a corrupt original: 422, after one attempt', async () => {
    const { job, error } = await run('corrupt-1', data(corrupt, 100));
    expect(error?.status).to.equal(422);
    expect(error?.message).to.match(/could not be processed/);
    expect(job.attemptsMade).to.equal(1);
    expect(await queue.getJobState('corrupt-1')).to.equal('failed');
  });

  it('out of memory, then a transient libvips error: retried, and the third attempt renders', async () => {
    injected.set('internal-1', [new RangeError('Array buffer allocation failed'), new Error('VipsJpeg: out of order read at line 48')]);
    const { job, result } = await run('internal-1', data(good, 120));
    expect(result?.width).to.equal(120);
    expect(job.attemptsMade).to.equal(3);
    const stored = await storage.read(result!.key);
    const meta = await sharp(stored).metadata();
    expect([meta.format, meta.width, meta.height]).to.deep.equal(['png', 120, 80]);
  });

  it('an internal failure on every attempt: all attempts used, then 503 with Retry-After', async () => {
    injected.set('internal-2', Array.from({ length: DEFAULT_JOB_OPTIONS.attempts! }, () => new Error('vips_malloc: out of memory')));
    const { job, error } = await run('internal-2', data(good, 60));
    expect(job.attemptsMade).to.equal(DEFAULT_JOB_OPTIONS.attempts);
    expect(error?.status).to.equal(503);
    expect(error?.kind).to.equal('unavailable');
    expect(error?.extra.retryAfterSeconds).to.be.greaterThan(0);
  });

  it('classifies by the input: a decodable source is internal, undecodable bytes are input, exhaustion is internal', async () => {
    const source = await storage.read(good);
    const broken = await storage.read(corrupt);
    const libvipsError = new Error('VipsJpeg: out of order read at line 48');
    expect(await classifyRenderFailure(libvipsError, source, 1e8)).to.equal('internal');
    expect(await classifyRenderFailure(libvipsError, broken, 1e8)).to.equal('input');
    expect(await classifyRenderFailure(new Error('vips_malloc: out of memory'), broken, 1e8)).to.equal('internal');
    expect(await classifyRenderFailure(new Error('Input image exceeds pixel limit'), source, 100)).to.equal('input');
    expect(await classifyRenderFailure(new Error('Processed image is too large for the WebP format'), source, 1e8)).to.equal('input');
  });
});

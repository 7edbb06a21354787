// analyze: what the front door tells about an image version without decoding it itself (sharp
// stays out of the front door): its info, or a srcset byte curve. The answer is kept in the
// catalog (src/catalog/image-analysis.ts), so each is computed once per version.
import type { Job } from 'bullmq';
import { Types } from 'mongoose';
import { storeAnalysis } from '../../src/catalog/image-analysis.js';
import { findImageById } from '../../src/catalog/images.js';
import type { ImageDoc } from '../../src/catalog/models/image.model.js';
import { ServiceError } from '../../src/errors.js';
import { describeOriginal } from '../../src/imaging/image-info.js';
import { resolvePlan, type OutputFormat, type TransformRequest } from '../../src/imaging/params.js';
import { renderDerivative, type EncoderSettings } from '../../src/imaging/pipeline.js';
import { sampleWidths, type ByteCurve } from '../../src/imaging/srcset-widths.js';
import { analysisPath } from '../../src/jobs/image-analysis.js';
import type { AnalyzeJobData, AnalyzeResult } from '../../src/jobs/job-contract.js';
import { readIfPresent } from '../../src/storage/storage.js';
import { encoderSettings, type ProcessorContext } from './processor-context.js';

/**
 * Bytes of the renders a srcset URL asks for (set A, `w` only, this format and quality) at the
 * sample widths up to the original's width: the same plan and pipeline as the URLs, so the curve
 * is what they will weigh.
 */
async function measureByteCurve(ctx: ProcessorContext, settings: EncoderSettings, source: Buffer, image: ImageDoc, format: OutputFormat, quality: number | string): Promise<ByteCurve> {
  const widths = sampleWidths(image.width);
  const bytes: number[] = [];
  const negotiation = { accept: '', sourceFormat: format, preferWebpWhenUnsure: false };
  for (const w of widths) {
    const { plan } = resolvePlan('A', { w, f: format, q: quality } as TransformRequest, negotiation);
    const rendered = await ctx.libvips.run(() => renderDerivative(source, plan, settings));
    bytes.push(rendered.buffer.length);
  }
  return { widths, bytes };
}

export function analyzeProcessor(ctx: ProcessorContext) {
  const settings = encoderSettings(ctx.config);
  return async (job: Job<AnalyzeJobData, AnalyzeResult>): Promise<AnalyzeResult> => {
    const { imageId, version, task } = job.data;
    const image = Types.ObjectId.isValid(imageId) ? await findImageById(ctx.catalog, new Types.ObjectId(imageId)) : null;
    if (!image || image.version !== version) throw new ServiceError('not_found', 'The image does not exist (or was replaced meanwhile)');
    const source = await readIfPresent(ctx.storage, image.storageKey);
    if (!source) throw new ServiceError('not_found', 'The image does not exist');
    let result: AnalyzeResult;
    if (task.kind === 'info') {
      result = { kind: 'info', info: await ctx.libvips.run(() => describeOriginal(source, image)) };
      await storeAnalysis(ctx.catalog, imageId, version, 'info', result.info);
    } else {
      result = { kind: 'byte-curve', curve: await measureByteCurve(ctx, settings, source, image, task.format, task.quality) };
      await storeAnalysis(ctx.catalog, imageId, version, analysisPath(task) as `byteCurves.${string}`, result.curve);
    }
    return result;
  };
}

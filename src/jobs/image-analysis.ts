// The front door's way to an image version's analysis (its info, a srcset byte curve): the copy
// kept in the catalog, or else the one analyze job that computes and keeps it (concurrent callers
// share it: its id names the image, version and task). Sharp runs only in the worker.
import { createHash } from 'node:crypto';
import { readAnalysis, type AnalysisPath } from '../catalog/image-analysis.js';
import type { ImageDoc } from '../catalog/models/image.model.js';
import type { ImageInfo } from '../imaging/image-info-shape.js';
import type { OutputFormat } from '../imaging/params.js';
import { byteCurveKey, type ByteCurve } from '../imaging/srcset-widths.js';
import type { Catalog } from '../catalog/catalog.js';
import { QUEUE_NAMES, type AnalyzeResult, type AnalyzeTask } from './job-contract.js';
import type { JobProducer } from './job-producer.js';

type AnalysedImage = Pick<ImageDoc, '_id' | 'userId' | 'version' | 'storageKey'>;

export interface AnalysisDeps {
  catalog: Catalog;
  jobs: Pick<JobProducer, 'run'>;
}

/** Where a task's answer is kept in the version's analysis. */
export function analysisPath(task: AnalyzeTask): AnalysisPath {
  return task.kind === 'info' ? 'info' : `byteCurves.${byteCurveKey(task.format, task.quality)}`;
}

async function analysisOf(deps: AnalysisDeps, image: AnalysedImage, task: AnalyzeTask): Promise<AnalyzeResult> {
  const imageId = String(image._id);
  const path = analysisPath(task);
  const kept = await readAnalysis(deps.catalog, imageId, image.version, path);
  if (kept) return task.kind === 'info' ? { kind: 'info', info: kept as ImageInfo } : { kind: 'byte-curve', curve: kept as ByteCurve };
  const jobId = 'an-' + createHash('sha256').update(`${imageId}|${image.version}|${path}`).digest('hex').slice(0, 40);
  return deps.jobs.run(QUEUE_NAMES.analyze, { userId: image.userId, imageId, version: image.version, sourceKey: image.storageKey, task }, { jobId });
}

export async function imageInfoOf(deps: AnalysisDeps, image: AnalysedImage): Promise<ImageInfo> {
  const result = await analysisOf(deps, image, { kind: 'info' });
  if (result.kind !== 'info') throw new Error(`analyze job answered ${result.kind} for info`);
  return result.info;
}

/** The version's byte curve in this format and quality (as a srcset URL names them). */
export async function byteCurveOf(deps: AnalysisDeps, image: AnalysedImage, format: OutputFormat, quality: number | string): Promise<ByteCurve> {
  const result = await analysisOf(deps, image, { kind: 'byte-curve', format, quality });
  if (result.kind !== 'byte-curve') throw new Error(`analyze job answered ${result.kind} for a byte curve`);
  return result.curve;
}

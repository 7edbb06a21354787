// What analyze jobs computed for an image version (its info, its srcset byte curves), kept on the
// image's catalog entry so that a second request costs one catalog read. Written only while the
// entry still names the version it was computed for: a replacement meanwhile (which clears the
// analysis) is never given the old version's facts.
import { Types } from 'mongoose';
import type { Catalog } from './catalog.js';
import type { ImageAnalysis } from './models/image.model.js';

export type AnalysisPath = 'info' | `byteCurves.${string}`;

type AnalysisValue<P extends AnalysisPath> = P extends 'info' ? NonNullable<ImageAnalysis['info']> : NonNullable<ImageAnalysis['byteCurves']>[string];

function read(analysis: ImageAnalysis | null | undefined, path: AnalysisPath): unknown {
  if (!analysis) return undefined;
  if (path === 'info') return analysis.info;
  return analysis.byteCurves?.[path.slice('byteCurves.'.length)];
}

/** The stored value at `path` of this version's analysis, or null (not computed, or another version). */
export async function readAnalysis<P extends AnalysisPath>(catalog: Catalog, imageId: string, version: string, path: P): Promise<AnalysisValue<P> | null> {
  if (!Types.ObjectId.isValid(imageId)) return null;
  const doc = await catalog.driver.images.findOne({ _id: new Types.ObjectId(imageId), version }, { projection: { [`analysis.${path}`]: 1 } });
  return (read(doc?.analysis, path) as AnalysisValue<P> | undefined) ?? null;
}

/** Stores `value` at `path` of the version's analysis; false when the entry names another version (or is gone). */
export async function storeAnalysis<P extends AnalysisPath>(catalog: Catalog, imageId: string, version: string, path: P, value: AnalysisValue<P>): Promise<boolean> {
  // Bookkeeping, not a change of the image: updatedAt stays.
  const res = await catalog.driver.images.updateOne({ _id: new Types.ObjectId(imageId), version }, { $set: { [`analysis.${path}`]: value } });
  return res.matchedCount === 1;
}

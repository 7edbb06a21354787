import { Schema, type Connection, type Model, type Types } from 'mongoose';
import type { ImageInfo } from '../../imaging/image-info-shape.js';
import type { ImagePreview } from '../../imaging/preview.js';
import type { ByteCurve } from '../../imaging/srcset-widths.js';

export interface ImageDoc {
  _id: Types.ObjectId; // imageId; ObjectIds grow with time, so _id order is upload order
  userId: string;
  publicId: string;
  projectId: Types.ObjectId | null;
  format: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  checksum: string; // sha256 hex of the original bytes
  storageKey: string;
  /** Changes on every replacement; part of derivative keys so old derivatives are never served. */
  version: string;
  /** Upload that produced this version (idempotency of finalize jobs). */
  uploadId: string;
  /** Usage delta of this version, present until applied (see catalog/images.ts recordUpload). */
  pendingUsage?: { opId: string; storageBytes: number; imageCount: number } | null;
  /** Faces, placeholders and frame count, computed once by the finalize job (null: not available). */
  preview?: ImagePreview | null;
  /** What analyze jobs computed for this version, on first request (cleared by a replacement). */
  analysis?: ImageAnalysis | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ImageAnalysis {
  /** GET /cdn/{id}/info's answer. */
  info?: ImageInfo;
  /** srcset w=auto's byte curves, by byteCurveKey (format and quality). */
  byteCurves?: Record<string, ByteCurve>;
}

const imageSchema = new Schema<ImageDoc>(
  {
    userId: { type: String, required: true },
    publicId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, default: null },
    format: { type: String, required: true },
    contentType: { type: String, required: true },
    width: { type: Number, required: true },
    height: { type: Number, required: true },
    bytes: { type: Number, required: true },
    checksum: { type: String, required: true },
    storageKey: { type: String, required: true },
    version: { type: String, required: true },
    uploadId: { type: String, required: true },
    pendingUsage: { type: { _id: false, opId: String, storageBytes: Number, imageCount: Number }, default: undefined },
    preview: { type: Schema.Types.Mixed, default: undefined },
    analysis: { type: Schema.Types.Mixed, default: undefined },
  },
  { timestamps: true, versionKey: false },
);
imageSchema.index({ userId: 1, publicId: 1 }, { unique: true });
imageSchema.index({ userId: 1, _id: -1 });
imageSchema.index({ userId: 1, projectId: 1, _id: -1 });

export const imageModel = (conn: Connection): Model<ImageDoc> => conn.model<ImageDoc>('Image', imageSchema, 'images');

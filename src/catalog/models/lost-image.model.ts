import { Schema, type Connection, type Model } from 'mongoose';
import type { ImageDoc } from './image.model.js';

/**
 * A catalog entry whose original was missing at a start-up reconcile: set aside here (out of
 * listings, usage and serving) instead of being dropped, with when. Same fields as the image.
 */
export interface LostImageDoc extends Omit<ImageDoc, 'pendingUsage'> {
  lostAt: Date;
}

const lostImageSchema = new Schema<LostImageDoc>(
  {
    _id: { type: Schema.Types.ObjectId, required: true },
    userId: { type: String, required: true },
    publicId: { type: String, required: true },
    projectId: { type: Schema.Types.ObjectId, default: null },
    format: String,
    contentType: String,
    width: Number,
    height: Number,
    bytes: Number,
    checksum: String,
    storageKey: { type: String, required: true },
    version: String,
    uploadId: String,
    createdAt: Date,
    updatedAt: Date,
    lostAt: { type: Date, required: true },
  },
  { versionKey: false, timestamps: false },
);

/** The model on a connection (registered once per connection). */
export const lostImageModel = (conn: Connection): Model<LostImageDoc> =>
  (conn.models.LostImage as Model<LostImageDoc> | undefined) ?? conn.model<LostImageDoc>('LostImage', lostImageSchema, 'lostImages');

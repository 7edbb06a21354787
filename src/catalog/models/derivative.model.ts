import { Schema, type Connection, type Model, type Types } from 'mongoose';

/** Which route created a derivative: keyed API calls, public /cdn/{id}, or the demo route. */
export type DerivativeOrigin = 'api' | 'public' | 'demo';

export interface DerivativeDoc {
  _id: string; // the derivative's storage key (idempotent upsert target)
  userId: string;
  imageId: Types.ObjectId;
  bytes: number;
  contentType: string;
  /** Which route created it; public /cdn/{id} and demo derivatives are capped per image, each on its own. */
  origin: DerivativeOrigin;
  /** The encoder quality q=auto chose (absent for a quality the request named). */
  quality?: number;
  createdAt: Date;
}

const derivativeSchema = new Schema<DerivativeDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true },
    imageId: { type: Schema.Types.ObjectId, required: true, index: true },
    bytes: { type: Number, required: true },
    contentType: { type: String, required: true },
    origin: { type: String, required: true, default: 'api' },
    quality: { type: Number },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);

export const derivativeModel = (conn: Connection): Model<DerivativeDoc> =>
  conn.model<DerivativeDoc>('Derivative', derivativeSchema, 'derivatives');

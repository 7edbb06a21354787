import { Schema, type Connection, type Model } from 'mongoose';

/**
 * Counters per user (`_id` = userId) and per user-month (`_id` = `userId:YYYY-MM`). Every change
 * is one atomic single-document update; `ops` remembers the last applied operation ids so a job
 * that runs twice applies its delta once (check-and-increment in the same update).
 */
export interface UsageDoc {
  _id: string;
  userId: string;
  period: string; // 'total' or 'YYYY-MM'
  storageBytes: number;
  imageCount: number;
  derivativeCount: number;
  /** Bytes of stored derivatives: a part of storageBytes, shown on its own. */
  derivativeBytes?: number;
  bandwidthBytes: number;
  transformations: number;
  ops: string[];
  /** Storage held for uploads in progress (uploadId → bytes, already inside storageBytes); see usage.ts. */
  holds?: Record<string, number>;
}

const usageSchema = new Schema<UsageDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true },
    period: { type: String, required: true },
    storageBytes: { type: Number, default: 0 },
    imageCount: { type: Number, default: 0 },
    derivativeCount: { type: Number, default: 0 },
    derivativeBytes: { type: Number, default: 0 },
    bandwidthBytes: { type: Number, default: 0 },
    transformations: { type: Number, default: 0 },
    ops: { type: [String], default: [] },
    holds: { type: Schema.Types.Mixed, default: undefined },
  },
  { versionKey: false },
);

export const usageModel = (conn: Connection): Model<UsageDoc> => conn.model<UsageDoc>('Usage', usageSchema, 'usage');

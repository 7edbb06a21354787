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

/** The counters of a new document: the schema's defaults, and what usage.ts's driver upserts set. */
export const NEW_COUNTERS = { storageBytes: 0, imageCount: 0, derivativeCount: 0, derivativeBytes: 0, bandwidthBytes: 0, transformations: 0 } as const;

const usageSchema = new Schema<UsageDoc>(
  {
    _id: { type: String, required: true },
    userId: { type: String, required: true },
    period: { type: String, required: true },
    ...Object.fromEntries(Object.entries(NEW_COUNTERS).map(([field, value]) => [field, { type: Number, default: value }])),
    ops: { type: [String], default: [] },
    holds: { type: Schema.Types.Mixed, default: undefined },
  },
  { versionKey: false },
);

export const usageModel = (conn: Connection): Model<UsageDoc> => conn.model<UsageDoc>('Usage', usageSchema, 'usage');

// What the client host and the data host report to the cluster runner, and the figures made of it.

export interface RequestRecord {
  op: 'upload' | 'transform' | 'srcset';
  /** Index of the front door it was sent to. */
  door: number;
  start: number;
  end: number;
  /** HTTP status; 0 when no answer came (connection error, or not answered within the client's limit). */
  status: number;
  retryAfter?: string;
}

export interface Acknowledgements {
  uploads: { imageId: string; publicId: string; sha256: string; url: string }[];
  /** Derivative URLs answered 200. */
  derivatives: string[];
}

export interface LoadResult {
  records: RequestRecord[];
  ack: Acknowledgements;
}

export interface Inspection {
  catalogImages: number;
  duplicateImageRows: number;
  lostUploads: string[];
  lostDerivatives: string[];
  derivativeRows: number;
  derivativeObjects: number;
  /** Usage counter minus what the catalog holds. */
  usageDrift: { images: number; derivatives: number; derivativeBytes: number; originalBytes: number; transformations: number };
  jobsLeft: number;
  /** Completed jobs that were taken over (stalled at least once), and when their last run started. */
  restarted: { id: string; processedOn: number }[];
  /** Jobs the stalled check gave back to the queue (their lock had expired), and when. */
  released: { id: string; at: number }[];
  consistency: string;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** `p50/p99 ms (n)` of the answered requests that started within [from, to). */
export function latency(records: RequestRecord[], from: number, to: number): string {
  const ms = records.filter((r) => r.start >= from && r.start < to && r.status !== 0).map((r) => r.end - r.start);
  return ms.length ? `${percentile(ms, 50)}/${percentile(ms, 99)} ms (${ms.length})` : 'none';
}

export function statusCounts(records: RequestRecord[]): string {
  const counts = new Map<number, number>();
  for (const r of records) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s === 0 ? 'none' : s}×${n}`).join(' ');
}

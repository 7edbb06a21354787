// Messages between the bench orchestrator and the load generator process.

export interface LoadSpec {
  /** Origin, e.g. http://127.0.0.1:8080 */
  origin: string;
  connections: number;
  /** Seconds; ignored when amount is set. */
  durationSec?: number;
  /** Exact number of requests (used by the soak). */
  amount?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Request body, base64 (uploads). */
  bodyBase64?: string;
  /** Paths taken in order, one per request (unique parameter sets); wraps around when exhausted. */
  paths?: string[];
  /** Or one path template; `{n}` becomes a running number (offset by nStart). */
  pathTemplate?: string;
  nStart?: number;
  timeoutSec?: number;
}

export interface LoadResult {
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSec: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  /** Paths used (so the caller knows how many unique sets were consumed). */
  pathsUsed: number;
  /** First non-2xx status codes seen (diagnostics). */
  statusSamples: number[];
  /** The load generator's own CPU per second of the run (1 = one core busy: it may be the limit). */
  loadgenCpuShare: number;
}

export type ToLoadgen = { type: 'run'; id: number; spec: LoadSpec } | { type: 'exit' };
/** `wrk`: its version line, or null when the fixed GETs fall back to autocannon. */
export type FromLoadgen = { type: 'ready'; wrk: string | null } | { type: 'result'; id: number; result: LoadResult } | { type: 'failed'; id: number; error: string };

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

// What `npm run bench` measures and prints: one row per measurement (throughput, latency, CPU and
// peak RSS per process of the target), the ratios checked against their targets, and the final
// table. CPU and RSS are read from /proc around each load run, with every process quiet before.
import type { LoadResult, LoadSpec } from './protocol.js';
import { cpuMs, peakRss, quiesce, resetPeak } from './procs.js';
import type { Proc } from './bench-processes.js';

export const MB = 1024 * 1024;

export interface Row {
  scenario: string;
  target: string;
  concurrency: number;
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  failed: number;
  /** Peak RSS (VmHWM) of each process of the target during this measurement, bytes. */
  peakRss: Record<string, number | null>;
  /** CPU time used per successful request by each process of the target (ms), and their sum. */
  cpuPerRequest: Record<string, number>;
  cpuMsPerRequest: number;
  note?: string;
}

export interface Ratio {
  name: string;
  value: number;
  target: string;
  pass: boolean;
  detail: string;
}

export function pad(s: string, n: number) {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export function fmt(n: number, digits = 1) {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function mb(n: number | null) {
  return n === null ? '-' : `${Math.round(n / MB)}M`;
}

export class BenchResults {
  readonly rows: Row[] = [];
  readonly ratios: Ratio[] = [];
  readonly notes: string[] = [];
  readonly extra: Record<string, unknown> = {};

  constructor(
    private readonly load: (spec: LoadSpec) => Promise<LoadResult>,
    private readonly say: (line?: string) => void,
  ) {}

  measure = async (scenario: string, target: string, procs: Proc[], spec: LoadSpec, note?: string): Promise<{ row: Row; result: LoadResult }> => {
    await quiesce(procs.map((p) => p.pid));
    for (const p of procs) resetPeak(p.pid);
    const cpu0 = procs.map((p) => cpuMs(p.pid) ?? 0);
    const result = await this.load(spec);
    const cpu1 = procs.map((p) => cpuMs(p.pid) ?? 0);
    const peaks: Record<string, number | null> = {};
    for (const p of procs) peaks[p.name] = peakRss(p.pid);
    const cpuPerRequest: Record<string, number> = {};
    procs.forEach((p, i) => (cpuPerRequest[p.name] = result.ok ? (cpu1[i] - cpu0[i]) / result.ok : NaN));
    const cpuMsPerRequest = Object.values(cpuPerRequest).reduce((a, b) => a + b, 0);
    await quiesce(procs.map((p) => p.pid));
    const row: Row = {
      scenario,
      target,
      concurrency: spec.connections,
      requests: result.ok,
      rps: result.rps,
      p50: result.p50,
      p95: result.p95,
      p99: result.p99,
      failed: result.non2xx + result.errors,
      peakRss: peaks,
      cpuPerRequest,
      cpuMsPerRequest,
      note,
    };
    if (row.failed > 0) row.note = `${note ? note + '; ' : ''}${result.non2xx} non-2xx (${result.statusSamples.join(',')}), ${result.errors} errors`;
    this.rows.push(row);
    this.say(`  ${pad(scenario, 22)} ${pad(target, 24)} c=${pad(String(spec.connections), 3)} ${fmt(row.rps, 1).padStart(9)} req/s  p50 ${fmt(row.p50, 1).padStart(7)} ms  p95 ${fmt(row.p95, 1).padStart(7)}  p99 ${fmt(row.p99, 1).padStart(7)}  cpu ${fmt(cpuMsPerRequest, 2).padStart(6)} ms/req (${Object.entries(cpuPerRequest).map(([k, v]) => `${k.replace('svc-', '')} ${fmt(v, 2)}`).join(', ')})${row.failed ? `  FAILED ${row.failed}` : ''}`);
    return { row, result };
  };

  ratio = (name: string, value: number, min: number | null, max: number | null, detail: string) => {
    const pass = Number.isFinite(value) && (min === null || value >= min) && (max === null || value <= max);
    const target = min !== null ? `≥ ${min}` : `≤ ${max}`;
    this.ratios.push({ name, value, target, pass, detail });
  };

  /** Prints the table of rows, the whole run's peaks, the ratios and the notes; returns how many ratios fail. */
  printReport(durationSec: number, finalPeaks: Record<string, number | null>): number {
    const say = this.say;
    say('\n' + '='.repeat(120));
    say(`Results (${durationSec} s per measurement; latency over 2xx responses; peak RSS = VmHWM during the measurement)`);
    const header = ['scenario', 'target', 'c', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'fail', 'CPU ms/req', 'peak RSS'];
    const table = this.rows.map((r) => [
      r.scenario,
      r.target,
      String(r.concurrency),
      fmt(r.rps, 1),
      fmt(r.p50, 1),
      fmt(r.p95, 1),
      fmt(r.p99, 1),
      String(r.failed),
      fmt(r.cpuMsPerRequest, 2),
      Object.entries(r.peakRss)
        .map(([k, v]) => `${k.replace('svc-', '')} ${mb(v)}`)
        .join(', '),
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
    const line = (cells: string[]) => '| ' + cells.map((c, i) => (i >= 2 && i <= 8 ? c.padStart(widths[i]) : pad(c, widths[i]))).join(' | ') + ' |';
    say(line(header));
    say('|' + widths.map((w, i) => (i >= 2 && i <= 8 ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|');
    for (const t of table) say(line(t));
    say('\nPeak RSS over the whole run: ' + Object.entries(finalPeaks).map(([k, v]) => `${k} ${mb(v)}`).join(', '));
    say('\nRatios');
    for (const r of this.ratios) say(`  ${r.pass ? 'PASS' : 'FAIL'}  ${pad(r.name, 52)} ${fmt(r.value, 2).padStart(8)}  (target ${r.target}; ${r.detail})`);
    for (const n of this.notes) say(`note: ${n}`);
    return this.ratios.filter((r) => !r.pass).length;
  }
}

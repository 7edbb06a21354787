// The bench's results: one row per measurement, the target ratios with PASS/FAIL, notes; printed
// as one table at the end and written as JSON under bench/results/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MB, resultsDir, say, startedAt } from './settings.js';

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
  /** The load generator's CPU per second of the run (cores); near 1 it, not the target, is the limit. */
  loadgenCpu: number;
  /** 1-minute load average as the measurement ended (other users of the machine show here). */
  load1: number;
  note?: string;
}

export interface Ratio {
  name: string;
  value: number;
  target: string;
  pass: boolean;
  detail: string;
}

export const rows: Row[] = [];
export const ratios: Ratio[] = [];
export const notes: string[] = [];
export const extra: Record<string, unknown> = {};

export function ratio(name: string, value: number, min: number | null, max: number | null, detail: string) {
  const pass = Number.isFinite(value) && (min === null || value >= min) && (max === null || value <= max);
  const target = min !== null ? `≥ ${min}` : `≤ ${max}`;
  ratios.push({ name, value, target, pass, detail });
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

/** One line per measurement as it ends. */
export function sayRow(row: Row) {
  const cpu = Object.entries(row.cpuPerRequest)
    .map(([k, v]) => `${k.replace('svc-', '')} ${fmt(v, 2)}`)
    .join(', ');
  say(
    `  ${pad(row.scenario, 22)} ${pad(row.target, 24)} c=${pad(String(row.concurrency), 3)} ${fmt(row.rps, 1).padStart(9)} req/s  p50 ${fmt(row.p50, 1).padStart(7)} ms  p95 ${fmt(row.p95, 1).padStart(7)}  p99 ${fmt(row.p99, 1).padStart(7)}  cpu ${fmt(row.cpuMsPerRequest, 2).padStart(6)} ms/req (${cpu})  loadgen ${fmt(row.loadgenCpu, 2)} core  load ${fmt(row.load1, 2)}${row.failed ? `  FAILED ${row.failed}` : ''}${row.note ? `  (${row.note})` : ''}`,
  );
}

/** The whole table, the ratios and the verdict; returns how many targets failed. */
export function printResults(durationSec: number, finalPeaks: Record<string, number | null>, loadAtEnd: number): number {
  say('\n' + '='.repeat(120));
  say(`Results (${durationSec} s per measurement; latency over 2xx responses; peak RSS = VmHWM during the measurement)`);
  const header = ['scenario', 'target', 'c', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'fail', 'CPU ms/req', 'loadgen cores', 'load', 'peak RSS'];
  const table = rows.map((r) => [
    r.scenario,
    r.target,
    String(r.concurrency),
    fmt(r.rps, 1),
    fmt(r.p50, 1),
    fmt(r.p95, 1),
    fmt(r.p99, 1),
    String(r.failed),
    fmt(r.cpuMsPerRequest, 2),
    fmt(r.loadgenCpu, 2),
    fmt(r.load1, 2),
    Object.entries(r.peakRss)
      .map(([k, v]) => `${k.replace('svc-', '')} ${mb(v)}`)
      .join(', '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const numeric = (i: number) => i >= 2 && i <= 10;
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (numeric(i) ? c.padStart(widths[i]) : pad(c, widths[i]))).join(' | ') + ' |';
  say(line(header));
  say('|' + widths.map((w, i) => (numeric(i) ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2))).join('|') + '|');
  for (const t of table) say(line(t));
  say('\nPeak RSS over the whole run: ' + Object.entries(finalPeaks).map(([k, v]) => `${k} ${mb(v)}`).join(', '));
  say('\nRatios');
  for (const r of ratios) say(`  ${r.pass ? 'PASS' : 'FAIL'}  ${pad(r.name, 52)} ${fmt(r.value, 2).padStart(8)}  (target ${r.target}; ${r.detail})`);
  for (const n of notes) say(`note: ${n}`);
  say(`load average at the end: ${loadAtEnd.toFixed(2)}`);
  const failedCount = ratios.filter((r) => !r.pass).length;
  say(failedCount === 0 ? `ALL ${ratios.length} TARGETS PASS` : `${failedCount} of ${ratios.length} targets FAIL`);
  return failedCount;
}

/** Writes the run as JSON under bench/results/ and returns the file. */
export function writeResults(fields: Record<string, unknown>): string {
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `bench-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  const machine = { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 1024 ** 3), node: process.version };
  fs.writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), machine, ...fields, rows, ratios, notes, ...extra }, null, 2));
  return file;
}

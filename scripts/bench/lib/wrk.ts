// wrk (C, one epoll thread) as the load generator's engine for a fixed GET: it drives a bare
// node:http server at 20–30k req/s with a fraction of a core, where autocannon (Node) needs
// nearly a whole one of the two and so would set the rate it is meant to measure.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LoadResult, LoadSpec } from './protocol.js';

/** `wrk`'s version line, or null when it is not installed (`npm run setup` installs Debian's). */
export function wrkVersion(): string | null {
  try {
    // wrk prints its version with the usage text and exits 1 when given no URL.
    execFileSync('wrk', ['--version'], { stdio: 'pipe' });
  } catch (err) {
    const out = String((err as { stdout?: Buffer }).stdout ?? '');
    if (out.startsWith('wrk ')) return out.split('\n')[0].replace(/ Copyright.*/, '');
  }
  return null;
}

/** A run wrk can drive: one GET path, for a duration, without a body. */
export function suitsWrk(spec: LoadSpec): boolean {
  return (spec.method ?? 'GET') === 'GET' && !spec.amount && !spec.bodyBase64 && !spec.pathTemplate && spec.paths?.length === 1;
}

// done() runs once after every thread has finished: the summary as one JSON line. Latencies in µs.
// Defining response() instead would make wrk copy every header and body into Lua; its own count
// of status ≥ 400 costs nothing, and a 1xx/3xx answer is caught by the probe before the run.
const SUMMARY_SCRIPT = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\n{"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p95":%d,"p99":%d,"mean":%.3f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.mean))
end
`;
const scriptFile = path.join(os.tmpdir(), `pictor-bench-wrk-${process.pid}.lua`);
process.on('exit', () => fs.rmSync(scriptFile, { force: true }));

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

export async function runWrk(spec: LoadSpec): Promise<Omit<LoadResult, 'loadgenCpuShare'>> {
  const url = spec.origin + spec.paths![0];
  // wrk counts only a status ≥ 400 as an error: an answer in 1xx–3xx would pass as a success.
  const probe = await fetch(url, { headers: spec.headers, redirect: 'manual' });
  await probe.arrayBuffer();
  if (probe.status >= 100 && probe.status < 200) throw new Error(`GET ${url} → ${probe.status}`);
  if (probe.status >= 300 && probe.status < 400) throw new Error(`GET ${url} → ${probe.status}: the load generator measures 2xx answers`);
  if (!fs.existsSync(scriptFile)) fs.writeFileSync(scriptFile, SUMMARY_SCRIPT);
  const args = ['-t', '1', '-c', String(spec.connections), '-d', `${Math.max(1, Math.round(spec.durationSec ?? 5))}s`, '--timeout', `${spec.timeoutSec ?? 30}s`, '-s', scriptFile];
  for (const [name, value] of Object.entries(spec.headers ?? {})) args.push('-H', `${name}: ${value}`);
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile('wrk', [...args, url], { maxBuffer: 1 << 20 }, (err, out, errOut) => (err ? reject(new Error(`wrk: ${err.message} ${errOut}`)) : resolve(out)));
  });
  const line = stdout.split('\n').findLast((l) => l.startsWith('{'));
  if (!line) throw new Error(`wrk printed no summary: ${stdout}`);
  const s = JSON.parse(line) as WrkSummary;
  const durationSec = s.durationUs / 1e6;
  const ok = s.requests - s.status;
  const ms = (us: number) => us / 1000;
  return {
    requests: s.requests,
    ok,
    non2xx: s.status,
    errors: s.connect + s.read + s.write,
    timeouts: s.timeout,
    durationSec,
    rps: ok / durationSec,
    p50: ms(s.p50),
    p95: ms(s.p95),
    p99: ms(s.p99),
    mean: ms(s.mean),
    pathsUsed: s.requests,
    // wrk counts the statuses ≥ 400 without keeping them.
    statusSamples: [],
  };
}

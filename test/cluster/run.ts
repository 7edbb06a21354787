// `npm run test:cluster`: the service on six hosts (network namespaces, see topology.ts and
// cluster.ts) under steady load from a client host while links break, slow down and heal, a host
// dies and Redis restarts. Each scenario prints its figures; the last line is
//   cluster: scenarios=<n> acknowledged=<n> lost=<n> duplicates=<n> late=<n>
// and the exit status is non-zero when anything was lost, duplicated or late, or a scenario failed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ANSWER_GRACE_MS } from '../../src/web/middleware/answer-deadline.js';
import { Cluster, KEY, USER, tail, type ClusterSettings } from '../../scripts/lib/cluster/cluster.js';
import { latency, statusCounts, type Acknowledgements, type Inspection, type LoadResult, type RequestRecord } from './load-report.js';
import { leftoverLinks, leftoverNamespaces, NAMESPACE_PREFIX, processesIn, Topology } from '../../scripts/lib/cluster/topology.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const SETTINGS: ClusterSettings = {
  jobTimeoutMs: 15_000,
  jobLockMs: 3_000,
  stalledIntervalMs: 1_000,
  workersPerHost: 2,
  workerConcurrency: 2,
  // f2's link to the data host can turn slow and lossy (the slow-link scenario).
  proxied: ['f2'],
  impairment: { delayMs: 200, loss: 0.02 },
};
/**
 * Past JOB_TIMEOUT_MS, the front door's grace (a job's own 504 comes first) and 750 ms for
 * scheduling and transfer on a loaded 2-core machine, before an answer counts as late.
 */
const LATE_ALLOWANCE_MS = ANSWER_GRACE_MS + 750;
/** The client abandons a request after this: it counts as never answered. */
const ANSWER_LIMIT_MS = SETTINGS.jobTimeoutMs + 15_000;
const TAKEOVER_LIMIT_MS = SETTINGS.jobLockMs + SETTINGS.stalledIntervalMs + 1_000;
/** A front door's probe (every 0.5 s, 1.5 s limit) sees a cut link within this, on a loaded machine. */
const NOTICE_LIMIT_MS = 4_000;
/** A refusal "at once": no backing service is waited for (measured: milliseconds; the rest is a loaded machine). */
const AT_ONCE_MS = 1_000;
/** The whole suite must finish within this (CI time). */
const RUN_LIMIT_MS = 10 * 60_000;
/** Open-loop load: new requests per front door per second, and the most each may have unanswered. */
const PER_DOOR_PER_SECOND = 4;
const MAX_IN_FLIGHT_PER_DOOR = 12;

interface Marks {
  faultAt: number;
  healAt: number;
}

interface Outcome {
  name: string;
  sent: number;
  acknowledged: number;
  late: number;
  problems: string[];
}

const topology = new Topology();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pictor-cluster-'));
const cluster = new Cluster(topology, dir, SETTINGS);
const allAck: Acknowledgements = { uploads: [], derivatives: [] };
const outcomes: Outcome[] = [];
let lastInspection: Inspection | null = null;

function say(line = ''): void {
  process.stdout.write(line + '\n');
}

/** Runs the client host's load for `durationMs`; `fault` is called with the load's start time. */
async function load(durationMs: number, tag: string, fault: (startedAt: number) => Promise<Marks>, perDoorPerSecond = PER_DOOR_PER_SECOND, heavy?: { atMs: number; count: number }): Promise<{ result: LoadResult; marks: Marks; startedAt: number }> {
  const options = { doors: cluster.doors(), key: KEY, durationMs, perDoorPerSecond, heavy, maxInFlight: MAX_IN_FLIGHT_PER_DOOR, answerLimitMs: ANSWER_LIMIT_MS, tag };
  const child = spawn('ip', ['netns', 'exec', topology.ns('client'), process.execPath, path.join(here, 'load.js'), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const startedAt = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /^started (\d+)$/m.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the client exited (${code}) before starting: ${err}`)));
  });
  const marks = await fault(startedAt);
  const code = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', resolve)));
  if (code !== 0) throw new Error(`the client exited with ${code}: ${err.slice(-2000)}`);
  return { result: JSON.parse(out.trim().split('\n').pop()!) as LoadResult, marks, startedAt };
}

/** Inspects on the data host, again until no job is left queued (at most `settleMs`). */
async function inspect(settleMs = 60_000): Promise<Inspection> {
  const ackFile = path.join(dir, 'acknowledged.json');
  fs.writeFileSync(ackFile, JSON.stringify(allAck));
  const deadline = Date.now() + settleMs;
  for (;;) {
    const out = topology.run('data', [process.execPath, path.join(here, 'inspect.js'), ackFile, USER], cluster.env('data'));
    const line = out.trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`inspection on the data host failed: ${out.slice(-1000)}`);
    const report = JSON.parse(line) as Inspection;
    if (report.jobsLeft === 0 || Date.now() > deadline) return report;
    await sleep(2_000);
  }
}

/** Latest answer among the requests in flight at `at` that ended in 200, as ms after `at`. */
function takeover(records: RequestRecord[], at: number): number | null {
  const caught = records.filter((r) => r.start < at && r.end > at && r.status === 200 && r.op !== 'srcset');
  return caught.length ? Math.max(...caught.map((r) => r.end - at)) : null;
}

/** After the heal: the last failed request's start and the first 200's answer, as ms after the heal. */
function recoveryLine(records: RequestRecord[], healAt: number): string {
  const failed = records.filter((r) => r.start >= healAt && r.status !== 200).map((r) => r.start - healAt);
  const lastFailure = failed.length ? `the last failed request started ${Math.max(...failed)} ms after the heal` : 'no request started after the heal failed';
  return `${lastFailure}; first 200 ${firstSuccess(records, healAt) ?? 'never'} ms after it`;
}

/** First 200 answered by `door` (any when undefined) that started at or after `at`, as ms after `at`. */
function firstSuccess(records: RequestRecord[], at: number, door?: number): number | null {
  const ok = records.filter((r) => r.start >= at && r.status === 200 && (door === undefined || r.door === door)).sort((a, b) => a.end - b.end);
  return ok.length ? ok[0].end - at : null;
}

/** A host's structured log lines (pino JSON) written at or after `since`. */
function logEntries(host: string, since: number): { time: number; msg: string; err?: string; jobIds?: string[] }[] {
  const lines = fs.existsSync(cluster.log(host)) ? fs.readFileSync(cluster.log(host), 'utf8').split('\n') : [];
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as { time: number; msg: string; err?: string; jobIds?: string[] }];
    } catch {
      return [];
    }
  }).filter((e) => typeof e.time === 'number' && e.time >= since);
}

/** When a host first logged a line starting with `msg` at or after `since`, as ms after `since`. */
function firstLogged(host: string, since: number, msg: string): number | null {
  const times = logEntries(host, since).filter((e) => e.msg.startsWith(msg)).map((e) => e.time - since);
  return times.length ? Math.min(...times) : null;
}

/** What a host's workers logged about locks they lost (their structured log lines), after `since`. */
function lockLossReport(host: 'w1' | 'w2', since: number): string {
  const entries = logEntries(host, since);
  const stopped = entries.filter((e) => e.msg.startsWith('lock lost'));
  const refused = entries.filter((e) => /Missing lock/.test(e.err ?? ''));
  const first = stopped.length ? `, first ${Math.min(...stopped.map((e) => e.time)) - since} ms after the heal` : '';
  return `${host} stopped ${stopped.reduce((n, e) => n + (e.jobIds?.length ?? 0), 0)} running job(s) it no longer owned${first}; ${refused.length} finish/retry of a job owned elsewhere refused by Redis`;
}

type ScenarioCheck = (result: LoadResult, marks: Marks, problems: string[], report: Inspection) => string[];

/** Times within [at, until), as ms after `at`. */
function between(times: number[], at: number, until: number): number[] {
  return times.filter((t) => t >= at && t < until).map((t) => t - at);
}

/**
 * The takeover and its check: the lost host's jobs are given back to the queue (their locks
 * expired, the stalled check saw it) within JOB_LOCK_MS + the stalled check (+ 1 s for a loaded
 * machine). When another worker then starts them depends on its free slots, reported beside.
 */
function takeoverLines(result: LoadResult, report: Inspection, marks: Marks, problems: string[], who: string): string[] {
  const at = marks.faultAt;
  // Given back while the host was lost: a job the host held (or one stalled for another reason, which must not take longer).
  const released = between(report.released.map((j) => j.at), at, marks.healAt);
  const started = between(report.restarted.map((j) => j.processedOn), at, at + 60_000);
  // The long renders sent just before the fault keep the lost host busy: none released is a failure too.
  if (released.length === 0) problems.push('no job of the lost host was given back to the queue (it held none, or its locks never expired)');
  else if (Math.max(...released) > TAKEOVER_LIMIT_MS) problems.push(`a job of the lost host was given back ${Math.max(...released)} ms after the fault (limit JOB_LOCK_MS + stalled check + 1 s = ${TAKEOVER_LIMIT_MS} ms)`);
  const last = (xs: number[]) => (xs.length ? `${Math.max(...xs)} ms` : 'n/a');
  return [
    `takeover     ${released.length} job(s) of the lost host given back to the queue, the last ${last(released)} after the fault (limit ${TAKEOVER_LIMIT_MS} ms); ${started.length} started again on ${who}, the last ${last(started)} after it; requests in flight then answered within ${takeover(result.records, at) ?? 'n/a'} ms (their render included)`,
  ];
}

/**
 * uncountedAllowed: derivatives stored but not counted may be left by a SIGKILL. Workers record
 * and count derivatives in batches after the jobs answer (workers/derivative-ledger.ts): a worker
 * killed within a batch loses up to 250 ms of records, or the count of records it had written;
 * the derivatives stay stored and served, uncounted. Never counted twice: positive drift fails.
 */
async function scenario(
  tag: string,
  name: string,
  durationMs: number,
  fault: (startedAt: number) => Promise<Marks>,
  check: ScenarioCheck,
  options: { uncountedAllowed?: boolean; heavy?: { atMs: number; count: number } } = {},
): Promise<void> {
  say(`\n== ${name}`);
  const problems: string[] = [];
  let sent = 0;
  let acknowledged = 0;
  let late = 0;
  try {
    const { result, marks, startedAt } = await load(durationMs, tag, fault, PER_DOOR_PER_SECOND, options.heavy);
    allAck.uploads.push(...result.ack.uploads);
    allAck.derivatives.push(...result.ack.derivatives);
    const records = result.records;
    sent = records.length;
    acknowledged = records.filter((r) => r.status === 200).length;
    const lateOnes = records.filter((r) => r.status === 0 || r.end - r.start > SETTINGS.jobTimeoutMs + LATE_ALLOWANCE_MS);
    late = lateOnes.length;
    if (acknowledged === 0) problems.push('no request was acknowledged');
    const end = Math.max(...records.map((r) => r.end));
    say(`requests     sent ${sent}, acknowledged ${acknowledged} (uploads ${result.ack.uploads.length}, transforms ${result.ack.derivatives.length}); answers ${statusCounts(records)}`);
    say(`latency      p50/p99 before ${latency(records, startedAt, marks.faultAt)} | during ${latency(records, marks.faultAt, marks.healAt)} | after ${latency(records, marks.healAt, end)}`);
    say(`recovery     ${recoveryLine(records, marks.healAt)}`);
    if (late > 0) problems.push(`${late} caller(s) answered after JOB_TIMEOUT_MS (${SETTINGS.jobTimeoutMs} ms) or never: ${lateOnes.slice(0, 5).map((r) => `${r.op} via door ${r.door + 1} ${r.status || 'no answer'} after ${r.end - r.start} ms`).join(', ')}`);
    const before = lastInspection;
    const report = await inspect();
    lastInspection = report;
    for (const line of check(result, marks, problems, report)) say(line);
    // Derivatives stored but not counted: objects without a record, records without their count.
    const uncountedOf = (r: Inspection) => r.derivativeObjects - r.derivativeRows - Math.min(0, r.usageDrift.derivatives);
    const uncounted = uncountedOf(report) - (before ? uncountedOf(before) : 0);
    say(
      `state        ${report.catalogImages} images catalogued (${report.duplicateImageRows} duplicate rows), ${report.derivativeRows} derivative rows / ${report.derivativeObjects} objects; ` +
        `usage drift images ${report.usageDrift.images}, original bytes ${report.usageDrift.originalBytes}, derivatives ${report.usageDrift.derivatives} (${report.usageDrift.derivativeBytes} bytes), transformations ${report.usageDrift.transformations}; ` +
        `derivatives stored but not counted in this scenario ${uncounted}; jobs left ${report.jobsLeft}`,
    );
    const lost = lostOf(report) - (before ? lostOf(before) : 0);
    const dup = duplicates(report) - (before ? duplicates(before) : 0);
    say(`result       lost ${lost}, duplicates ${dup}, late ${late}`);
    if (report.lostUploads.length) problems.push(`acknowledged uploads lost: ${report.lostUploads.slice(0, 5).join('; ')}`);
    if (report.lostDerivatives.length) problems.push(`acknowledged derivatives not stored: ${report.lostDerivatives.slice(0, 3).join('; ')}`);
    if (report.jobsLeft) problems.push(`${report.jobsLeft} job(s) still queued a minute after the load`);
    if (dup) problems.push(`duplicates: ${JSON.stringify({ rows: report.duplicateImageRows, drift: report.usageDrift })}`);
    if (uncounted > 0 && !options.uncountedAllowed) problems.push(`${uncounted} derivative(s) stored without their record or count`);
    if (report.usageDrift.originalBytes !== 0) problems.push(`usage of originals drifts by ${report.usageDrift.originalBytes} bytes`);
    if (report.consistency !== 'consistent') problems.push(report.consistency);
  } catch (err) {
    problems.push(`scenario failed: ${(err as Error).stack ?? err}`);
  }
  for (const p of problems) say(`FAIL         ${p}`);
  say(problems.length ? `-- ${name}: FAILED` : `-- ${name}: ok`);
  outcomes.push({ name, sent, acknowledged, late, problems });
}

/** Catalog rows and usage counts beyond what was done once. */
function duplicates(report: Inspection): number {
  return report.duplicateImageRows + Math.max(0, report.usageDrift.images) + Math.max(0, report.usageDrift.derivatives) + Math.max(0, report.usageDrift.transformations);
}

/** Acknowledged items not stored or catalogued, and jobs never run. */
function lostOf(report: Inspection): number {
  return report.lostUploads.length + report.lostDerivatives.length + report.jobsLeft;
}

const at = (startedAt: number, ms: number) => sleep(Math.max(0, startedAt + ms - Date.now()));

/** Long renders are sent this far into a host-fault scenario; the fault waits (at most HOLD_LIMIT_MS more) for the host to hold a long job. */
const LONG_RENDERS_AT_MS = 9_000;
const HOLD_LIMIT_MS = 5_000;

/**
 * Resolves when one of a worker host's processes holds a long job (a line from holding.js on the
 * data host: "holding <queue> <jobId> <worker>") from the epoch time `from` on, or with null at
 * `until`. A fault timed this way finds the host busy however fast this machine renders.
 */
function whenHolding(host: 'w1' | 'w2', from: number, until: number): Promise<string | null> {
  const command = [process.execPath, path.join(here, 'holding.js'), String(from), String(until), ...cluster.workerPids(host).map(String)];
  const child = spawn('ip', ['netns', 'exec', topology.ns('data'), ...command], { env: cluster.env('data'), stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code === 0 ? out.trim() : null)));
}

/** Resolves once `host` holds a long job, looked for from when the long renders are sent; says which. */
async function faultWhenHolding(startedAt: number, host: 'w1' | 'w2'): Promise<void> {
  // Started early so that its start-up is over when the long renders are sent.
  const from = startedAt + LONG_RENDERS_AT_MS;
  const line = await whenHolding(host, from, from + HOLD_LIMIT_MS);
  say(`fault        ${line ? `${host} ${line.replace(/^holding /, 'holds ')}` : `${host} held no long job within ${HOLD_LIMIT_MS} ms of the long renders`}, ${Date.now() - startedAt} ms into the load`);
}

async function scenarios(): Promise<void> {
  // Warm-up (not a scenario): first connections, the workers' first jobs, some images to transform.
  const warm = await load(10_000, 'warmup', async (startedAt) => ({ faultAt: startedAt, healAt: startedAt }), 1);
  allAck.uploads.push(...warm.result.ack.uploads);
  allAck.derivatives.push(...warm.result.ack.derivatives);
  say(`warm-up      ${warm.result.records.length} requests: ${statusCounts(warm.result.records)}`);

  await scenario(
    'partition',
    'partition: worker host w1 cut off from the data host for 20 s, then healed',
    45_000,
    async (startedAt) => {
      await faultWhenHolding(startedAt, 'w1');
      const faultAt = Date.now();
      topology.setInternalLink('w1', false);
      await at(startedAt, 30_000);
      topology.setInternalLink('w1', true);
      return { faultAt, healAt: Date.now() };
    },
    (result, marks, problems, report) => [...takeoverLines(result, report, marks, problems, 'w2'), `lock lost    ${lockLossReport('w1', marks.healAt)}`],
    // The link goes once the cut host holds a long job (faultWhenHolding).
    { heavy: { atMs: LONG_RENDERS_AT_MS, count: 8 } },
  );

  await scenario(
    'hostloss',
    'host loss: every process of worker host w2 SIGKILLed mid-load',
    30_000,
    async (startedAt) => {
      await faultWhenHolding(startedAt, 'w2');
      const faultAt = Date.now();
      const killed = await topology.killHost('w2');
      say(`fault        ${killed} process(es) of w2 killed`);
      await at(startedAt, 20_000);
      const healAt = Date.now();
      await cluster.startWorkers('w2');
      say(`fault        w2's workers started again in ${Date.now() - healAt} ms`);
      return { faultAt, healAt };
    },
    (result, marks, problems, report) => takeoverLines(result, report, marks, problems, 'w1'),
    { uncountedAllowed: true, heavy: { atMs: LONG_RENDERS_AT_MS, count: 8 } },
  );

  await scenario(
    'slowlink',
    'slow link: 200 ms delay and 2 % loss between front door f2 and the data host for 15 s',
    35_000,
    async (startedAt) => {
      await at(startedAt, 10_000);
      const faultAt = Date.now();
      cluster.impairLink('f2', true);
      await at(startedAt, 25_000);
      cluster.impairLink('f2', false);
      return { faultAt, healAt: Date.now() };
    },
    (result, marks) => {
      const f1 = result.records.filter((r) => r.door === 0);
      const f2 = result.records.filter((r) => r.door === 1);
      return [`per door     during the fault: f1 ${latency(f1, marks.faultAt, marks.healAt)}, f2 ${latency(f2, marks.faultAt, marks.healAt)}`];
    },
  );

  await scenario(
    'cutoff',
    'front door f1 cut off from the data host for 15 s (still reachable by clients)',
    40_000,
    async (startedAt) => {
      await at(startedAt, 10_000);
      const faultAt = Date.now();
      topology.setInternalLink('f1', false);
      await at(startedAt, 25_000);
      topology.setInternalLink('f1', true);
      return { faultAt, healAt: Date.now() };
    },
    (result, marks, problems) => {
      const cut = result.records.filter((r) => r.door === 0 && r.start >= marks.faultAt && r.start < marks.healAt);
      const refused = cut.filter((r) => r.status === 503);
      const withoutRetryAfter = refused.filter((r) => !/^\d+$/.test(r.retryAfter ?? ''));
      if (withoutRetryAfter.length) problems.push(`${withoutRetryAfter.length} 503 answer(s) of f1 without Retry-After`);
      // When f1's probe saw the link down and up again (its own log lines).
      const noticed = firstLogged('f1', marks.faultAt, 'data host unreachable');
      const reopened = firstLogged('f1', marks.healAt, 'data host reachable again');
      if (noticed === null || noticed > NOTICE_LIMIT_MS) problems.push(`f1 saw the link down ${noticed ?? 'never'} ms after the cut (limit ${NOTICE_LIMIT_MS} ms)`);
      if (reopened === null) problems.push('f1 never saw the link back');
      // Requests made once f1 knows: each refused at once (or served from its memory), none waits for a backing service.
      const known = noticed === null ? [] : cut.filter((r) => r.start >= marks.faultAt + noticed);
      const slow = known.filter((r) => r.end - r.start > AT_ONCE_MS || (r.status !== 503 && r.status !== 200));
      if (known.length === 0) problems.push('no request reached f1 while it knew the link down');
      if (slow.length) problems.push(`${slow.length} request(s) to f1 while it knew the link down were not refused at once: ${slow.slice(0, 5).map((r) => `${r.op} ${r.status} after ${r.end - r.start} ms`).join(', ')}`);
      const recovered = firstSuccess(result.records, marks.healAt, 0);
      if (recovered === null) problems.push('f1 answered no 200 after the heal');
      return [
        `f1 cut off   ${cut.length} requests: ${statusCounts(cut)}; latency ${latency(cut, marks.faultAt, marks.healAt)}`,
        `f1 knows     its probe saw the link down ${noticed ?? 'never'} ms after the cut; requests made before: ${latency(cut, marks.faultAt, marks.faultAt + (noticed ?? 0))}; after: ${latency(known, marks.faultAt, marks.healAt)} (${statusCounts(known)})`,
        `f1 back      its probe saw the link back ${reopened ?? 'never'} ms after the heal; f1's first 200 ${recovered ?? 'never'} ms after the heal`,
      ];
    },
  );

  await scenario(
    'redis',
    'Redis restarted on the data host mid-load (AOF on)',
    35_000,
    async (startedAt) => {
      await at(startedAt, 10_000);
      const faultAt = Date.now();
      await cluster.stopRedis();
      await cluster.startRedis();
      const healAt = Date.now();
      say(`fault        Redis down for ${healAt - faultAt} ms (SIGTERM, then started on the same AOF)`);
      return { faultAt, healAt };
    },
    (result, marks, problems) => {
      // The recovery line above: the heal is the moment Redis answered again.
      if (firstSuccess(result.records, marks.healAt) === null) problems.push('no 200 after Redis came back');
      return [];
    },
  );
}

/**
 * One clean-up, however many callers: a signal's handler and the main flow (which a signal also
 * ends, through the load it kills) both wait for the same one before the process exits.
 */
let cleaning: Promise<string[]> | null = null;
function cleanUp(): Promise<string[]> {
  cleaning ??= (async () => {
    await topology.destroy();
    const left = [...leftoverNamespaces().map((n) => `namespace ${n}`), ...leftoverLinks().map((l) => `link ${l}`), ...processesIn(topology.identities).map((pid) => `process ${pid}`)];
    fs.rmSync(dir, { recursive: true, force: true });
    return left;
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    void cleanUp().finally(() => process.exit(1));
  });
}

let failed = false;
const runStartedAt = Date.now();
try {
  topology.create();
  const started = Date.now();
  await cluster.start();
  say(`cluster up in ${Date.now() - started} ms: data host (Redis, catalog, storage), 2 worker hosts × ${SETTINGS.workersPerHost} workers, 2 front doors, 1 client`);
  await scenarios();
} catch (err) {
  failed = true;
  say(`cluster: ${(err as Error).message}`);
  for (const host of ['data', 'w1', 'w2', 'f1', 'f2']) if (fs.existsSync(cluster.log(host))) say(`${host} log:${tail(cluster.log(host), 10)}`);
}
const left = await cleanUp();
if (left.length) {
  failed = true;
  say(`cluster: left behind after clean-up: ${left.join(', ')}`);
} else {
  say(`\nclean-up     every namespace, link and process of the run removed (checked: no namespace named ${NAMESPACE_PREFIX}*, no pcl* link, no process in the run's ${topology.identities.size} namespaces)`);
}
// Assigned inside the scenarios (TypeScript cannot see that here).
const final = lastInspection as Inspection | null;
const lost = final ? lostOf(final) : 0;
const dups = final ? duplicates(final) : 0;
const late = outcomes.reduce((sum, o) => sum + o.late, 0);
const runMs = Date.now() - runStartedAt;
say(`duration     ${(runMs / 1000).toFixed(0)} s (limit ${RUN_LIMIT_MS / 1000} s); load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
if (runMs > RUN_LIMIT_MS) failed = true;
if (outcomes.some((o) => o.problems.length) || lost || dups || late || outcomes.length === 0) failed = true;
say(`cluster: scenarios=${outcomes.length} acknowledged=${outcomes.reduce((sum, o) => sum + o.acknowledged, 0)} lost=${lost} duplicates=${dups} late=${late}`);
process.exit(failed ? 1 : 0);

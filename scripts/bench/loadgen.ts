// The load generator: a separate process driving the load the orchestrator asks for (IPC). A fixed
// GET (the cache hits, srcset) is driven by wrk when it is installed (lib/wrk.ts), everything else
// (unique paths per request, uploads, a fixed number of requests) by autocannon, whose latency
// percentiles come from every 2xx response's own time. Each run reports the CPU this process and
// the wrk it started spent per second of load (from /proc/self/stat), so a run the generator
// itself limits shows.
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import { cpuMs } from './lib/procs.js';
import { percentile, type FromLoadgen, type LoadResult, type LoadSpec, type ToLoadgen } from './lib/protocol.js';
import { runWrk, suitsWrk, wrkVersion } from './lib/wrk.js';

// autocannon appends every response body to a string (`body += chunk`) for its onResponse and
// expectBody options, which the bench does not use: a UTF-8 decode of each image answer that cost
// ~0.7 ms per 60 KB response and capped every server at ~1,200 req/s. Bytes are still counted.
const require = createRequire(import.meta.url);
const queue = require('autocannon/lib/pipelinedRequestsQueue.js') as { prototype: { addBody?: unknown } };
if (typeof queue.prototype.addBody !== 'function') throw new Error('autocannon internals changed: PipelinedRequestsQueue.addBody is gone; check the body handling');
queue.prototype.addBody = () => undefined;

const wrk = wrkVersion();

function send(msg: FromLoadgen) {
  process.send?.(msg);
}

function runAutocannon(spec: LoadSpec): Promise<Omit<LoadResult, 'loadgenCpuShare'>> {
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    const statusSamples: number[] = [];
    let ok = 0;
    let non2xx = 0;
    let next = 0;
    const nStart = spec.nStart ?? 0;
    const paths = spec.paths;
    const template = spec.pathTemplate;
    const nextPath = (): string => {
      const i = next++;
      if (paths && paths.length > 0) return paths[i % paths.length];
      return (template ?? '/').replace(/\{n\}/g, String(nStart + i));
    };
    const body = spec.bodyBase64 ? Buffer.from(spec.bodyBase64, 'base64') : undefined;
    // One fixed path needs no per-request rebuild (setupRequest re-serialises the request each time).
    const fixedPath = paths?.length === 1 && !template ? paths[0] : undefined;
    const instance = autocannon(
      {
        url: spec.origin,
        connections: spec.connections,
        pipelining: 1,
        ...(spec.amount ? { amount: spec.amount } : { duration: spec.durationSec ?? 5 }),
        timeout: spec.timeoutSec ?? 30,
        headers: spec.headers,
        requests: [
          {
            method: spec.method ?? 'GET',
            ...(body ? { body } : {}),
            ...(fixedPath ? { path: fixedPath } : { setupRequest: (req) => ({ ...req, path: nextPath() }) }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        times.sort((a, b) => a - b);
        const durationSec = result.duration;
        resolve({
          requests: ok + non2xx,
          ok,
          non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          durationSec,
          rps: ok / durationSec,
          p50: percentile(times, 50),
          p95: percentile(times, 95),
          p99: percentile(times, 99),
          mean: times.length ? times.reduce((a, b) => a + b, 0) / times.length : NaN,
          pathsUsed: fixedPath ? ok + non2xx : next,
          statusSamples,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        times.push(responseTime);
      } else {
        non2xx++;
        if (statusSamples.length < 5) statusSamples.push(statusCode);
      }
    });
  });
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const cpu0 = cpuMs('self', true) ?? NaN;
  const result = wrk && suitsWrk(spec) ? await runWrk(spec) : await runAutocannon(spec);
  const cpu = (cpuMs('self', true) ?? NaN) - cpu0;
  return { ...result, loadgenCpuShare: cpu / 1000 / result.durationSec };
}

process.on('message', (msg: ToLoadgen) => {
  if (msg.type === 'exit') process.exit(0);
  if (msg.type === 'run') {
    run(msg.spec).then(
      (result) => send({ type: 'result', id: msg.id, result }),
      (err: unknown) => send({ type: 'failed', id: msg.id, error: err instanceof Error ? err.message : String(err) }),
    );
  }
});
// The orchestrator stops this process with SIGTERM too: exit normally, so exit handlers run.
process.on('SIGTERM', () => process.exit(0));
send({ type: 'ready', wrk });

// Runs on the data host while a scenario's long renders are sent: waits until one of the given
// worker processes holds a job that has run for LONG_MS (BullMQ records the worker's name,
// host:pid, on the job it takes), looking from the epoch time <from> on; prints
// "holding <queue> <jobId> <worker>" and exits 0, or exits 1 at <until>. The runner cuts or kills
// the host only then, so its takeover check has a job to watch: a long one (the small renders end
// within ~50 ms, before a fault could catch them).
// Usage (env: the service's REDIS_URL): node holding.js <from> <until> <pid> [<pid> …]
import { loadConfig } from '../../src/config.js';
import { ALL_QUEUES } from '../../src/jobs/job-contract.js';
import { createQueueConnection, openQueue } from '../../src/jobs/queues.js';

const [from, until, ...pids] = process.argv.slice(2).map(Number);
const config = loadConfig(process.env);
const connection = createQueueConnection(config.redisUrl);
const queues = ALL_QUEUES.map((name) => openQueue(name, connection));
const LONG_MS = 150;
const ownedByHost = (worker: string | undefined) => pids.some((pid) => worker?.endsWith(`:${pid}`));
await new Promise((r) => setTimeout(r, Math.max(0, from - Date.now())));

let code = 1;
search: while (Date.now() < until) {
  for (const queue of queues) {
    for (const job of await queue.getJobs(['active'])) {
      if (job?.processedOn && Date.now() - job.processedOn >= LONG_MS && ownedByHost(job.processedBy)) {
        process.stdout.write(`holding ${queue.name} ${job.id} ${job.processedBy}\n`);
        code = 0;
        break search;
      }
    }
  }
  await new Promise((r) => setTimeout(r, 25));
}
await Promise.all(queues.map((q) => q.close()));
connection.disconnect();
process.exit(code);

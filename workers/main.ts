// Worker process entry point: `node dist/workers/main.js` (Procfile `worker`).
// WORKER_QUEUES (comma-separated) limits the queues this process serves; default all.
import { exitOnConfigError, loadConfigOrExit } from '../src/config.js';
import { applyHeapGrowth } from '../src/heap-growth.js';
import { servedQueues } from '../src/jobs/job-contract.js';
import { createLogger } from '../src/logger.js';
import { closeOnSignals } from '../src/shutdown.js';
import { WorkerProcess } from './worker-process.js';

const config = loadConfigOrExit();
applyHeapGrowth(config.heapGrowingPercent);
const log = createLogger('pictor-worker', config.logLevel);
const worker = new WorkerProcess(config, log, exitOnConfigError(() => servedQueues(config.workerQueues)));

closeOnSignals(() => worker.close(), log, 'worker (finishing active jobs)');

worker.start().then(
  // Tells a parent (npm start) that this worker takes jobs and /health can see it.
  () => process.send?.({ type: 'ready' }),
  (err: unknown) => {
    log.fatal({ err: err instanceof Error ? err.message : err }, 'worker failed to start');
    process.exit(1);
  },
);

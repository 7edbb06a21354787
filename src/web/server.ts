// Front door entry point: `node dist/src/web/server.js` (Procfile `web`). With FRONT_DOOR_PROCESSES
// above 1 (default: the cores) it is the primary of a cluster of front doors on one port.
import cluster from 'node:cluster';
import { loadConfigOrExit } from '../config.js';
import { applyHeapGrowth } from '../heap-growth.js';
import { createLogger } from '../logger.js';
import { closeOnSignals } from '../shutdown.js';
import { FrontDoor } from './front-door.js';
import { FrontDoorCluster } from './front-door-cluster.js';

const config = loadConfigOrExit();
applyHeapGrowth(config.heapGrowingPercent);
const log = createLogger('pictor-web', config.logLevel, { buffered: true });

function failed(err: unknown): never {
  log.fatal({ err: err instanceof Error ? err.message : err }, 'front door failed to start');
  process.exit(1);
}

if (cluster.isPrimary && config.frontDoorProcesses > 1) {
  const group = new FrontDoorCluster(config.frontDoorProcesses, log);
  closeOnSignals(() => group.close(), log, 'front-door cluster (each process finishing its in-flight requests)');
  group.start().then(({ port }) => process.send?.({ type: 'listening', port }), failed);
} else {
  const frontDoor = new FrontDoor(config, log);
  closeOnSignals(() => frontDoor.close(), log, 'front door (finishing in-flight requests)');
  // In a cluster child this tells the primary, which tells its own parent once all are up.
  frontDoor.start().then(({ port }) => process.send?.({ type: 'listening', port }), failed);
}

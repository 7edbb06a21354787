// Front door entry point: `node dist/src/web/server.js` (Procfile `web`).
import { loadConfigOrExit } from '../config.js';
import { createLogger } from '../logger.js';
import { FrontDoor } from './front-door.js';

const config = loadConfigOrExit();
const log = createLogger('pictor-web', config.logLevel);
const frontDoor = new FrontDoor(config, log);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  frontDoor.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

frontDoor.start().then(
  ({ port }) => process.send?.({ type: 'listening', port }),
  (err: unknown) => {
    log.fatal({ err: err instanceof Error ? err.message : err }, 'front door failed to start');
    process.exit(1);
  },
);

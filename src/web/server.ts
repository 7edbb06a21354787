// Front door entry point: `node dist/src/web/server.js` (Procfile `web`).
import { loadConfigOrExit } from '../config.js';
import { createLogger } from '../logger.js';
import { closeOnSignals } from '../shutdown.js';
import { FrontDoor } from './front-door.js';

const config = loadConfigOrExit();
const log = createLogger('pictor-web', config.logLevel);
const frontDoor = new FrontDoor(config, log);

closeOnSignals(() => frontDoor.close(), log, 'front door (finishing in-flight requests)');

frontDoor.start().then(
  ({ port }) => process.send?.({ type: 'listening', port }),
  (err: unknown) => {
    log.fatal({ err: err instanceof Error ? err.message : err }, 'front door failed to start');
    process.exit(1);
  },
);

// SIGTERM/SIGINT for process entry points: run the ordered close once, exit 0 when it finished.
import type { Logger } from 'pino';

export function closeOnSignals(close: () => Promise<void>, log: Logger, what: string): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${what}: shutting down`);
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

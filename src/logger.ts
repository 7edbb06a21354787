import { pino, type Logger } from 'pino';

export interface LoggerOptions {
  /**
   * Buffer lines and write them in blocks of ≥ 4 KiB instead of one write(2) per line (the front
   * door's request log: ~8 % of its CPU per request went to those writes). Flushed at least
   * every second and when the process exits, also on an uncaught exception; a SIGKILL loses at
   * most the last second's lines.
   */
  buffered?: boolean;
}

export function createLogger(name: string, level = 'info', options: LoggerOptions = {}): Logger {
  const settings = { name, level, base: { pid: process.pid, service: name } };
  if (!options.buffered) return pino(settings);
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 1000).unref();
  return pino(settings, destination);
}

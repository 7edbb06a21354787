import { pino, type Logger } from 'pino';

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid, service: name } });
}

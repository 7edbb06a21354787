// Request ids (honouring an incoming X-Request-Id) and one structured JSON log line per request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';

export function requestContext(log: Logger) {
  return pinoHttp({
    logger: log,
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Keys never reach the logs.
    redact: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    // Probes and scrapes every few seconds would drown the request log.
    autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/metrics' },
  });
}

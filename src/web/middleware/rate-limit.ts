// Per-IP rate limits for public routes, counted in Redis so every front door shares them.
import { rateLimit } from 'express-rate-limit';
import type { Request } from 'express';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import { ServiceError } from '../../errors.js';

export function perIpLimit(redis: Redis, name: string, perMinute: number) {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    // If Redis is away the request proceeds (and fails on its own if it needs Redis).
    passOnStoreError: true,
    store: new RedisStore({
      prefix: `pictor:rl:${name}:`,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    }),
    handler: (req: Request, _res, next) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : 60;
      next(new ServiceError('rate_limited', `Too many requests; limit is ${perMinute} per minute per client`, { retryAfterSeconds: retryAfter }));
    },
  });
}

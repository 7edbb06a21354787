// How a request wants its work done: now (the caller waits) or later (202 + job status URL),
// and whether it is interactive or bulk (bulk jobs queue behind interactive ones).
import type { Request } from 'express';

import { BULK_PRIORITY } from '../../jobs/tenant-queue.js';

export { BULK_PRIORITY };

export function wantsAsync(req: Request): boolean {
  const prefer = String(req.headers.prefer ?? '').toLowerCase();
  return prefer.split(/[,;]/).some((p) => p.trim() === 'respond-async') || req.query.async === 'true' || req.query.async === '1';
}

/** `X-Pictor-Priority: bulk` (the import CLI sends it) or async requests → bulk priority. */
export function priorityOf(req: Request): number | undefined {
  const header = String(req.headers['x-pictor-priority'] ?? '').toLowerCase();
  if (header === 'bulk' || (header !== 'interactive' && wantsAsync(req))) return BULK_PRIORITY;
  return undefined;
}

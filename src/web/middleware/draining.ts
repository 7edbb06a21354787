// Requests that arrive while the front door shuts down (over a keep-alive connection opened
// before the signal; new connections are no longer accepted) are refused with 503 + Retry-After
// in their route's error shape: the process finishes only what it had started.
import type { IncomingMessage } from 'node:http';

const ARRIVED_WHILE_DRAINING = Symbol('arrivedWhileDraining');

export function markArrivedWhileDraining(req: IncomingMessage): void {
  (req as IncomingMessage & { [ARRIVED_WHILE_DRAINING]?: boolean })[ARRIVED_WHILE_DRAINING] = true;
}

export function arrivedWhileDraining(req: IncomingMessage): boolean {
  return (req as IncomingMessage & { [ARRIVED_WHILE_DRAINING]?: boolean })[ARRIVED_WHILE_DRAINING] === true;
}

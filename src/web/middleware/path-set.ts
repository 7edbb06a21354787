// Which error shape a route answers with: set A {type,msg,status_code} or set B {detail}.
import type { NextFunction, Request, Response } from 'express';
import { unavailable } from '../../errors.js';
import type { PathSet } from '../../imaging/params.js';
import { dataHostRefusal } from '../services/data-host-link.js';
import { arrivedWhileDraining } from './draining.js';

export function pathSet(set: PathSet) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.locals.pathSet = set;
    // Every API route passes here, so this is where a request arriving during shutdown is refused ...
    if (arrivedWhileDraining(req)) return next(unavailable('This server is shutting down; retry the request', 1));
    // ... and a request that needs the data host while this server cannot reach it.
    const refusal = dataHostRefusal(res);
    if (refusal) return next(refusal);
    next();
  };
}

export function currentSet(res: Response): PathSet {
  return (res.locals.pathSet as PathSet | undefined) ?? 'B';
}

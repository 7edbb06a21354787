// Which error shape a route answers with: set A {type,msg,status_code} or set B {detail}.
import type { NextFunction, Request, Response } from 'express';
import type { PathSet } from '../../imaging/params.js';

export function pathSet(set: PathSet) {
  return (_req: Request, res: Response, next: NextFunction) => {
    res.locals.pathSet = set;
    next();
  };
}

export function currentSet(res: Response): PathSet {
  return (res.locals.pathSet as PathSet | undefined) ?? 'B';
}

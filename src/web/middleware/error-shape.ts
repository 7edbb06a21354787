// The spec's two path sets survive only as two error shapes: set A's paths (spec 4.1) answer
// `{type, msg, status_code}`, every other API path set B's `{detail}` (error-handler.ts renders
// both). The request's shape is chosen here, by path, before any route runs.
import type { NextFunction, Request, Response } from 'express';
import { unavailable } from '../../errors.js';
import type { PathSet } from '../../imaging/params.js';
import { arrivedWhileDraining } from './draining.js';

export type ErrorShape = PathSet;

/** Requests under these prefixes, matched by a route or not, answer in the shape named. */
export const ERROR_SHAPE_PREFIXES: Readonly<Record<ErrorShape, readonly string[]>> = {
  A: ['/upload', '/transform', '/generate/srcset'],
  B: ['/image', '/cdn', '/plans', '/passport-photo'],
};

export function answerErrorsAs(shape: ErrorShape) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.locals.errorShape = shape;
    // Every API route passes here, so this is where a request arriving during shutdown is refused.
    if (arrivedWhileDraining(req)) return next(unavailable('This server is shutting down; retry the request', 1));
    next();
  };
}

export function currentErrorShape(res: Response): ErrorShape {
  return (res.locals.errorShape as ErrorShape | undefined) ?? 'B';
}

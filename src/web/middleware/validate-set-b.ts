// Set B validation: header, query and body are all checked and every problem is listed in one
// 422 (spec 2.9), before authentication decides 401.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { ValidationIssue } from '../../errors.js';
import { apiKeyOf } from './auth.js';
import { compile, queryObject, validationError, type CompiledSchema } from '../validation.js';

export interface SetBInputs {
  requireKey?: boolean;
  query?: object;
  body?: object;
  /** Lower-cases these query values before validation (case-insensitive enums). */
  lowerCaseQuery?: string[];
}

/** JSON bodies are parsed only on the routes that declare one (not on every GET). */
const parseJsonBody = express.json({ limit: '100kb' });

export function validateSetB(inputs: SetBInputs): RequestHandler | RequestHandler[] {
  const validate = validator(inputs);
  return inputs.body ? [parseJsonBody, validate] : validate;
}

function validator(inputs: SetBInputs): RequestHandler {
  const query: CompiledSchema<Record<string, unknown>> | null = inputs.query ? compile(inputs.query) : null;
  const body: CompiledSchema<Record<string, unknown>> | null = inputs.body ? compile(inputs.body) : null;
  return (req: Request, res: Response, next: NextFunction) => {
    const issues: ValidationIssue[] = [];
    if (inputs.requireKey && !apiKeyOf(req)) issues.push({ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' });
    if (query) {
      const values = queryObject(req.query as Record<string, unknown>);
      for (const name of inputs.lowerCaseQuery ?? []) if (typeof values[name] === 'string') values[name] = (values[name] as string).toLowerCase();
      const checked = query.check(values, 'query');
      if (checked.ok) res.locals.query = checked.value;
      else issues.push(...checked.issues);
    }
    if (body) {
      const value: unknown = req.body === undefined ? {} : req.body;
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        issues.push({ loc: ['body'], msg: 'Input should be a JSON object', type: 'model_attributes_type' });
      } else {
        const checked = body.check(value, 'body');
        if (checked.ok) res.locals.body = checked.value;
        else issues.push(...checked.issues);
      }
    }
    if (issues.length > 0) throw validationError(issues);
    next();
  };
}

// The one request validation of the front door. A route declares what it takes (its route
// table's `inputs`: path params, query, JSON body, multipart form fields, whether X-API-Key is
// required) as JSON Schemas; this middleware checks them with ajv (coercing, every problem listed
// in one 422, spec 2.9) and the controller reads the checked values through inputOf(), typed by
// the schemas themselves (json-schema-to-ts' FromSchema), never by a hand-written interface.
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ServiceError, ValidationIssue } from '../../errors.js';
import { compiled, queryObject, validationError, type Location } from '../validation.js';
import { apiKeyOf } from './auth.js';

/**
 * A schema whose value type is given by the code that generates it (the transform parameters:
 * their types come from the registry, src/imaging/params.ts) rather than inferred from a literal.
 */
export type TypedSchema<T> = Record<string, unknown> & { readonly [VALUE_TYPE]?: T };
declare const VALUE_TYPE: unique symbol;

type InputSchema = JSONSchema | TypedSchema<unknown>;

/** The value a schema admits, after coercion (defaults are not filled in: they stay optional). */
export type InputOf<S> = S extends { readonly [VALUE_TYPE]?: infer T } ? T : S extends JSONSchema ? FromSchema<S, { keepDefaultedPropertiesOptional: true }> : undefined;

export interface RouteInputs {
  /** X-API-Key is required: its absence is one of the 422's issues, found before authentication decides 401. */
  apiKey?: boolean;
  params?: InputSchema;
  query?: InputSchema;
  /** A JSON body (parsed on this route only). */
  body?: InputSchema;
  /** Multipart form fields beside the file: checked by checkFields once the upload is received. */
  fields?: InputSchema;
  /** The answer to a failed check; by default a 422 listing every issue. */
  refuse?: (issues: ValidationIssue[]) => ServiceError;
}

/** The checked inputs of a route, typed by its declaration. */
export interface Inputs<I extends RouteInputs> {
  params: InputOf<I['params']>;
  query: InputOf<I['query']>;
  body: InputOf<I['body']>;
}

/** JSON bodies are parsed only on the routes that declare one (not on every GET). */
const parseJsonBody = express.json({ limit: '100kb' });

const INPUTS = Symbol('inputs');

function check(schema: InputSchema, value: unknown, location: Location, issues: ValidationIssue[]): unknown {
  const checked = compiled(schema as object).check(value, location);
  if (checked.ok) return checked.value;
  issues.push(...checked.issues);
  return undefined;
}

/** The middleware of a route's declared inputs (with the JSON body parser in front when it takes a body). */
export function validate(inputs: RouteInputs): RequestHandler[] {
  if (!inputs.apiKey && !inputs.params && !inputs.query && !inputs.body) return [];
  const refuse = inputs.refuse ?? validationError;
  const validator = (req: Request, res: Response, next: NextFunction) => {
    const issues: ValidationIssue[] = [];
    if (inputs.apiKey && !apiKeyOf(req)) issues.push({ loc: ['header', 'x-api-key'], msg: 'Field required', type: 'missing' });
    const values: Record<string, unknown> = {};
    if (inputs.params) values.params = check(inputs.params, { ...(req.params as Record<string, unknown>) }, 'path', issues);
    if (inputs.query) values.query = check(inputs.query, queryObject(req.query as Record<string, unknown>), 'query', issues);
    if (inputs.body) {
      const body: unknown = req.body === undefined ? {} : req.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) issues.push({ loc: ['body'], msg: 'Input should be a JSON object', type: 'model_attributes_type' });
      else values.body = check(inputs.body, body, 'body', issues);
    }
    if (issues.length > 0) throw refuse(issues);
    (res.locals as Record<symbol, unknown>)[INPUTS] = values;
    next();
  };
  return inputs.body ? [parseJsonBody, validator] : [validator];
}

/** The inputs validate() checked on this request (call it with the route's own declaration). */
export function inputOf<I extends RouteInputs>(res: Response, _inputs: I): Inputs<I> {
  const values = (res.locals as Record<symbol, unknown>)[INPUTS];
  if (!values) throw new Error('inputOf: the route did not validate its inputs');
  return values as Inputs<I>;
}

/** Checks received multipart form fields against the route's `fields` (the same 422 as the rest). */
export function checkFields<I extends RouteInputs>(inputs: I, fields: Record<string, string>): InputOf<I['fields']> {
  if (!inputs.fields) return {} as InputOf<I['fields']>;
  const issues: ValidationIssue[] = [];
  const value = check(inputs.fields, { ...fields }, 'body', issues);
  if (issues.length > 0) throw (inputs.refuse ?? validationError)(issues);
  return value as InputOf<I['fields']>;
}

// One table per route file: each entry is a method, an Express path, its handlers and its OpenAPI
// operation. The routers are mounted from these tables and the OpenAPI document walks the same
// tables (src/web/openapi/document.ts), so a route cannot exist without its documentation.
import { Router, type RequestHandler } from 'express';
import type { Config } from '../../config.js';
import type { KeyCache } from '../middleware/auth.js';
import { validate, type RouteInputs } from '../middleware/validate.js';
import type { FrontDoorMetrics } from '../monitoring/metrics.js';
import type { Json, Operation } from '../openapi/operation.js';
import type { WebDeps } from '../web-deps.js';

/** What decides which routes exist; the app and the document both take it from routeOptions(). */
export interface RouteOptions {
  baseUrl: string;
  cdnUrl: string;
  /** The front door serves stored objects at CDN_URL's path (see filesPath). */
  servesFiles: boolean;
  /** ADMIN_TOKEN is set: /metrics needs it and /admin/queues exists. */
  adminEnabled: boolean;
}

/**
 * Every URL handed out must resolve: stored objects are served at CDN_URL's path with local
 * storage, and with GCS too while CDN_URL points at this service (the default).
 */
export function routeOptions(config: Config): RouteOptions {
  const sameOrigin = new URL(config.cdnUrl).origin === new URL(config.baseUrl).origin;
  return { baseUrl: config.baseUrl, cdnUrl: config.cdnUrl, servesFiles: config.storageDriver === 'local' || sameOrigin, adminEnabled: config.adminToken !== '' };
}

/** Where stored objects are served, or null when this front door does not serve them. */
export function filesPath(options: RouteOptions): string | null {
  if (!options.servesFiles) return null;
  const cdnPath = new URL(options.cdnUrl).pathname.replace(/\/+$/, '');
  return cdnPath || null;
}

/** What handlers are built from when the app mounts a table (the document never builds them). */
export interface RouteContext {
  deps: WebDeps;
  keys: KeyCache;
  metrics: FrontDoorMetrics;
  /** The OpenAPI document of this app (built from the same tables). */
  openApiDocument: () => Json;
}

export type HttpMethod = 'get' | 'post' | 'patch' | 'delete';
/** Middleware and controllers; a nested list is flattened (validation may return several). */
export type Handler = RequestHandler | RequestHandler[];

/** The context of one route: `checkInputs` validates its declared inputs (place it among the handlers). */
export interface RouteHandlerContext extends RouteContext {
  checkInputs: RequestHandler[];
}

export interface RouteSpec {
  method: HttpMethod;
  /** Express syntax: `:name` for a segment, `*name` for the rest of the path. */
  path: string;
  /** A sub-app owning everything under `path` (router.use); documented as its GET page. */
  mount?: boolean;
  /**
   * What the route takes (path params, query, JSON body, form fields, the key header): checked
   * by `checkInputs`, read by the controller through inputOf(), and listed in its OpenAPI operation.
   */
  inputs?: RouteInputs;
  handlers: (ctx: RouteHandlerContext) => Handler[];
  openapi: Operation;
  /** Another spelling Express routes here (a trailing slash), documented as an operation of its own. */
  alias?: { path: string; summary: string; operationId: string };
}

export interface RouteTable {
  routes: RouteSpec[];
}

export function mountRoutes(table: RouteTable, ctx: RouteContext): Router {
  const router = Router();
  for (const route of table.routes) {
    const checkInputs = route.inputs ? validate(route.inputs) : [];
    const handlers = route.handlers({ ...ctx, checkInputs });
    if (checkInputs.length > 0 && !handlers.includes(checkInputs)) throw new Error(`${route.method.toUpperCase()} ${route.path} declares inputs but does not check them`);
    if (route.mount) router.use(route.path, ...handlers);
    else router[route.method](route.path, ...handlers);
  }
  return router;
}

/** `/cdn/:image_id` → `/cdn/{image_id}`, `/image/*path` → `/image/{path}`. */
export function openApiPath(expressPath: string): string {
  if (/[{}()?+]/.test(expressPath)) throw new Error(`route path ${expressPath}: only :name and *name are converted`);
  return expressPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * `auditRoutes(app)`: every route of a Hono app and what guards it. Hono keeps every handler in
 * `app.routes` (`{ method, path, handler }`: base paths and `app.route()` prefixes included,
 * `app.use()` middleware as method `ALL`). A route is a handler that Hono's own `showRoutes()`
 * (hono/dev) lists, one that takes no `next`; its guards are the handlers Hono runs before it.
 * What it reads of Hono is public and in every Hono 4 since 4.6: `app.routes`, `hono/utils/handler`,
 * `hono/utils/url` and `hono/router/trie-router`.
 */
import type { Env, Hono, Schema } from 'hono';
import { findTargetHandler, isMiddleware } from 'hono/utils/handler';
import { checkOptionalParameter, getPattern, splitRoutingPath } from 'hono/utils/url';
import type { RouteAudit } from '../../src/adapter/index.js';
import { audit, auditOptions, guardMarkOf, openApiPath, type RouteEntry } from '../../src/adapter/internal.js';
import { handlerMatcher, type TableEntry } from './route-matcher.js';

// `app.all()` answers any method: its route is listed under each method that Hono and OpenAPI both name.
const ALL_METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/**
 * Every route of `app` with what guards it (`access`, `permissions`) and what to fix (`findings`:
 * a route without guard or public mark; an object route whose permission guards never read the
 * object), as plain JSON. Middleware counts for the routes it runs before, as Hono matches paths
 * (`app.use('/fleet/*', guard)` covers `/fleet` and below); `app.all()` routes are listed under
 * GET, POST, PUT, DELETE, PATCH and OPTIONS, an optional parameter (`/docs/:lang?`) as both paths.
 * With `throwOn`, throws an `Error` naming each route with such a finding (`GET /admin/export`).
 * Changes nothing in `app`; throws a `TypeError` for anything but a Hono app.
 */
export function auditRoutes<E extends Env, S extends Schema, B extends string>(
  app: Pick<Hono<E, S, B>, 'routes' | 'fetch'>,
  options?: {
    /** Throw an `Error` (`code` `'ERR_ROUTE_AUDIT'`) naming each route with a finding of these kinds. Default: none. */
    readonly throwOn?: readonly RouteAudit['findings'][number]['kind'][];
  },
): RouteAudit {
  const throwOn = auditOptions('auditRoutes', options);
  const table = routeTable(app);
  // A sub-app with its own onError has each handler wrapped when mounted; Hono keeps the original.
  const handlers = table.map((route) => findTargetHandler(route.handler));
  const runsBefore = handlerMatcher(table);
  const entries: RouteEntry[] = [];
  table.forEach((route, index) => {
    if (isMiddleware(handlers[index] as Handler)) return;
    for (const method of route.method === 'ALL' ? ALL_METHODS : [route.method]) {
      for (const path of checkOptionalParameter(route.path) ?? [route.path]) {
        entries.push({ method, path: openApiForm(path), marks: runsBefore(index, method, path).map((i) => guardMarkOf(handlers[i])) });
      }
    }
  });
  return audit('auditRoutes', entries, throwOn);
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- Hono's own type of a route's handler
type Handler = Function;

function routeTable(app: unknown): readonly (TableEntry & { readonly handler: Handler })[] {
  const { routes, fetch, route } = (typeof app === 'object' && app !== null ? app : {}) as Record<string, unknown>;
  const isEntry = (r: unknown): boolean => typeof r === 'object' && r !== null && typeof (r as TableEntry).method === 'string'
    && typeof (r as TableEntry).path === 'string' && typeof (r as { handler?: unknown }).handler === 'function';
  if (!Array.isArray(routes) || typeof fetch !== 'function' || typeof route !== 'function' || !routes.every(isEntry)) {
    const got = app === null ? 'null' : Array.isArray(app) ? 'an array' : typeof app;
    throw new TypeError(`auditRoutes: pass a Hono app (new Hono(), its routes added), not ${got === 'object' ? 'another object' : got}`);
  }
  return routes as (TableEntry & { handler: Handler })[];
}

/** `/years/:year{[0-9]{4}}/*` → `/years/{year}/*`, read by Hono's own parser (a pattern may hold braces). */
function openApiForm(path: string): string {
  return openApiPath(...splitRoutingPath(path).map((label) => {
    const pattern = getPattern(label);
    return typeof pattern === 'object' && pattern !== null ? `{${pattern[1]}}` : label;
  }));
}

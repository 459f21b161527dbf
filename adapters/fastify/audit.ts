/**
 * `auditRoutes(fastify)`: what guards each route of a Fastify app, from the routes the `iamAuthz`
 * plugin recorded (route-record.ts) and the hooks that run before each handler (route-hooks.ts),
 * read after `ready()`, when Fastify has settled them. Nothing here runs per request.
 */
import type { FastifyInstance } from 'fastify';
import type { RouteAudit } from '../../src/adapter/index.js';
import { audit, auditOptions, type RouteEntry } from '../../src/adapter/internal.js';
import { routeMarks } from './route-hooks.js';
import { asArray, recorderOf } from './route-record.js';

/** Weakest first. */

/**
 * Every route of `fastify` with what guards it: `{ routes, findings }` (see `RouteAudit`). Call it
 * after `await fastify.ready()`, with the `iamAuthz` plugin registered before the routes. Routes that
 * are one path in OpenAPI form (`/a` and `/a/`, or two constraint variants) are reported by the
 * weaker of their guards. Throws a `TypeError` when `fastify` is no Fastify instance, has no
 * `iamAuthz` plugin, is not ready yet, or had routes before the plugin (never recorded); an `Error`
 * (`code` `'ERR_ROUTE_AUDIT'`) naming the routes with findings of the kinds in `throwOn`.
 */
export function auditRoutes(fastify: FastifyInstance, options?: { readonly throwOn?: readonly RouteAudit['findings'][number]['kind'][] }): RouteAudit {
  if (!isFastify(fastify)) throw new TypeError('auditRoutes: pass a Fastify instance (what Fastify() returns), after await fastify.ready()');
  const throwOn = auditOptions('auditRoutes', options);
  const recorder = fastify.hasDecorator('iamAuthz') ? recorderOf(fastify.iamAuthz) : undefined;
  if (recorder === undefined) {
    throw new TypeError('auditRoutes: register the iamAuthz plugin of iam-authz/fastify on this instance before the routes (await fastify.register(iamAuthz, { authorizer })), then call auditRoutes after await fastify.ready(): the plugin records the routes registered after it');
  }
  if (!recorder.ready) throw new TypeError('auditRoutes: call it after await fastify.ready(): Fastify settles the hooks of each route then');
  if (recorder.early.length > 0) {
    throw new TypeError(`auditRoutes: routes were registered before the iamAuthz plugin, which records only the routes registered after it (as Fastify prints them: ${recorder.early.join('; ')}): register the plugin before the routes (await fastify.register(iamAuthz, { authorizer }) first)`);
  }
  const byRoute = new Map<string, RouteEntry[]>();
  for (const route of recorder.routes) {
    const marks = routeMarks(route);
    for (const method of asArray(route.options.method)) {
      const entry: RouteEntry = { method: String(method).toUpperCase(), path: route.path, marks };
      const key = `${entry.method} ${entry.path}`;
      byRoute.set(key, [...(byRoute.get(key) ?? []), entry]);
    }
  }
  // Several routes on one method and path: the kit's audit counts the least guarded.
  return audit('auditRoutes', [...byRoute.values()].flat(), throwOn);
}

function isFastify(value: unknown): value is FastifyInstance {
  const app = value as Partial<Record<'addHook' | 'printRoutes' | 'hasDecorator' | 'ready', unknown>> | null;
  return typeof value === 'object' && app !== null && typeof app.addHook === 'function' && typeof app.printRoutes === 'function' && typeof app.hasDecorator === 'function' && typeof app.ready === 'function';
}

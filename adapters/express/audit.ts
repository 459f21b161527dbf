/**
 * `auditRoutes(app)`: every route of an Express 4 or 5 application (or router) with what guards
 * it, read from the route table (audit-table.ts) once, at the call: no route's behaviour changes
 * and no request pays for it. What it relies on of Express is in audit-table.ts and
 * audit-express4.ts: `app._router` (Express 4) or `app.router` (Express 5), and each router's
 * `stack`, `caseSensitive` and layers.
 */
import type { Application, Router } from 'express';
import type { RouteAudit } from '../../src/adapter/index.js';
import { audit, auditOptions } from '../../src/adapter/internal.js';
import { readRoutes, type RouterLike } from './audit-table.js';

/**
 * Options of {@link auditRoutes}.
 * @inline
 */
interface ExpressAuditOptions {
  /** Throw an `Error` (code `'ERR_ROUTE_AUDIT'`) naming each route with a finding of these kinds, as `GET /admin/export`. Default: none. */
  readonly throwOn?: readonly RouteAudit['findings'][number]['kind'][];
}


/**
 * Every route of `app` (an Express 4 or 5 application, or a router: paths relative to it), one per
 * method and path in OpenAPI form, with its access and permissions, and the findings: a route with
 * no guard, an object route whose permission guards never read the object. Routers mounted with
 * `app.use(path, router)` are read at any depth; `app.all()` is listed under DELETE, GET, PATCH,
 * POST and PUT; a path with an optional part is listed with and without it. Throws a `TypeError`
 * for anything but an Express application or router, and an `Error` for a mounted sub-application
 * (its routes cannot be read) or for a finding of a kind in `throwOn`.
 */
export function auditRoutes(app: Application | Router, options?: ExpressAuditOptions): RouteAudit {
  const throwOn = auditOptions('auditRoutes', options);
  // Several registrations of one route: the kit's audit counts the least guarded.
  return audit('auditRoutes', readRoutes(routerOf(app)), throwOn);
}

type Candidate = ((...args: never[]) => unknown) & { handle?: unknown; set?: unknown; lazyrouter?: unknown; _router?: RouterLike; router?: RouterLike; stack?: unknown };

function routerOf(app: unknown): RouterLike {
  if (typeof app === 'function') {
    const candidate = app as Candidate;
    // Express 4 makes its router at the first route (`lazyrouter`, and its `app.router` throws); Express 5 in the `app.router` getter.
    const router = typeof candidate.handle === 'function' && typeof candidate.set === 'function'
      ? (typeof candidate.lazyrouter === 'function' ? candidate._router ?? { stack: [] } : candidate.router)
      : candidate;
    if (Array.isArray(router?.stack)) return router as RouterLike;
  }
  throw new TypeError('auditRoutes: pass an Express application (express()) or router (express.Router())');
}


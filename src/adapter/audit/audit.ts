/**
 * The route audit, framework-neutral: each adapter's `auditRoutes` reads its framework's route
 * table into {@link RouteEntry}s (a route's method, OpenAPI path and the marks of every handler
 * that runs for it, group guards included); this module says what guards each route and what is
 * missing — a route with no guard at all (OWASP API5, broken function-level authorization), or an
 * object route whose permission guards never read the object (API1, broken object-level
 * authorization) — and refuses to go on when asked to.
 */
import { placeMark, type GuardMark, type MarkedPermission } from './guard-mark.js';

/** One route as an adapter read it from its framework. */
export interface RouteEntry {
  /** HTTP method, upper case. */
  readonly method: string;
  /** OpenAPI template form (`/vehicle/{vin}`), mount prefixes included, no trailing slash. */
  readonly path: string;
  /** The mark of every handler that runs for the route, group guards included (`undefined`: not a guard). */
  readonly marks: readonly (GuardMark | undefined)[];
}

/**
 * What a finding is about: no guard and no public mark, or an object route whose guards never read the object.
 * @inline
 */
export type FindingKind = 'unguarded' | 'unscoped-parameter';

/** What `auditRoutes` returns: plain JSON. */
export interface RouteAudit {
  /** One entry per method and path, sorted by path then method. */
  readonly routes: {
    /** HTTP method, upper case. */
    readonly method: string;
    /** OpenAPI template form, e.g. `/vehicle/{vin}`. */
    readonly path: string;
    /**
     * `'permission'` (a permission guard enforces), `'authenticated'` (a valid token only; also a
     * permission guard in report mode, which enforces nothing more), `'public'` (marked on purpose:
     * `publicRoute()`, `authenticate({ optional: true })`, NestJS `@Public()`) or `'unguarded'`.
     */
    readonly access: 'permission' | 'authenticated' | 'public' | 'unguarded';
    /** What the permission guards ask for; empty unless `access` is `'permission'`. */
    readonly permissions: readonly {
      /** The service key. */
      readonly service: string;
      /** The permission key. */
      readonly permission: string;
      /** The reference type (`VIN`); absent for a guard on node ids. */
      readonly resourceType?: string;
    }[];
  }[];
  /** What to fix, sorted like the routes. */
  readonly findings: readonly {
    /** `'unguarded'` or `'unscoped-parameter'`. */
    readonly kind: FindingKind;
    /** The route's method, upper case (`GET`). */
    readonly method: string;
    /** The route's path in OpenAPI template form (`/vehicle/{vin}`). */
    readonly path: string;
    /** One sentence: what is wrong and how to fix it. */
    readonly message: string;
  }[];
}

/**
 * Options of `auditRoutes`.
 * @inline
 */
export interface AuditOptions {
  /**
   * Throw an `Error` (`code` `'ERR_ROUTE_AUDIT'`) naming each route with a finding of these kinds
   * (as `GET /admin/export`), so that a service refuses to start with a hole in it. Default: none.
   */
  readonly throwOn?: readonly FindingKind[];
}

type AuditedRoute = RouteAudit['routes'][number];
type Finding = RouteAudit['findings'][number];
const KINDS: readonly FindingKind[] = ['unguarded', 'unscoped-parameter'];

/** Checks `options` for `name` (the caller, e.g. `auditRoutes`); the kinds to throw on. */
export function auditOptions(name: string, options: unknown): ReadonlySet<FindingKind> {
  if (options === undefined) return new Set();
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`${name}: options must be an object`);
  for (const key of Object.keys(options)) if (key !== 'throwOn') throw new TypeError(`${name}: unknown option "${key}"`);
  const { throwOn } = options as { throwOn?: unknown };
  if (throwOn === undefined) return new Set();
  if (!Array.isArray(throwOn) || !throwOn.every((k): k is FindingKind => KINDS.includes(k as FindingKind))) {
    throw new TypeError(`${name}: "throwOn" must be an array of ${KINDS.map((k) => `'${k}'`).join(' and ')}`);
  }
  return new Set(throwOn);
}

/** How much a route's guards check, least first: a route's access, then whether it has a finding. */
const RANK = { unguarded: 0, public: 1, authenticated: 2, permission: 3 } as const;

/**
 * The audit of `entries`; throws for the findings of the kinds in `throwOn` (see {@link AuditOptions}).
 * Several entries of one method and path are registrations a request may reach instead of one
 * another (a route registered twice, versions, two patterns of one path): the least guarded counts
 * (their marks merged when they check as much), so no route is credited with a guard it may skip.
 * Each permission guard found at a route is recorded there in the authorizer's inventory.
 */
export function audit(name: string, entries: readonly RouteEntry[], throwOn: ReadonlySet<FindingKind>): RouteAudit {
  const kept = new Map<string, { method: string; path: string; marks: (GuardMark | undefined)[]; rank: number }>();
  for (const { method, path, marks } of entries) {
    for (const mark of marks) placeMark(mark, method, path);
    const key = `${method} ${path}`;
    const route = auditedRoute(method, path, marks);
    const rank = RANK[route.access] * 2 + (findingOf(route, marks) ? 0 : 1);
    const known = kept.get(key);
    if (known === undefined || rank < known.rank) kept.set(key, { method, path, marks: [...marks], rank });
    else if (rank === known.rank) known.marks.push(...marks);
  }
  const ordered = [...kept.values()].sort((a, b) => compare(a.path, b.path) || compare(a.method, b.method));
  const routes: AuditedRoute[] = [];
  const findings: Finding[] = [];
  for (const { method, path, marks } of ordered) {
    const route = auditedRoute(method, path, marks);
    routes.push(route);
    const finding = findingOf(route, marks);
    if (finding) findings.push(finding);
  }
  const failing = findings.filter((f) => throwOn.has(f.kind));
  if (failing.length > 0) throw auditError(name, failing);
  return { routes, findings };
}

function auditedRoute(method: string, path: string, marks: readonly (GuardMark | undefined)[]): AuditedRoute {
  const enforcing = marks.filter((m): m is Extract<GuardMark, { access: 'permission' }> => m?.access === 'permission' && m.mode === 'enforce');
  if (enforcing.length > 0) {
    const seen = new Set<string>();
    const permissions: MarkedPermission[] = [];
    for (const p of enforcing.flatMap((m) => m.permissions)) {
      const key = `${p.service}\u0000${p.permission}\u0000${p.resourceType ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      permissions.push({ ...p });
    }
    return { method, path, access: 'permission', permissions };
  }
  // A report-mode permission guard still requires a valid token: it enforces that alone.
  const access = marks.some((m) => m?.access === 'authenticated' || m?.access === 'permission') ? 'authenticated'
    : marks.some((m) => m?.access === 'public') ? 'public' : 'unguarded';
  return { method, path, access, permissions: [] };
}

function findingOf(route: AuditedRoute, marks: readonly (GuardMark | undefined)[]): Finding | undefined {
  const { method, path } = route;
  if (route.access === 'unguarded') {
    return { kind: 'unguarded', method, path, message: `${method} ${path} has no guard and no public mark: guard it, or mark it public on purpose (publicRoute(), or @Public() in NestJS)` };
  }
  const parameters = path.match(/\{[^}]+\}/g);
  if (route.access !== 'permission' || parameters === null) return undefined;
  const scoped = marks.some((m) => m?.access === 'permission' && m.mode === 'enforce' && m.scoped);
  if (scoped) return undefined;
  return {
    kind: 'unscoped-parameter',
    method,
    path,
    message: `${method} ${path} has a parameter (${parameters.join(', ')}), but no permission guard on it takes its resource from the request: each names a fixed resource, so the object the request names is never checked`,
  };
}

function auditError(name: string, failing: readonly Finding[]): Error {
  const names = [...new Set(failing.map((f) => `${f.method} ${f.path}`))];
  const kinds = [...new Set(failing.map((f) => f.kind))].join(', ');
  const error = new Error(`${name}: ${names.length} route${names.length === 1 ? '' : 's'} to fix (${kinds}): ${names.join('; ')}`);
  return Object.assign(error, { code: 'ERR_ROUTE_AUDIT', findings: failing });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

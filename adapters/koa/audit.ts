/**
 * `auditRoutes` for Koa: every route of a `@koa/router` Router — or of every router a Koa app
 * mounts, the app's own middleware before it counted — with what guards it, read as the router
 * runs it (route-table.ts) and handed to the framework-neutral audit. Nothing here runs per request.
 */
import type { RouteAudit } from '../../src/adapter/index.js';
import { audit, auditOptions, guardMarkOf, type RouteEntry } from '../../src/adapter/internal.js';
import { readRouteTable, type Marks } from './route-table.js';

type Loose = Record<string, unknown>;
type Finding = RouteAudit['findings'][number];
interface KoaRouter { readonly stack: readonly unknown[]; readonly exclusive?: unknown }

/**
 * Every route of a `@koa/router` Router with what guards it: `router` is the Router the app mounts
 * (`app.use(router.routes())`; nested routers included), what `router.routes()` returns, or the
 * Koa app itself — then its middleware before each router (`app.use(guard)`) counts too, and the
 * routes of every router it mounts are listed. Synchronous; changes nothing. Throws a `TypeError`
 * for anything else; with `throwOn`, an `Error` naming each route with a finding of those kinds.
 */
export function auditRoutes(
  router: { readonly stack: readonly object[] } | ((...args: never[]) => unknown) | { readonly middleware: readonly unknown[] },
  options?: { readonly throwOn?: readonly ('unguarded' | 'unscoped-parameter')[] },
): RouteAudit {
  const throwOn = auditOptions('auditRoutes', options);
  const entries = new Map<string, RouteEntry>();
  const hints = new Map<string, string>();
  for (const { table, before } of routersOf(router)) readRouteTable(table.stack, Boolean(table.exclusive), before, entries, hints);
  // Why a guard near an unguarded route does not run for it, instead of "no guard".
  const withHint = (f: Finding): Finding => {
    const hint = f.kind === 'unguarded' ? hints.get(`${f.method} ${f.path}`) : undefined;
    return hint === undefined ? f : { ...f, message: hint };
  };
  try {
    const { routes, findings } = audit('auditRoutes', [...entries.values()], throwOn);
    return { routes, findings: findings.map(withHint) };
  } catch (error) {
    const { findings } = error as { findings?: unknown };
    if (Array.isArray(findings)) Object.assign(error as object, { findings: (findings as Finding[]).map(withHint) });
    throw error;
  }
}

const isObject = (value: unknown): value is Loose => typeof value === 'object' && value !== null;
const isRouter = (value: unknown): value is KoaRouter => isObject(value) && Array.isArray(value.stack) && typeof value.routes === 'function';

/** The router behind what `router.routes()` returns (an own data property: never run a getter). */
function mountedRouter(value: unknown): KoaRouter | undefined {
  if (typeof value !== 'function') return undefined;
  const descriptor = Object.getOwnPropertyDescriptor(value, 'router');
  const router: unknown = descriptor && 'value' in descriptor ? descriptor.value : undefined;
  return isRouter(router) ? router : undefined;
}

/** Each router to read, with the marks of the app middleware that runs before it. */
function routersOf(target: unknown): { table: KoaRouter; before: Marks }[] {
  const router = isRouter(target) ? target : mountedRouter(target);
  if (router) return [{ table: router, before: [] }];
  if (!isObject(target) || !Array.isArray(target.middleware) || typeof target.callback !== 'function' || typeof target.use !== 'function') {
    throw new TypeError('auditRoutes: pass the @koa/router Router your Koa app mounts (app.use(router.routes())), what router.routes() returns, or the Koa app');
  }
  const found: { table: KoaRouter; before: Marks }[] = [];
  const before: Marks = [];
  for (const middleware of target.middleware as unknown[]) {
    const mounted = mountedRouter(middleware);
    if (!mounted) before.push(guardMarkOf(middleware));
    // A router mounted twice answers where it is mounted first.
    else if (!found.some((f) => f.table === mounted)) found.push({ table: mounted, before: [...before] });
  }
  if (found.length > 0) return found;
  throw new TypeError('auditRoutes: no @koa/router router is mounted on this Koa app (app.use(router.routes())): mount it before auditing, or pass the router');
}

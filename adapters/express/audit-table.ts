/**
 * Express's route table, read as Express walks it: a router's `stack` of layers, in order. A layer
 * is a route (`layer.route`: its `path`, `methods` and its own `stack` of handlers), a mounted
 * router (a handle with a `stack` of its own: walked under the layer's path), or middleware. A
 * guard counts for a route when Express runs it for every request of that route before the route's
 * handlers: middleware registered earlier at a path covering the route's (including middleware
 * inside a router mounted earlier: it runs for the later routes under that router's path too), an
 * earlier route of the same method and path, and the route's own handlers of that method.
 */
import { guardMarkOf, type GuardMark, type RouteEntry } from '../../src/adapter/internal.js';
import { coversExactly, coversPrefix } from './audit-cover.js';
import { express4MountPath, type Express4Layer } from './audit-express4.js';
import { handles, marksOf, methodsOf, type Handler, type Route } from './audit-route.js';
import { openApiForm, pathsOf, type Segments, type Syntax } from './audit-syntax.js';

/** What of a router (Express 4's, or the `router` package's for Express 5) the audit reads. */
export interface RouterLike { readonly stack: readonly Layer[]; readonly caseSensitive?: boolean }
interface Layer { readonly handle: Handler; readonly route?: Route; readonly rawPath?: unknown; readonly slash?: boolean }
type Effect = { readonly at: Segments; readonly mark: GuardMark } | { readonly at: Segments; readonly route: Route };

/** One entry per registration of a route, path and method, in the order Express tries them. */
export function readRoutes(router: RouterLike): RouteEntry[] {
  const entries: RouteEntry[] = [];
  walk(router, [], [], entries, new Set());
  return entries;
}

function walk(router: RouterLike, prefix: Segments, effects: Effect[], entries: RouteEntry[], within: ReadonlySet<RouterLike>): void {
  const sensitive = router.caseSensitive === true;
  for (const layer of router.stack) {
    // Express 4's layers compile their path to `regexp`; router 2.x's (Express 5) to `matchers`.
    const syntax: Syntax = 'regexp' in layer ? 'express4' : 'express5';
    const { handle, route } = layer;
    if (route) {
      for (const path of pathsOf(route.path, syntax, sensitive)) addRoute(route, [...prefix, ...path], effects, entries);
      continue;
    }
    const nested = Array.isArray(handle.stack) ? handle as unknown as RouterLike : undefined;
    // Error handlers (four arguments) and middleware that is not a guard of ours count for nothing.
    const mark = nested || handle.length > 3 ? undefined : guardMarkOf(handle);
    if (!nested && !mark && handle.name !== 'mounted_app') continue;
    const mounts = pathsOf(mountPath(layer, syntax), syntax, sensitive).map((path) => [...prefix, ...path]);
    if (handle.name === 'mounted_app') {
      throw new Error(`auditRoutes: an Express application is mounted at ${openApiForm(mounts[0] ?? prefix)} (app.use(path, subApp)); its routes cannot be read from the parent application: mount an express.Router() there instead`);
    }
    for (const at of mounts) {
      // A router mounted inside itself (`r.use('/a', r)`) would list `/a/a/…` forever: once is enough.
      if (nested) {
        if (nested !== router && !within.has(nested)) walk(nested, at, effects, entries, new Set([...within, router]));
      } else if (mark) effects.push({ at, mark });
    }
  }
}

function mountPath(layer: Layer, syntax: Syntax): unknown {
  if (syntax === 'express4') return express4MountPath(layer as unknown as Express4Layer);
  if (layer.rawPath !== undefined) return layer.rawPath;
  if (layer.slash === true) return '/';
  throw new Error('auditRoutes: this Express 5 application\'s router does not keep the paths given to app.use(path, …): auditing it needs router 2.3 or later, the package Express 5 routes with (npm update router)');
}

function addRoute(route: Route, at: Segments, effects: Effect[], entries: RouteEntry[]): void {
  const path = openApiForm(at);
  for (const method of methodsOf(route)) {
    const inherited = effects.flatMap((effect) => ('route' in effect
      ? (handles(effect.route, method) && coversExactly(effect.at, at) ? marksOf(effect.route, method) : [])
      : (coversPrefix(effect.at, at) ? [effect.mark] : [])));
    entries.push({ method, path, marks: [...inherited, ...marksOf(route, method)] });
  }
  if (route.stack.some((handler) => guardMarkOf(handler.handle) !== undefined)) effects.push({ at, route });
}

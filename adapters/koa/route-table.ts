/**
 * One `@koa/router` route table read as the router runs a request: its `stack` holds every layer
 * in registration order (a nested router's layers copied in, prefixed, when it is mounted), and a
 * request runs, in that order, each middleware layer (`router.use()`, no methods) and each route
 * layer of its method whose regular expression matches the path. So a route is guarded by its own
 * handlers and by the earlier layers that run for every path it answers; an exclusive router runs
 * only the one layer it picks.
 */
import { guardMarkOf, type GuardMark, type RouteEntry } from '../../src/adapter/internal.js';
import { routeTemplate } from './route-paths.js';
import { coverage, matches, samplePaths, type Sample } from './route-samples.js';

interface Layer {
  readonly path: unknown;
  readonly methods: readonly string[];
  readonly stack: readonly unknown[];
  readonly regexp: RegExp;
  readonly opts?: { readonly pathAsRegExp?: unknown };
}

export type Marks = (GuardMark | undefined)[];
/** What `router.all()` is listed as: the methods of an OpenAPI path item. */
const OPENAPI_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE'];

function layerOf(value: unknown): Layer {
  const layer = value as Partial<Record<keyof Layer, unknown>> | null;
  if (typeof layer === 'object' && layer !== null && Array.isArray(layer.methods) && Array.isArray(layer.stack) && layer.regexp instanceof RegExp) return layer as Layer;
  throw new TypeError('auditRoutes: this router\'s stack holds a layer without methods, stack and regexp: auditRoutes reads the route table of @koa/router 15');
}

/** The route's methods; the HEAD a GET route answers by itself left out, `router.all()` as the OpenAPI methods. */
function listedMethods(layer: Layer): string[] {
  const unique = [...new Set(layer.methods.map((m) => m.toUpperCase()))];
  const listed = OPENAPI_METHODS.every((m) => unique.includes(m)) ? OPENAPI_METHODS : unique;
  return listed.filter((m) => m !== 'HEAD' || !listed.includes('GET'));
}

const isPattern = (layer: Layer): layer is Layer & { readonly path: string } => typeof layer.path === 'string' && layer.opts?.pathAsRegExp !== true;
const marksOf = (layer: Layer): Marks => layer.stack.map(guardMarkOf);
const guards = (layer: Layer): boolean => layer.stack.some((handler) => guardMarkOf(handler) !== undefined);

/**
 * Adds each route of `stack` not in `entries` yet (a route registered again, or by a router
 * mounted later, runs after the first, whose handlers answer), after `appMarks`; `hints` gets why
 * a guard registered near a route does not run for it.
 */
export function readRouteTable(stack: readonly unknown[], exclusive: boolean, appMarks: Marks, entries: Map<string, RouteEntry>, hints: Map<string, string>): void {
  const layers = stack.map(layerOf);
  for (const [index, layer] of layers.entries()) {
    if (layer.methods.length === 0) continue;
    // A RegExp path has no OpenAPI form: listed by its source.
    const path = isPattern(layer) ? routeTemplate(layer.path) : String(layer.path instanceof RegExp ? layer.path : layer.regexp);
    const samples = isPattern(layer) ? samplePaths(layer.path).filter((s) => matches(layer.regexp, s.path)) : [];
    for (const method of listedMethods(layer)) {
      const key = `${method} ${path}`;
      if (entries.has(key)) continue;
      const marks: Marks = [...appMarks];
      let hint: string | undefined;
      for (const earlier of exclusive ? [] : layers.slice(0, index)) {
        if (earlier.methods.length > 0 && !earlier.methods.includes(method)) continue;
        const covered = coverage(earlier.regexp, samples);
        if (covered.all) marks.push(...marksOf(earlier));
        else if (covered.missed && guards(earlier)) hint ??= partialHint(key, method, covered.missed);
      }
      if (!exclusive && layers.slice(index + 1).some((l) => l.methods.length === 0 && guards(l) && coverage(l.regexp, samples).all)) {
        hint ??= `${key}: a guard registered with router.use() after it runs only after its handlers: register the guard before the route`;
      }
      entries.set(key, { method, path, marks: [...marks, ...marksOf(layer)] });
      if (hint !== undefined) hints.set(key, hint);
    }
  }
}

function partialHint(key: string, method: string, missed: Sample): string {
  const why = missed.respelled
    ? 'as @koa/router matches the path of router.use() in a prefixed or mounted router case-sensitively and routes not: create that router with { sensitive: true }, or guard the mount (router.use(\'/prefix\', guard, nested.routes()))'
    : 'as the path of that guard does not cover every form of the route\'s path: guard the route itself';
  return `${key}: a guard registered before it does not run for every path this route answers: ${method} ${missed.path} reaches it without the guard, ${why}`;
}

/**
 * The routes of a Fastify app, as the `iamAuthz` plugin records them for `auditRoutes`: Fastify
 * keeps no list of its routes' options, so an `onRoute` hook keeps each route's options and the
 * encapsulated instance it was declared on (whose hooks run for it). Nothing here runs per request.
 */
import type { FastifyInstance } from 'fastify';
import { fastifyOpenApiPath } from './audit-paths.js';

/** What the `onRoute` hook hands over (Fastify's `RouteOptions`, the full `url`). */
export interface RouteOptions {
  readonly method: string | readonly string[];
  readonly url: string;
  readonly handler: unknown;
  readonly [hook: string]: unknown;
}

export interface Recorded {
  /** The instance the route was declared on: whose hooks run for it. */
  readonly instance: FastifyInstance;
  /** Fastify's own options object, read after ready() as Fastify does (later `onRoute` hooks' changes count). */
  readonly options: RouteOptions;
  /** Its path in OpenAPI form, as declared (the `prefixTrailingSlash` variant Fastify adds shares it). */
  readonly path: string;
}

export interface Recorder {
  readonly routes: Recorded[];
  /** The routes Fastify had before the plugin (as `printRoutes()` lists them): never recorded. */
  readonly early: readonly string[];
  ready: boolean;
}

/** Keyed by the `fastify.iamAuthz` decoration: every instance that sees it finds its recorder. */
const recorders = new WeakMap<object, Recorder>();

/** Records the routes registered on `fastify` and the plugins inside it from now on; `key` is the plugin's decoration. */
export function recordRoutes(fastify: FastifyInstance, key: object): void {
  const recorder: Recorder = { routes: [], early: routeLines(fastify.printRoutes({ commonPrefix: false })), ready: false };
  recorders.set(key, recorder);
  fastify.addHook('onRoute', function recordRoute(this: FastifyInstance, options) {
    const route = options as unknown as RouteOptions;
    const path = fastifyOpenApiPath(route.url);
    if (!addedByFastify(this, route, path, recorder.routes)) recorder.routes.push({ instance: this, options: route, path });
  });
  fastify.addHook('onReady', function auditable(done) {
    recorder.ready = true;
    done();
  });
}

/** The recorder of the plugin whose decoration is `key`. */
export function recorderOf(key: unknown): Recorder | undefined {
  return typeof key === 'object' && key !== null ? recorders.get(key) : undefined;
}

/**
 * Whether the route is one Fastify adds by itself, left out like the kit says: the HEAD route of
 * a GET (`exposeHeadRoutes`; it is the GET's options copied, so the same handler on the same
 * instance and path), or the catch-all preflight route `@fastify/cors` adds (`OPTIONS *`:
 * preflight requests carry no credentials, so there is nothing to guard).
 */
function addedByFastify(instance: FastifyInstance, route: RouteOptions, path: string, recorded: readonly Recorded[]): boolean {
  if (route.method === 'OPTIONS') return /(^|\/)\*$/.test(route.url);
  if (route.method !== 'HEAD') return false;
  return recorded.some((get) => get.instance === instance && get.options.handler === route.handler && get.path === path && asArray(get.options.method).includes('GET'));
}

/** The lines of `printRoutes()` that name routes (`/early/:id (GET, HEAD)`), a preflight route left out. */
function routeLines(printed: string): string[] {
  return printed.split('\n')
    .map((line) => line.replace(/^[\s│├└─]+/u, '').trim())
    .filter((line) => /\([A-Z]+(, [A-Z]+)*\)$/.test(line) && !line.endsWith('* (OPTIONS)'));
}

/** A route option that is one value or an array of them (`method`, each hook), as an array. */
export function asArray(value: unknown): readonly unknown[] {
  return value === undefined || value === null ? [] : Array.isArray(value) ? value : [value];
}

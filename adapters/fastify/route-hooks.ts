/**
 * What runs before the handler of a recorded route: the request hooks of its instance (its
 * plugin's own and those it inherited through encapsulation, in the order Fastify runs them),
 * then the route's own — what Fastify gives the route's context at ready() — and the mark of each.
 */
import type { FastifyInstance } from 'fastify';
import { guardMarkOf, type GuardMark } from '../../src/adapter/internal.js';
import { asArray, type Recorded } from './route-record.js';

/** The request hooks that run before the handler, in Fastify's order: a guard anywhere else guards nothing. */
const BEFORE_HANDLER = ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const;

type HookTable = Readonly<Record<(typeof BEFORE_HANDLER)[number], readonly unknown[]>>;

/** The marks of every hook that runs before the handler of `route` (`undefined`: not a guard of ours). */
export function routeMarks({ instance, options }: Recorded): (GuardMark | undefined)[] {
  const inherited = hooksOf(instance);
  return BEFORE_HANDLER.flatMap((hook) => [...inherited[hook], ...asArray(options[hook])]).map(guardMarkOf);
}

/**
 * The request hooks of an instance. Fastify 5 has no reader for them (`printRoutes` gives names,
 * `findRoute` no hooks, and the route contexts hold bound copies, which lose the mark): they are
 * under its `Symbol('fastify.hooks')`, found by its description. A Fastify that keeps them
 * elsewhere is refused, rather than its routes reported unguarded.
 */
function hooksOf(instance: FastifyInstance): HookTable {
  let table: unknown;
  for (let o: object | null = instance; o !== null && table === undefined; o = Object.getPrototypeOf(o) as object | null) {
    const symbol = Object.getOwnPropertySymbols(o).find((s) => s.description === 'fastify.hooks');
    if (symbol !== undefined) table = (instance as unknown as Record<symbol, unknown>)[symbol];
  }
  if (typeof table !== 'object' || table === null || !BEFORE_HANDLER.every((hook) => Array.isArray((table as Record<string, unknown>)[hook]))) {
    throw new Error('auditRoutes: cannot read the hooks of this Fastify instance: iam-authz/fastify reads those of Fastify 5');
  }
  return table as HookTable;
}

/**
 * One route of an Express route table (`layer.route`, Express 4 and router 2.x alike): its `path`,
 * `methods` (`{ get: true }`, `_all` for `route.all()`) and `stack` of handlers, each with the
 * lower-case `method` it answers (none: every method).
 */
import { METHODS } from 'node:http';
import { guardMarkOf, type GuardMark } from '../../src/adapter/internal.js';

export interface Handler { readonly length: number; readonly name: string; readonly stack?: unknown }
export interface Route {
  readonly path: unknown;
  readonly methods: Readonly<Record<string, boolean | undefined>>;
  readonly stack: readonly { readonly handle: Handler; readonly method?: string }[];
}

/** What `app.all()` is listed under: the methods an API answers (HEAD and OPTIONS, like Express's own, left out). */
const ALL = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'];

/** Its methods; `app.all()` registers every method Node knows, `route.all()` marks `_all`: both are {@link ALL}. */
export function methodsOf(route: Route): string[] {
  const { methods } = route;
  if (METHODS.every((m) => methods[m.toLowerCase()] === true)) return ALL;
  const named = Object.keys(methods).filter((m) => m !== '_all' && methods[m] === true).map((m) => m.toUpperCase());
  return [...new Set(methods._all === true ? [...ALL, ...named] : named)];
}

/** Whether Express runs `route` for a request of `method` (a GET route answers HEAD too). */
export function handles(route: Route, method: string): boolean {
  const { methods } = route;
  const name = method.toLowerCase();
  return methods._all === true || methods[name] === true || (name === 'head' && methods.get === true && methods.head !== true);
}

export function marksOf(route: Route, method: string): (GuardMark | undefined)[] {
  const name = method.toLowerCase();
  return route.stack.filter((h) => (h.method === undefined || h.method === name) && h.handle.length <= 3).map((h) => guardMarkOf(h.handle));
}

/**
 * The one parser of a permission guard's arguments — `(service, permission(s), type, resolve,
 * options?)` or `(service, permission(s), { node: resolve }, options?)` — and of `authenticate()`'s
 * options, shared by `createGuards` and by decorators that record a requirement before any guard
 * exists (NestJS). Each mistake is a `TypeError` naming the guard (`name`) and the argument.
 */
import { isArray } from '../lib/is-array.js';
import { refuseNulls } from '../lib/option-checks.js';
import type { GuardMode } from '../types.js';

/** Options of one route's permission guard; they win over the adapter's and the authorizer's. */
export interface RouteOptions {
  /** This route's mode. Default: the adapter's `mode`, else the authorizer's, else `'enforce'`. */
  mode?: GuardMode;
}

/** Options of an `authenticate()` guard. */
export interface AuthenticateOptions {
  /**
   * No `Authorization` header at all → the request proceeds anonymously (no `iam` state). Any
   * header that is present — another scheme, an empty `Bearer`, an invalid or expired token — is
   * still a 401. Default `false`.
   */
  optional?: boolean;
}

/** Returns the resource value(s) of a request: a string, several (all are required), or nothing (denies). */
export type ResourceResolver<Req> = (req: Req) => string | readonly string[] | undefined | null | Promise<string | readonly string[] | undefined | null>;

/** A permission guard's arguments, checked; frozen. */
export interface PermissionArgs<Req> {
  /** The service key. */
  readonly service: string;
  /** The permission keys: one for `requirePermission`, any one of them grants for `requireAnyPermission`. */
  readonly permissions: readonly string[];
  /** `true` for `requireAnyPermission` (the inventory lists it so). */
  readonly any: boolean;
  /** The resource type (`VIN`: resources are `TYPE=value`), or `undefined`: resources are node ids. */
  readonly type: string | undefined;
  /** Reads the resource value(s), or node id(s), from the request. */
  readonly resolve: ResourceResolver<Req>;
  /** The route's own mode, if it set one. */
  readonly mode: GuardMode | undefined;
}

/**
 * Checks `args` as `name` (`requirePermission`, `RequireAnyPermission`, …) takes them; `any`: the
 * second argument is a list of permissions. Returns them frozen, or throws a `TypeError`.
 */
export function parsePermissionArgs<Req>(name: string, any: boolean, args: readonly unknown[]): PermissionArgs<Req> {
  const [service, asked, target, ...rest] = args;
  if (any) {
    if (!Array.isArray(asked) || asked.length === 0 || !asked.every((p: unknown) => typeof p === 'string' && p.length > 0)) {
      throw new TypeError(`${name}: "permissions" must be a non-empty array of non-empty strings`);
    }
  } else if (typeof asked !== 'string' || asked.length === 0) {
    throw new TypeError(`${name}: "permission" must be a non-empty string`);
  }
  if (typeof service !== 'string' || service.length === 0) throw new TypeError(`${name}: "service" must be a non-empty string`);
  const byNode = typeof target === 'object' && target !== null && !isArray(target);
  if (byNode) {
    for (const key of Object.keys(target)) if (key !== 'node') throw new TypeError(`${name}: unknown key "${key}" in the node target (it is { node: resolve })`);
  } else if (typeof target !== 'string' || target.length === 0 || target.includes('=')) {
    throw new TypeError(`${name}: the resource type must be a non-empty string without "=" (or { node: resolver }, the resolver a function)`);
  }
  const resolve = byNode ? (target as { node?: unknown }).node : rest[0];
  if (typeof resolve !== 'function') throw new TypeError(`${name}: the resource resolver must be a function`);
  const given = byNode ? 1 : 2;
  if (rest.length > given) throw new TypeError(`${name}: too many arguments (the route options are the last one)`);
  return Object.freeze({
    service,
    permissions: Object.freeze(any ? [...(asked as string[])] : [asked as string]),
    any,
    type: byNode ? undefined : target as string,
    resolve: resolve as ResourceResolver<Req>,
    mode: checkRouteOptions(name, rest[given - 1]),
  });
}

/** Checks `authenticate()`'s options as `name` (`authenticate`, `Authenticated`) takes them; returns them resolved, or throws a `TypeError`. */
export function parseAuthenticateOptions(name: string, options: unknown = {}): {
  /** Whether a request without a token is let through, anonymous (default `false`). */
  readonly optional: boolean;
} {
  checkOptionsObject(name, 'options', options);
  for (const key of Object.keys(options)) if (key !== 'optional') throw new TypeError(`${name}: unknown option "${key}"`);
  refuseNulls(name, options);
  const { optional } = options as AuthenticateOptions;
  if (optional !== undefined && typeof optional !== 'boolean') throw new TypeError(`${name}: "optional" must be a boolean`);
  return { optional: optional === true };
}

/** A mode, or `undefined`; anything else is a `TypeError` naming `where`. */
export function checkMode(where: string, mode: unknown): GuardMode | undefined {
  if (mode !== undefined && mode !== 'enforce' && mode !== 'report') throw new TypeError(`${where}: "mode" must be 'enforce' or 'report'`);
  return mode;
}

function checkRouteOptions(where: string, options: unknown): GuardMode | undefined {
  if (options === undefined) return undefined;
  checkOptionsObject(where, 'route options', options);
  for (const key of Object.keys(options)) if (key !== 'mode') throw new TypeError(`${where}: unknown route option "${key}"`);
  refuseNulls(where, options);
  return checkMode(where, (options as RouteOptions).mode);
}

/** Options are an object; `null` is not "the defaults" (only leaving them out is). */
export function checkOptionsObject(where: string, what: string, options: unknown): asserts options is object {
  if (options === null) throw new TypeError(`${where}: ${what} must be an object, not null (leave them out for the defaults)`);
  if (typeof options !== 'object' || isArray(options)) throw new TypeError(`${where}: ${what} must be an object`);
}

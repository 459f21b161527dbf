/**
 * What a route demands, as decorators record it: the metadata `IamGuard` reads, and the typed view
 * of the request a resource resolver gets in every context (HTTP, GraphQL, WebSocket).
 */
import { SetMetadata, type CustomDecorator, type ExecutionContext } from '@nestjs/common';
import type { ResourceResolver, RouteOptions } from '../../src/index.js';

/** The metadata key under which the decorators store a route's {@link IamRequirement}. */
export const IAM_REQUIREMENT = 'iam-authz:requirement';

/** What a resource resolver sees of the request, whatever the context. */
export interface IamRequestView {
  /** `'http'`, `'graphql'` or `'ws'`. */
  readonly type: string;
  /** Route parameters (HTTP); `{}` elsewhere. */
  readonly params: Readonly<Record<string, string>>;
  /** Query string (HTTP); `{}` elsewhere. */
  readonly query: Readonly<Record<string, unknown>>;
  /** The parsed body (HTTP), or the message data (WebSocket). */
  readonly body: unknown;
  /** Request headers (HTTP and GraphQL over HTTP; the handshake's for WebSocket). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The GraphQL resolver's arguments; `{}` elsewhere. */
  readonly args: Readonly<Record<string, unknown>>;
  /** Nest's execution context, for anything else. */
  readonly context: ExecutionContext;
}

/** A resolver over {@link IamRequestView}. */
export type NestResourceResolver = ResourceResolver<IamRequestView>;

/** What a handler or controller requires; the guard builds (and caches) one core guard per requirement. */
export type IamRequirement =
  | {
    /** `@Public()`: no token needed. */
    readonly kind: 'public';
  }
  | {
    /** `@Authenticated()`: a valid token, no permission. */
    readonly kind: 'authenticated';
    /** `@Authenticated({ optional: true })`: a request without `Authorization` passes anonymously. */
    readonly optional?: boolean;
  }
  | {
    /** `@RequirePermission(service, permission, type, resolve)`. */
    readonly kind: 'permission';
    /** The service key. */
    readonly service: string;
    /** The permission key. */
    readonly permission: string;
    /** The reference type (`VIN`). */
    readonly type: string;
    /** Reads the reference value from the request view. */
    readonly resolve: NestResourceResolver;
    /** The route's own options (`{ mode }`). */
    readonly options?: RouteOptions | undefined;
  }
  | {
    /** `@RequireAnyPermission(service, permissions, type, resolve)`. */
    readonly kind: 'any';
    /** The service key. */
    readonly service: string;
    /** Any one of these permission keys grants. */
    readonly permissions: readonly string[];
    /** The reference type (`VIN`). */
    readonly type: string;
    /** Reads the reference value from the request view. */
    readonly resolve: NestResourceResolver;
    /** The route's own options (`{ mode }`). */
    readonly options?: RouteOptions | undefined;
  }
  | {
    /** `@RequireAnyPermission(service, permissions, { node: resolve })`. */
    readonly kind: 'any-node';
    /** The service key. */
    readonly service: string;
    /** Any one of these permission keys grants. */
    readonly permissions: readonly string[];
    /** Reads the node id from the request view. */
    readonly resolve: NestResourceResolver;
    /** The route's own options (`{ mode }`). */
    readonly options?: RouteOptions | undefined;
  }
  | {
    /** `@RequirePermission(service, permission, { node: resolve })`. */
    readonly kind: 'node';
    /** The service key. */
    readonly service: string;
    /** The permission key. */
    readonly permission: string;
    /** Reads the node id from the request view. */
    readonly resolve: NestResourceResolver;
    /** The route's own options (`{ mode }`). */
    readonly options?: RouteOptions | undefined;
  };

/**
 * Requires `permission` of `service` on `TYPE=resolve(view)` (or, with `{ node }`, on a node id).
 * On a handler or a controller (the handler's wins). Arguments are checked here, at class definition
 * (`TypeError`), so a typo fails at startup rather than per request.
 */
export function RequirePermission(service: string, permission: string, type: string, resolve: NestResourceResolver, options?: RouteOptions): CustomDecorator;
export function RequirePermission(service: string, permission: string, node: { node: NestResourceResolver }, options?: RouteOptions): CustomDecorator;
export function RequirePermission(service: string, permission: string, target: string | { node: NestResourceResolver }, ...rest: unknown[]): CustomDecorator {
  if (typeof permission !== 'string' || permission.length === 0) throw new TypeError('RequirePermission: "permission" must be a non-empty string');
  const { node, resolve, options } = checkTarget('RequirePermission', service, target, rest);
  return SetMetadata(IAM_REQUIREMENT, (node
    ? { kind: 'node', service, permission, resolve, options }
    : { kind: 'permission', service, permission, type: target as string, resolve, options }) satisfies IamRequirement);
}

/**
 * Requires any one of `permissions` in `service` on `TYPE=resolve(view)` (or the node id), with
 * the same 403 as `@RequirePermission`; a trailing `{ mode: 'report' }` puts the route in report mode.
 */
export function RequireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: NestResourceResolver, options?: RouteOptions): CustomDecorator;
export function RequireAnyPermission(service: string, permissions: readonly string[], node: { node: NestResourceResolver }, options?: RouteOptions): CustomDecorator;
export function RequireAnyPermission(service: string, permissions: readonly string[], target: string | { node: NestResourceResolver }, ...rest: unknown[]): CustomDecorator {
  if (!isArray(permissions) || permissions.length === 0 || !permissions.every((p) => typeof p === 'string' && p.length > 0)) {
    throw new TypeError('RequireAnyPermission: "permissions" must be a non-empty array of non-empty strings');
  }
  const { node, resolve, options } = checkTarget('RequireAnyPermission', service, target, rest);
  const list = [...permissions];
  return SetMetadata(IAM_REQUIREMENT, (node
    ? { kind: 'any-node', service, permissions: list, resolve, options }
    : { kind: 'any', service, permissions: list, type: target as string, resolve, options }) satisfies IamRequirement);
}

/** `Array.isArray` without its narrowing to `any[]`. */
const isArray: (value: unknown) => boolean = Array.isArray;

function checkTarget(name: string, service: unknown, target: unknown, rest: unknown[]): { node: boolean; resolve: NestResourceResolver; options: RouteOptions | undefined } {
  if (typeof service !== 'string' || service.length === 0) throw new TypeError(`${name}: "service" must be a non-empty string`);
  const node = typeof target !== 'string';
  const resolve = node ? (target as { node?: unknown } | null)?.node : rest[0];
  if (!node && ((target).length === 0 || (target).includes('='))) throw new TypeError(`${name}: the resource type must be a non-empty string without "="`);
  if (typeof resolve !== 'function') throw new TypeError(`${name}: the resource resolver must be a function`);
  const options = (node ? rest[0] : rest[1]) as RouteOptions | undefined;
  if (options !== undefined && (typeof options !== 'object' || (options as unknown) === null)) throw new TypeError(`${name}: route options must be an object`);
  return { node, resolve: resolve as NestResourceResolver, options };
}

/**
 * Requires a valid token only (the default of routes without a decorator under `IamGuard`); with
 * `{ optional: true }` a request without any `Authorization` header passes anonymously (`@Iam()` is
 * `undefined`), while any header present is still checked.
 */
export function Authenticated(options: { optional?: boolean } = {}): CustomDecorator {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('Authenticated: options must be an object');
  return SetMetadata(IAM_REQUIREMENT, (options.optional === true ? { kind: 'authenticated', optional: true } : { kind: 'authenticated' }) satisfies IamRequirement);
}

/** No token needed: `IamGuard` lets the request through untouched (`@Iam()` is `undefined`). */
export function Public(): CustomDecorator {
  return SetMetadata(IAM_REQUIREMENT, { kind: 'public' } satisfies IamRequirement);
}

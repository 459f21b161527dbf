/**
 * What a route demands, as decorators record it: the metadata `IamGuard` reads, and the typed view
 * of the request a resource resolver gets in every context (HTTP, GraphQL, WebSocket).
 */
import { SetMetadata, UseGuards, type CustomDecorator, type ExecutionContext } from '@nestjs/common';
import type { ResourceResolver, RouteOptions } from '../../src/adapter/index.js';
import { IAM_REQUIREMENT } from './discovery.js';
import { IamGuard } from './guard.js';

export { IAM_REQUIREMENT };

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
  return requirement((node
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
  return requirement((node
    ? { kind: 'any-node', service, permissions: list, resolve, options }
    : { kind: 'any', service, permissions: list, type: target as string, resolve, options }) satisfies IamRequirement);
}

/** `Array.isArray` without its narrowing to `any[]`. */
const isArray: (value: unknown) => boolean = Array.isArray;

function checkTarget(name: string, service: unknown, target: unknown, rest: unknown[]): { node: boolean; resolve: NestResourceResolver; options: RouteOptions | undefined } {
  if (typeof service !== 'string' || service.length === 0) throw new TypeError(`${name}: "service" must be a non-empty string`);
  const node = typeof target !== 'string';
  if (node) {
    if (typeof target !== 'object' || target === null) throw new TypeError(`${name}: the resource resolver must be a function (or { node: resolver })`);
    for (const key of Object.keys(target)) if (key !== 'node') throw new TypeError(`${name}: unknown key "${key}" next to "node"`);
  } else if (target.length === 0 || target.includes('=')) {
    throw new TypeError(`${name}: the resource type must be a non-empty string without "="`);
  }
  const resolve = node ? (target as { node?: unknown }).node : rest[0];
  if (typeof resolve !== 'function') throw new TypeError(`${name}: the resource resolver must be a function`);
  const given = node ? 1 : 2;
  if (rest.length > given) throw new TypeError(`${name}: too many arguments (the route options are the last one)`);
  return { node, resolve: resolve as NestResourceResolver, options: checkRouteOptions(name, rest[given - 1]) };
}

/** Route options as the core's guards take them, checked here so that a typo fails at class definition. */
function checkRouteOptions(name: string, options: unknown): RouteOptions | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new TypeError(`${name}: route options must be an object`);
  for (const key of Object.keys(options)) if (key !== 'mode') throw new TypeError(`${name}: unknown route option "${key}"`);
  const { mode } = options as { mode?: unknown };
  if (mode === undefined) return {};
  if (mode !== 'enforce' && mode !== 'report') throw new TypeError(`${name}: "mode" must be 'enforce' or 'report'`);
  return { mode };
}

/**
 * Records the requirement and puts `IamGuard` on the same handler or controller, so the requirement
 * is checked even where no global guard runs (`globalGuard: false`, WebSocket gateways). Global,
 * controller and handler guards of one request share its context, and `IamGuard` checks a context
 * once, so with the global guard too a request is still checked once.
 */
function requirement(value: IamRequirement): CustomDecorator {
  const metadata = SetMetadata(IAM_REQUIREMENT, value);
  const guard = UseGuards(IamGuard);
  const decorate = (target: object, key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (key === undefined) {
      metadata(target as () => void);
      guard(target as () => void);
    } else if (descriptor !== undefined) {
      metadata(target, key, descriptor);
      guard(target, key, descriptor);
    } else {
      throw new TypeError(`${value.kind === 'authenticated' ? 'Authenticated' : 'RequirePermission'}: decorate a method or a class, not the property "${String(key)}"`);
    }
  };
  return Object.assign(decorate, { KEY: IAM_REQUIREMENT });
}

/**
 * Requires a valid token only (the default of routes without a decorator under `IamGuard`); with
 * `{ optional: true }` a request without any `Authorization` header passes anonymously (`@Iam()` is
 * `undefined`), while any header present is still checked.
 */
export function Authenticated(options: { optional?: boolean } = {}): CustomDecorator {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('Authenticated: options must be an object');
  for (const key of Object.keys(options)) if (key !== 'optional') throw new TypeError(`Authenticated: unknown option "${key}"`);
  if (options.optional !== undefined && typeof options.optional !== 'boolean') throw new TypeError('Authenticated: "optional" must be a boolean');
  return requirement(options.optional === true ? { kind: 'authenticated', optional: true } : { kind: 'authenticated' });
}

/** No token needed: `IamGuard` lets the request through untouched (`@Iam()` is `undefined`). */
export function Public(): CustomDecorator {
  return SetMetadata(IAM_REQUIREMENT, { kind: 'public' } satisfies IamRequirement);
}

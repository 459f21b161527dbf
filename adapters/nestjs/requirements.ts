/**
 * What a route demands, as decorators record it: the metadata `IamGuard` reads, and the typed view
 * of the request a resource resolver gets in every context (HTTP, GraphQL, WebSocket).
 */
import { SetMetadata, type CustomDecorator, type ExecutionContext } from '@nestjs/common';
import type { ResourceResolver } from '../../src/index.js';

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
  };

/**
 * Requires `permission` of `service` on `TYPE=resolve(view)` (or, with `{ node }`, on a node id).
 * On a handler or a controller (the handler's wins). Arguments are checked here, at class definition
 * (`TypeError`), so a typo fails at startup rather than per request.
 */
export function RequirePermission(service: string, permission: string, type: string, resolve: NestResourceResolver): CustomDecorator;
export function RequirePermission(service: string, permission: string, node: { node: NestResourceResolver }): CustomDecorator;
export function RequirePermission(service: string, permission: string, target: string | { node: NestResourceResolver }, resolve?: NestResourceResolver): CustomDecorator {
  if (typeof service !== 'string' || service.length === 0) throw new TypeError('RequirePermission: "service" must be a non-empty string');
  if (typeof permission !== 'string' || permission.length === 0) throw new TypeError('RequirePermission: "permission" must be a non-empty string');
  if (typeof target !== 'string') {
    const node = (target as { node?: unknown } | null)?.node;
    if (typeof node !== 'function') throw new TypeError('RequirePermission: the resource resolver must be a function');
    return SetMetadata(IAM_REQUIREMENT, { kind: 'node', service, permission, resolve: node as NestResourceResolver } satisfies IamRequirement);
  }
  if (target.length === 0 || target.includes('=')) throw new TypeError('RequirePermission: the resource type must be a non-empty string without "="');
  if (typeof resolve !== 'function') throw new TypeError('RequirePermission: the resource resolver must be a function');
  return SetMetadata(IAM_REQUIREMENT, { kind: 'permission', service, permission, type: target, resolve } satisfies IamRequirement);
}

/** Requires a valid token only (the default of routes without a decorator under `IamGuard`). */
export function Authenticated(): CustomDecorator {
  return SetMetadata(IAM_REQUIREMENT, { kind: 'authenticated' } satisfies IamRequirement);
}

/** No token needed: `IamGuard` lets the request through untouched (`@Iam()` is `undefined`). */
export function Public(): CustomDecorator {
  return SetMetadata(IAM_REQUIREMENT, { kind: 'public' } satisfies IamRequirement);
}

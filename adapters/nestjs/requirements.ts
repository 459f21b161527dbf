/**
 * What a route demands, as decorators record it: the metadata `IamGuard` reads. Permission
 * arguments are checked by the adapter kit's one parser, when the decorator is applied.
 */
import { SetMetadata, UseGuards, type CustomDecorator } from '@nestjs/common';
import type { ResourceResolver, RouteOptions } from '../../src/adapter/index.js';
import { parseAuthenticateOptions, parsePermissionArgs } from '../../src/adapter/internal.js';
import { IamGuard } from './guard.js';
import type { IamRequestView } from './locate.js';
import { IAM_REQUIREMENT, type IamRequirement } from './metadata.js';

/** A resolver over {@link IamRequestView}. */
export type NestResourceResolver = ResourceResolver<IamRequestView>;

/**
 * Requires `permission` of `service` on `TYPE=resolve(view)` (or, with `{ node }`, on a node id).
 * On a handler or a controller (the handler's wins). Arguments are checked here, at class definition
 * (`TypeError`), so a typo fails at startup rather than per request.
 */
export function RequirePermission(service: string, permission: string, type: string, resolve: NestResourceResolver, options?: RouteOptions): CustomDecorator;
export function RequirePermission(service: string, permission: string, node: { node: NestResourceResolver }, options?: RouteOptions): CustomDecorator;
export function RequirePermission(...args: unknown[]): CustomDecorator {
  return requirement({ kind: 'permission', ...parsePermissionArgs<IamRequestView>('RequirePermission', false, args) });
}

/**
 * Requires any one of `permissions` in `service` on `TYPE=resolve(view)` (or the node id), with
 * the same 403 as `@RequirePermission`; a trailing `{ mode: 'report' }` puts the route in report mode.
 */
export function RequireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: NestResourceResolver, options?: RouteOptions): CustomDecorator;
export function RequireAnyPermission(service: string, permissions: readonly string[], node: { node: NestResourceResolver }, options?: RouteOptions): CustomDecorator;
export function RequireAnyPermission(...args: unknown[]): CustomDecorator {
  return requirement({ kind: 'permission', ...parsePermissionArgs<IamRequestView>('RequireAnyPermission', true, args) });
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
  const { optional } = parseAuthenticateOptions('Authenticated', options);
  return requirement(optional ? { kind: 'authenticated', optional: true } : { kind: 'authenticated' });
}

/** No token needed: `IamGuard` lets the request through untouched (`@Iam()` is `undefined`). */
export function Public(): CustomDecorator {
  return SetMetadata(IAM_REQUIREMENT, { kind: 'public' } satisfies IamRequirement);
}

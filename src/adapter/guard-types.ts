/**
 * The shapes of the adapter kit: a framework-neutral `Guard`, the `Guards` an adapter gets from
 * `createGuards` (`InternalGuards`, with what only the library's own adapters use), what becomes
 * of a refusal (`Refusal`), and the `GuardFactory` an adapter returns.
 */
import type { ErrorResponse, IamAuthzError } from '../errors.js';
import type { InventoryRoute } from '../inventory.js';
import type { IamState } from '../types.js';
import type { AuthenticateOptions, PermissionArgs, ResourceResolver, RouteOptions } from './permission-args.js';
import type { AdapterFramework } from './wrong-framework.js';

/**
 * A framework-neutral guard: resolves with the state to attach (`undefined` for an anonymous
 * request let through by `authenticate({ optional: true })`), or rejects with an `IamAuthzError`.
 */
export type Guard<Req> = (authorization: string | undefined, req: Req) => Promise<IamState | undefined>;

/** The framework-neutral guards an adapter wraps; from {@link createGuards}. */
export interface Guards<Req> {
  /** A guard that only verifies the token (or, with `optional`, lets a request without any `Authorization` header through). */
  authenticate(options?: AuthenticateOptions): Guard<Req>;
  /** A guard that requires `permission` in `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): Guard<Req>;
  /** A guard that requires `permission` in `service` on the node id `node(req)`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }, options?: RouteOptions): Guard<Req>;
  /** A guard that requires any one of `permissions` in `service` on `TYPE=resolve(req)` (on each resource, when several). */
  requireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): Guard<Req>;
  /** The same on node ids. */
  requireAnyPermission(service: string, permissions: readonly string[], node: { node: ResourceResolver<Req> }, options?: RouteOptions): Guard<Req>;
  /**
   * A guard that lets every request through, token or not, and marks its route public on purpose:
   * the route audit (`auditRoutes`) reports such a route as `'public'` instead of `'unguarded'`.
   */
  publicRoute(): Guard<Req>;
  /** The HTTP answer for an `IamAuthzError` under this adapter's options (for errors caught elsewhere, e.g. from `authorizer.authorize`). */
  errorResponse(error: IamAuthzError): ErrorResponse;
  /** The `passErrors` option, resolved. */
  readonly passErrors: boolean;
  /**
   * What becomes of a guard's rejection, the same in every adapter: another error (a resolver's
   * bug) or `passErrors` → `pass` it to the framework's error handling; else `onError` runs
   * (awaited; what it throws propagates) and, unless `answered(what it returned)`, → `answer`
   * with the error's own answer. Never lets the request through.
   */
  refusal(error: unknown, onError: (() => unknown) | undefined, answered: (returned: unknown) => boolean): Promise<Refusal>;
}

/** {@link Guards}, and what only the library's own adapters use (from `src/adapter/internal.ts`). */
export interface InternalGuards<Req> extends Guards<Req> {
  /** The permission guard of arguments already checked by `parsePermissionArgs` (e.g. by a decorator). */
  permission(args: PermissionArgs<Req>): Guard<Req>;
  /**
   * For an adapter's handler called with another framework's arguments (`own`: the adapter's
   * framework; `args`: what its handler got): answers 500 `application/problem+json` in the calling
   * framework's own way, its `detail` naming the subpath to import instead; warns once per process
   * (`IAM_AUTHZ_WRONG_FRAMEWORK`). Returns what the handler should return to that framework; throws
   * a `TypeError` when the caller is no framework it recognises.
   */
  answerWrongFramework(own: AdapterFramework, args: readonly unknown[]): unknown;
  /**
   * Runs `make` and returns what it returns; the permission guards it makes are inventoried with
   * `route` (an adapter that knows where a guard sits, e.g. a NestJS handler, says so here).
   */
  at<G>(route: InventoryRoute, make: () => G): G;
}

/** What {@link Guards.refusal} decided: pass `error` on, send `answer`, or nothing more (`onError` answered; `returned` is what it returned). */
export type Refusal =
  | {
    /** Hand `error` to the framework's own error handling (not a library error, or `passErrors`). */
    readonly action: 'pass';
    /** The error to pass on, unchanged. */
    readonly error: unknown;
  }
  | {
    /** Send `answer`: no `onError`, or one that sent nothing. */
    readonly action: 'answer';
    /** Status, headers and problem body to send. */
    readonly answer: ErrorResponse;
  }
  | {
    /** Nothing more to do: `onError` answered. */
    readonly action: 'done';
    /** What `onError` returned (a Hono or Fetch `Response`, for instance). */
    readonly returned: unknown;
  };

/** What an adapter returns: the guard makers, each guard wrapped into the framework's handler type `H`. */
export interface GuardFactory<Req, H> {
  /** A handler that verifies the bearer token and attaches `{ token, claims }`; with `optional`, a request without `Authorization` passes anonymously. */
  authenticate(options?: AuthenticateOptions): H;
  /** A handler that verifies the token and requires `permission` of `service` on `TYPE=resolve(req)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): H;
  /** The same on node ids: `requirePermission(service, permission, { node: req => … })`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Req> }, options?: RouteOptions): H;
  /** A handler that requires any one of `permissions` of `service` on `TYPE=resolve(req)`; the same 403 as `requirePermission`. */
  requireAnyPermission(service: string, permissions: readonly string[], type: string, resolve: ResourceResolver<Req>, options?: RouteOptions): H;
  /** The same on node ids. */
  requireAnyPermission(service: string, permissions: readonly string[], node: { node: ResourceResolver<Req> }, options?: RouteOptions): H;
  /**
   * A handler that lets every request through, token or not, and marks its route public on
   * purpose: `auditRoutes` reports it as `'public'` instead of `'unguarded'`.
   */
  publicRoute(): H;
}

/**
 * `iam-authz/koa`: route guards for Koa (with `@koa/router` or plain middleware). A thin shim over
 * the core's framework-neutral guards; it imports only the public core.
 */
import type { Context, Middleware, Next } from 'koa';
import { createGuards, IamAuthzError, type Authorizer, type Guard, type GuardOptions, type IamState, type ResourceResolver } from '../../src/index.js';

declare module 'koa' {
  interface DefaultState {
    /** Set by `iam-authz/koa` guards once the token is verified (and the permission granted). */
    iam?: IamState;
  }
}

export interface KoaAuthzOptions extends GuardOptions {
  /**
   * Renders 401/403/503 yourself instead of the default problem+json answer. Default: none.
   * `throw` the error from it to hand it to Koa's error handling (it carries `status` and `headers`).
   */
  onError?: (error: IamAuthzError, ctx: Context) => void | Promise<void>;
}

export interface KoaAuthz {
  /** Middleware that verifies the bearer token and sets `ctx.state.iam` (`{ token, claims }`). */
  authenticate(): Middleware;
  /** Middleware that verifies the token and requires `permission` of `service` on `TYPE=resolve(ctx)`. */
  requirePermission(service: string, permission: string, type: string, resolve: ResourceResolver<Context>): Middleware;
  /** The same on node ids: `requirePermission(service, permission, { node: ctx => ctx.params.id })`. */
  requirePermission(service: string, permission: string, node: { node: ResourceResolver<Context> }): Middleware;
}

export function koaAuthz(authorizer: Authorizer, options: KoaAuthzOptions = {}): KoaAuthz {
  const { onError, ...guardOptions } = options;
  if (onError !== undefined && typeof onError !== 'function') throw new TypeError('koaAuthz: "onError" must be a function');
  const guards = createGuards<Context>(authorizer, guardOptions);

  function middleware(guard: Guard<Context>): Middleware {
    return async function iamAuthzGuard(ctx: Context, next: Next): Promise<void> {
      let state: IamState;
      try {
        state = await guard(ctx.get('authorization') || undefined, ctx);
      } catch (error) {
        if (!(error instanceof IamAuthzError)) throw error;
        const answer = guards.errorResponse(error);
        if (onError) {
          await onError(error, ctx);
          return;
        }
        ctx.status = answer.status;
        ctx.set(answer.headers);
        ctx.type = 'application/problem+json';
        ctx.body = JSON.stringify(answer.body);
        return;
      }
      ctx.state.iam = state;
      await next();
    };
  }

  return {
    authenticate: () => middleware(guards.authenticate()),
    requirePermission: ((service: string, permission: string, target: string | { node: ResourceResolver<Context> }, resolve?: ResourceResolver<Context>) =>
      middleware(typeof target === 'string'
        ? guards.requirePermission(service, permission, target, resolve as ResourceResolver<Context>)
        : guards.requirePermission(service, permission, target))) as KoaAuthz['requirePermission'],
  };
}

/**
 * `iam-authz/koa`: route guards for Koa (with `@koa/router` or plain middleware), and
 * `auditRoutes`, what guards each route of a `@koa/router` Router. A thin shim over the adapter kit
 * (`iam-authz/adapter`); it reaches no internals but the adapters' entry.
 */
import type { Context, Middleware, Next } from 'koa';
import type { Authorizer, IamAuthzError, IamState } from '../../src/index.js';
import { wrapGuards, type Guard, type GuardFactory, type GuardOptions } from '../../src/adapter/index.js';
import { closeWithNodeResponse, createInternalGuards, withSignal } from '../../src/adapter/internal.js';

export { auditRoutes } from './audit.js';

declare module 'koa' {
  interface DefaultState {
    /** Set by `iam-authz/koa` guards once the token is verified (and the permission granted). */
    iam?: IamState;
  }
}

/** Options of {@link koaAuthz}: the options every adapter shares, and `onError`. */
export interface KoaAuthzOptions extends GuardOptions {
  /**
   * Renders 401/403/503 yourself (set `ctx.body`, or `ctx.status`); if it leaves Koa's default 404
   * without a body, the default answer is sent. `throw` the error from it to hand it to Koa's error
   * handling (it carries `status` and `headers`). Not with `passErrors`. Default: none.
   */
  onError?: (error: IamAuthzError, ctx: Context) => void | Promise<void>;
}

/** `{ authenticate(), requirePermission(service, permission, type, resolve) | (…, { node: resolve }) }` as Koa middleware. */
export type KoaAuthz = GuardFactory<Context, Middleware>;

/**
 * Koa guards over `authorizer`: 401/403/503 answered as RFC 6750 challenges with problem+json
 * bodies, `ctx.state.iam` set on success. Throws a `TypeError` for an invalid option.
 */
export function koaAuthz(authorizer: Authorizer, options: KoaAuthzOptions = {}): KoaAuthz {
  const guards = createInternalGuards<Context>(authorizer, options, 'koaAuthz', ['onError']);
  const { onError } = options;

  function middleware(guard: Guard<Context>): Middleware {
    return async function iamAuthzGuard(ctx: Context, next: Next): Promise<void> {
      // Mounted in another framework (Express passes (req, res, next)): answer 500 there, never crash.
      if (typeof next !== 'function' || typeof (ctx as Partial<Context> | undefined)?.request !== 'object') {
        // eslint-disable-next-line prefer-rest-params -- exactly what the other framework passed
        return guards.answerWrongFramework('koa', Array.from(arguments)) as undefined;
      }
      let state: IamState | undefined;
      try {
        // The raw header: an empty one is present (401 even for an optional guard), unlike a missing one.
        state = await guard(ctx.request.headers.authorization, ctx);
      } catch (error) {
        // "onError sent nothing": it changed neither the status nor the body that earlier middleware left.
        const { status, body } = ctx;
        const answered = () => ctx.headerSent || ctx.body !== body || ctx.status !== status;
        const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, ctx)), answered);
        if (refusal.action === 'pass') throw refusal.error;
        if (refusal.action === 'answer') {
          ctx.status = refusal.answer.status;
          ctx.set(refusal.answer.headers);
          ctx.type = 'application/problem+json';
          ctx.body = JSON.stringify(refusal.answer.body);
        }
        return;
      }
      if (state) ctx.state.iam = withSignal(authorizer, state, ctx.res, closeWithNodeResponse);
      await next();
    };
  }

  return wrapGuards(guards, middleware);
}

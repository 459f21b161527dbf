/**
 * `iam-authz/hono`: middleware for Hono 4 on any runtime it runs on (see the README for which).
 * `c.get('iam')` holds the state once the token is verified (and the permission granted);
 * `auditRoutes(app)` lists every route with what guards it. A thin shim over the adapter kit
 * (`iam-authz/adapter`); it reaches no internals but the adapters' entry.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Authorizer, IamAuthzError, IamState } from '../../src/index.js';
import { toResponse, wrapGuards, type Guard, type GuardFactory, type GuardOptions } from '../../src/adapter/index.js';
import { closerOf, closeWithBody, closeWithRequest, createInternalGuards, withSignal } from '../../src/adapter/internal.js';

export { auditRoutes } from './audit.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `iam-authz/hono` middleware once the token is verified (and the permission granted). */
    iam?: IamState;
  }
}

/** Options of {@link honoAuthz}: the options every adapter shares, and `onError`. */
export interface HonoAuthzOptions extends GuardOptions {
  /** Renders 401/403/503 yourself; anything but a `Response` returned → the default answer. Not with `passErrors`. Default: none. */
  onError?: (error: IamAuthzError, c: Context) => Response | Promise<Response>;
}

/** `{ authenticate(), requirePermission(service, permission, type, c => …) | (…, { node: c => … }) }` as Hono middleware. */
export type HonoAuthz = GuardFactory<Context, MiddlewareHandler>;

/**
 * Hono middleware over `authorizer`: 401/403/503 answered as RFC 6750 challenges with problem+json
 * bodies, `c.get('iam')` set on success. With `passErrors`, the error goes to `app.onError`, and
 * Hono's default handler answers it with `getResponse()`. Throws a `TypeError` for an invalid option.
 */
export function honoAuthz(authorizer: Authorizer, options: HonoAuthzOptions = {}): HonoAuthz {
  const guards = createInternalGuards<Context>(authorizer, options, 'honoAuthz', ['onError']);
  const { onError } = options;

  function middleware(guard: Guard<Context>): MiddlewareHandler {
    return async function iamAuthzGuard(c, next): Promise<Response | undefined> {
      // Mounted in another framework (Express passes (req, res, next), Koa (ctx, next)): answer 500 there.
      if (typeof next !== 'function' || typeof (c as Partial<Context> | undefined)?.req?.header !== 'function') {
        // eslint-disable-next-line prefer-rest-params -- exactly what the other framework passed
        return guards.answerWrongFramework('hono', Array.from(arguments)) as Response | undefined;
      }
      let state: IamState | undefined;
      try {
        state = await guard(c.req.header('authorization'), c);
      } catch (error) {
        const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, c)), (returned) => returned instanceof Response);
        if (refusal.action === 'pass') throw refusal.error;
        return refusal.action === 'answer' ? toResponse(refusal.answer, c.req.method) : refusal.returned as Response;
      }
      const attached = state && withSignal(authorizer, state, c.req.raw, closeWithRequest);
      if (attached) c.set('iam', attached);
      await next();
      // A streamed Response outlives next(): a watch read by now closes when its body ends (or is cancelled).
      const close = closerOf(attached);
      if (close) c.res = closeWithBody(c.res, close);
      return undefined;
    };
  }

  return wrapGuards(guards, middleware);
}

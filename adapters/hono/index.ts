/**
 * `iam-authz/hono`: middleware for Hono 4 on any runtime it runs on (see the README for which).
 * `c.get('iam')` holds the state once the token is verified (and the permission granted). A thin
 * shim over the core's framework-neutral guards; it imports only the public core.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { createGuards, IamAuthzError, wrapGuards, type Authorizer, type Guard, type GuardFactory, type GuardOptions, type IamState } from '../../src/index.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `iam-authz/hono` middleware once the token is verified (and the permission granted). */
    iam?: IamState;
  }
}

export interface HonoAuthzOptions extends GuardOptions {
  /** Renders 401/403/503 yourself instead of the default problem+json answer. Default: none. */
  onError?: (error: IamAuthzError, c: Context) => Response | Promise<Response>;
  /** Throw the `IamAuthzError` (with `status` and `headers`) to `app.onError` instead of answering. Default `false`. */
  passErrors?: boolean;
}

/** `{ authenticate(), requirePermission(service, permission, type, c => …) | (…, { node: c => … }) }` as Hono middleware. */
export type HonoAuthz = GuardFactory<Context, MiddlewareHandler>;

/**
 * Hono middleware over `authorizer`: 401/403/503 answered as RFC 6750 challenges with problem+json
 * bodies, `c.get('iam')` set on success. Throws a `TypeError` for an invalid option.
 */
export function honoAuthz(authorizer: Authorizer, options: HonoAuthzOptions = {}): HonoAuthz {
  const guards = createGuards<Context>(authorizer, options, 'honoAuthz', ['onError']);
  const { onError } = options;
  if (onError !== undefined && typeof onError !== 'function') throw new TypeError('honoAuthz: "onError" must be a function');
  const { passErrors } = guards;

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
        if (!(error instanceof IamAuthzError)) throw error;
        const answer = guards.errorResponse(error);
        if (passErrors) throw error;
        if (onError) return onError(error, c);
        const headers = new Headers(answer.headers);
        headers.set('content-type', 'application/problem+json');
        return new Response(c.req.method === 'HEAD' ? null : JSON.stringify(answer.body), { status: answer.status, headers });
      }
      if (state) c.set('iam', state);
      await next();
      return undefined;
    };
  }

  return wrapGuards(guards, middleware);
}

/**
 * `iam-authz/express`: route guards for Express 4 and 5. A thin shim over the adapter kit
 * (`iam-authz/adapter`); it reaches no internals but the adapters' entry.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Authorizer, IamAuthzError, IamState } from '../../src/index.js';
import { wrapGuards, type ErrorResponse, type Guard, type GuardFactory, type GuardOptions } from '../../src/adapter/index.js';
import { closeWithNodeResponse, createInternalGuards, settledValue, withSignal } from '../../src/adapter/internal.js';
export { auditRoutes } from './audit.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express's own types live in this global namespace
  namespace Express {
    interface Request {
      /** Set by `iam-authz/express` guards once the token is verified (and the permission granted); `signal` ends with the response. */
      iam?: IamState;
    }
  }
}

/** Options of {@link expressAuthz}: the options every adapter shares, and `onError`. */
export interface ExpressAuthzOptions extends GuardOptions {
  /**
   * Renders 401/403/503 yourself. Answer before it returns, or return a promise that settles once
   * you have; if nothing was sent by then, the default answer is. Not with `passErrors`. Default: none.
   */
  onError?: (error: IamAuthzError, req: Request, res: Response) => void | Promise<void>;
}

/** `{ authenticate(), requirePermission(service, permission, type, resolve) | (…, { node: resolve }) }` as Express middleware. */
export type ExpressAuthz = GuardFactory<Request, RequestHandler>;

function send(res: Response, answer: ErrorResponse): void {
  res.status(answer.status).set(answer.headers).type('application/problem+json').send(JSON.stringify(answer.body));
}

/**
 * Express (4 and 5) guards over `authorizer`: 401/403/503 answered as RFC 6750 challenges with
 * problem+json bodies, `req.iam` set on success. Throws a `TypeError` for an invalid option.
 */
export function expressAuthz(authorizer: Authorizer, options: ExpressAuthzOptions = {}): ExpressAuthz {
  const guards = createInternalGuards<Request>(authorizer, options, 'expressAuthz', ['onError']);
  const { onError } = options;

  function middleware(guard: Guard<Request>): RequestHandler {
    return function iamAuthzGuard(req: Request, res: Response, next: NextFunction): void {
      // Mounted in another framework (Koa passes (ctx, next)): answer 500 there, never crash.
      if (typeof next !== 'function' || typeof (res as Partial<Response> | undefined)?.setHeader !== 'function') {
        // Its first two arguments tell the framework; `arguments` would be made on every call.
        guards.answerWrongFramework('express', [req, res, next]);
        return;
      }
      const guarding = guard(req.headers.authorization, req);
      // A settled answer (cached token, remembered grant): on at once, no promise chain.
      const settledState = settledValue(guarding);
      if (settledState !== undefined) {
        req.iam = withSignal(authorizer, settledState, res, closeWithNodeResponse);
        next();
        return;
      }
      guarding.then(
        (state) => {
          if (state) req.iam = withSignal(authorizer, state, res, closeWithNodeResponse);
          next();
        },
        async (error: unknown) => {
          if (res.headersSent) {
            next(error);
            return;
          }
          const refusal = await guards.refusal(error, onError && (() => onError(error as IamAuthzError, req, res)), () => res.headersSent);
          if (refusal.action === 'pass') next(refusal.error);
          else if (refusal.action === 'answer') send(res, refusal.answer);
        },
      ).catch(next);
    };
  }

  return wrapGuards(guards, middleware);
}
